#include "prologue.h"

namespace prof {

const char *section_name(SectionKind kind) {
  switch (kind) {
    case SectionKind::Symtab: return "symtab 'ljs'";
    case SectionKind::Memprof: return "memprof 'ljm'";
    case SectionKind::Sysprof: return "sysprof 'ljp'";
  }
  return "?";
}

Prologue read_prologue(ByteReader &in, SectionKind expected, bool either_profile) {
  const uint64_t at = in.offset();
  uint8_t b[7];
  in.bytes(b, sizeof b);
  Prologue p{};
  if (b[0] != 'l' || b[1] != 'j')
    in.fail(at, "not a LuaJIT profiler stream (bad magic)");
  switch (b[2]) {
    case 's': p.kind = SectionKind::Symtab; break;
    case 'm': p.kind = SectionKind::Memprof; break;
    case 'p': p.kind = SectionKind::Sysprof; break;
    default: in.fail(at, "unknown section magic 'lj" + std::string(1, char(b[2])) + "'");
  }
  const bool kind_ok = p.kind == expected ||
                       (either_profile && p.kind != SectionKind::Symtab);
  if (!kind_ok)
    in.fail(at, std::string("expected a ") + section_name(expected) + " section, found " +
                    section_name(p.kind));
  static const uint8_t kVersion[] = {kSymtabVersion, kMemprofVersion, kSysprofVersion};
  const uint8_t want = kVersion[static_cast<uint8_t>(p.kind)];
  p.extended = (b[3] & kExtendedBit) != 0;
  const uint8_t version = b[3] & ~kExtendedBit;
  if (version != want)
    in.fail(at + 3, std::string(section_name(p.kind)) + " version " + std::to_string(version) +
                        " is not supported (this reader knows version " +
                        std::to_string(want) + ")");
  if (p.extended) {
    p.ext_revision = b[4];
    if (p.ext_revision == 0 || p.ext_revision > kExtRevision)
      in.fail(at + 4, "libprof extension revision " + std::to_string(p.ext_revision) +
                          " is not supported (this reader knows up to " +
                          std::to_string(kExtRevision) + ")");
  }
  return p;
}

}  // namespace prof
