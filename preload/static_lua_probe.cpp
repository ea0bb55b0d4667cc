#include "static_lua_probe.h"

#include <algorithm>
#include <cstring>
#include <elf.h>
#include <link.h>
#include <unistd.h>

namespace prof {
namespace {

using Ehdr = ElfW(Ehdr);
using Shdr = ElfW(Shdr);

// Reads exactly `n` bytes at `off`.
// XXX: lseek and read, not pread: no system call the agent makes nowhere
// else, which a seccomp filter might punish.
bool read_at(int fd, void *to, size_t n, uint64_t off) {
  if (lseek(fd, off_t(off), SEEK_SET) != off_t(off)) return false;
  for (size_t done = 0; done < n;) {
    const ssize_t got = read(fd, static_cast<char *>(to) + done, n - done);
    if (got <= 0) return false;
    done += size_t(got);
  }
  return true;
}

enum class Scan { kFound, kNotFound, kUnreadable };

// Reads the `s` section's first `size` bytes through `scratch` and calls
// look(chunk, n, first, last) on each chunk until it returns true. Each
// chunk after the first begins with the last `overlap` bytes of the one
// before, so whatever is at most `overlap` bytes long lies whole in one.
template <class Look>
Scan scan(int fd, char *scratch, const Shdr &s, uint64_t size, size_t overlap, Look look) {
  static_assert(kProbeScratchBytes > 64, "chunks longer than any overlap");
  for (uint64_t at = 0;;) {
    const size_t n = size_t(std::min<uint64_t>(size - at, kProbeScratchBytes));
    if (!read_at(fd, scratch, n, s.sh_offset + at)) return Scan::kUnreadable;
    const bool last = at + n == size;
    if (look(scratch, n, at == 0, last)) return Scan::kFound;
    if (last) return Scan::kNotFound;
    at += n - overlap;
  }
}

// Whether the dynamic string table `dynstr` names a Lua state maker.
// XXX: a name may be stored as the tail of a longer one (the linker merges
// suffixes), so it is looked for without the NUL before it: a longer name
// ending the same way makes the probe say nothing, never say too much.
Scan names_state_maker(int fd, char *scratch, const Shdr &dynstr) {
  static constexpr const char *kNames[] = {"luaL_newstate", "lua_newstate"};
  return scan(fd, scratch, dynstr, dynstr.sh_size, 16, [](const char *chunk, size_t n, bool, bool) {
    for (const char *name : kNames)
      if (memmem(chunk, n, name, strlen(name) + 1)) return true;  // with its NUL
    return false;
  });
}

// "major.minor" at `v` (digits, a dot, digits) appended to `product` in
// `release`; false if `v` does not start so or it does not fit.
bool put_release(const char *product, const char *v, const char *end, char (&release)[16]) {
  const char *p = v;
  while (p < end && *p >= '0' && *p <= '9') p++;
  if (p == v || p == end || *p != '.') return false;
  const char *minor = ++p;
  while (p < end && *p >= '0' && *p <= '9') p++;
  const size_t len = strlen(product), vlen = size_t(p - v);
  if (p == minor || len + vlen >= sizeof release) return false;
  memcpy(release, product, len);
  memcpy(release + len, v, vlen);
  release[len + vlen] = 0;
  return true;
}

// PUC's lua_ident at `s`: "$Lua: Lua 5.1.5 ..." (5.1), "$LuaVersion: Lua
// 5.4.4 ..." (5.2 on).
bool puc_release_at(const char *s, const char *end, char (&release)[16]) {
  for (const char *tag : {"$Lua: Lua ", "$LuaVersion: Lua "}) {
    const size_t n = strlen(tag);
    if (size_t(end - s) > n && memcmp(s, tag, n) == 0)
      return put_release("Lua ", s + n, end, release);
  }
  return false;
}

// LuaJIT's version at `s`, a string of its own: "LuaJIT 2.1.0-beta3".
bool luajit_release_at(const char *s, const char *end, char (&release)[16]) {
  constexpr char kTag[] = "LuaJIT ";
  return size_t(end - s) > sizeof kTag && memcmp(s, kTag, sizeof kTag - 1) == 0 &&
         put_release("LuaJIT ", s + sizeof kTag - 1, end, release);
}

// A version string's mark: a byte of it that is rare in .rodata (found by
// memchr, several times faster than memmem: about one byte in 600), and
// where it stands in the string.
struct VersionMark {
  char byte;
  size_t at;
  bool starts_string;  // the string begins after a NUL
  bool (*release_at)(const char *s, const char *end, char (&release)[16]);
};
constexpr VersionMark kMarks[] = {{'$', 0, false, puc_release_at},
                                  {'J', 3, true, luajit_release_at}};
// The most read from a string's start: "$LuaVersion: Lua 5.4" and digits.
constexpr size_t kWindow = 24;

Scan release_in(int fd, char *scratch, const Shdr &rodata, char (&release)[16]) {
  const uint64_t size = std::min<uint64_t>(rodata.sh_size, kMaxProbedRodata);
  return scan(fd, scratch, rodata, size, kWindow + 8,
              [&](const char *chunk, size_t n, bool first, bool last) {
                const char *end = chunk + n;
                for (const VersionMark &m : kMarks)
                  for (const char *p = chunk;
                       (p = static_cast<const char *>(memchr(p, m.byte, size_t(end - p))));
                       p++) {
                    const char *s = p - m.at;
                    // (A string cut by the chunk's start or end is whole in
                    // the chunk before or after.)
                    if (s < chunk || (s == chunk && !first)) continue;
                    if (!last && size_t(end - s) < kWindow) break;
                    if (m.starts_string && s > chunk && s[-1] != '\0') continue;
                    if (m.release_at(s, end, release)) return true;
                  }
                return false;
              });
}

// The section headers' names are read one at a time: .rodata's alone is wanted.
bool named(int fd, const Shdr &names, const Shdr &s, const char *name) {
  char got[16];
  const size_t n = strlen(name) + 1;
  return s.sh_name < names.sh_size && names.sh_size - s.sh_name >= n &&
         read_at(fd, got, n, names.sh_offset + s.sh_name) && memcmp(got, name, n) == 0;
}

}  // namespace

BuiltInLua built_in_lua(int fd, char *scratch, char (&release)[16]) {
  Ehdr eh;
  if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
      eh.e_shentsize != sizeof(Shdr) || eh.e_shnum == 0 ||
      eh.e_shnum > kProbeScratchBytes / sizeof(Shdr) || eh.e_shstrndx >= eh.e_shnum ||
      !read_at(fd, scratch, eh.e_shnum * sizeof(Shdr), eh.e_shoff))
    return BuiltInLua::kNone;
  const Shdr *sections = reinterpret_cast<const Shdr *>(scratch);
  const Shdr names = sections[eh.e_shstrndx];
  Shdr dynstr{}, rodata{};
  for (int i = 0; i < eh.e_shnum; i++) {
    const Shdr &s = sections[i];
    if (s.sh_type == SHT_DYNSYM && s.sh_link < eh.e_shnum) dynstr = sections[s.sh_link];
    if (s.sh_type == SHT_PROGBITS &&
        (s.sh_flags & (SHF_ALLOC | SHF_WRITE | SHF_EXECINSTR)) == SHF_ALLOC &&
        named(fd, names, s, ".rodata"))
      rodata = s;
  }
  // (The headers are copied out: the scratch holds chunks from here on.)
  // Most programs have no Lua: .rodata first.
  if (rodata.sh_size == 0 || release_in(fd, scratch, rodata, release) != Scan::kFound)
    return BuiltInLua::kNone;
  if (dynstr.sh_size > kMaxProbedDynstr) return BuiltInLua::kExported;
  switch (dynstr.sh_size ? names_state_maker(fd, scratch, dynstr) : Scan::kNotFound) {
    case Scan::kFound: return BuiltInLua::kExported;
    case Scan::kNotFound: return BuiltInLua::kHidden;
    case Scan::kUnreadable: break;
  }
  return BuiltInLua::kNone;
}

}  // namespace prof
