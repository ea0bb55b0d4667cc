// The GOT rewrite of an attached agent (got_rewrite.h): every loaded
// object's PT_DYNAMIC gives its relocations (DT_RELA and DT_JMPREL), whose
// JUMP_SLOT and GLOB_DAT entries for the allocator's names are pointed at the
// hooks; dlopen, dlmopen and dlclose at the wrappers below, which rewrite
// the objects a dlopen brings.
#include "attach/got_rewrite.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "memory/hooks.h"
#include "thread_state.h"

namespace prof {
void on_modules_changed();  // lifecycle.cpp

namespace got_rewrite {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT, kGlobDat = R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT, kGlobDat = R_AARCH64_GLOB_DAT;
#else
#error "the GOT rewrite knows x86-64 and aarch64 relocations"
#endif

// A name whose slots are rewritten: the hook, and what the program's scope
// defines under that name.
struct Entry {
  const char *name;
  void *hook;
  void *program_fn;
};
constexpr size_t kMaxEntries = 40;
Entry g_entries[kMaxEntries];
size_t g_entry_count = 0;

// A slot rewritten, and what it held.
struct Rewritten {
  void **slot;
  void *was;
};
constexpr size_t kMaxRewritten = 16384;
Rewritten g_rewritten[kMaxRewritten];
size_t g_rewritten_count = 0;

std::atomic<bool> g_active{false};  // rewriting (install() to restore())
std::atomic<pid_t> g_owner{0};      // the thread rewriting or restoring

using DlopenFn = void *(*)(const char *, int);
using DlmopenFn = void *(*)(Lmid_t, const char *, int);
using DlcloseFn = int (*)(void *);
DlopenFn g_dlopen;
DlmopenFn g_dlmopen;
DlcloseFn g_dlclose;

// One rewrite or restore at a time. XXX: gdb may call prof_attach_stop() on
// a thread it stopped inside a rewrite (a dlopen's): that thread does not
// wait for itself; the rewrite it left checks g_active before each slot.
class Serialized {
 public:
  Serialized() {
    const pid_t me = pid_t(syscall(SYS_gettid));
    pid_t owner = 0;
    while (!g_owner.compare_exchange_weak(owner, me, std::memory_order_acquire)) {
      if (owner == me) {
        nested_ = true;
        return;
      }
      owner = 0;
      sched_yield();
    }
  }
  ~Serialized() {
    if (!nested_) g_owner.store(0, std::memory_order_release);
  }

 private:
  bool nested_ = false;
};

void after_load();

void *attached_dlopen(const char *file, int mode) {
  void *handle = g_dlopen(file, mode);
  if (handle) after_load();
  return handle;
}

void *attached_dlmopen(Lmid_t ns, const char *file, int mode) {
  void *handle = g_dlmopen(ns, file, mode);
  if (handle) after_load();
  return handle;
}

int attached_dlclose(void *handle) {
  const int rc = g_dlclose(handle);
  if (rc == 0) on_modules_changed();
  return rc;
}

// An object's relocations and where it lies.
struct Object {
  uintptr_t base = 0, lo = UINTPTR_MAX, hi = 0;
  uintptr_t relro_lo = 0, relro_hi = 0;  // the pages the loader made read-only
  uintptr_t dynamic = 0;
  const ElfW(Sym) *symtab = nullptr;
  const char *strtab = nullptr;
  size_t strsz = 0;
  const ElfW(Rela) *rela = nullptr, *jmprel = nullptr;
  size_t rela_bytes = 0, jmprel_bytes = 0;
  bool jmprel_is_rela = true;
};

// A dynamic entry's address: the loader relocates them in place, but not
// in every object (the vDSO's stay offsets).
uintptr_t dyn_address(const Object &o, ElfW(Addr) ptr) {
  return ptr < o.base ? o.base + ptr : ptr;
}

bool read_object(const dl_phdr_info *info, Object *o) {
  o->base = info->dlpi_addr;
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    const uintptr_t start = o->base + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      if (start < o->lo) o->lo = start;
      if (start + ph.p_memsz > o->hi) o->hi = start + ph.p_memsz;
    } else if (ph.p_type == PT_DYNAMIC) {
      o->dynamic = start;
    } else if (ph.p_type == PT_GNU_RELRO) {
      // (glibc's _dl_protect_relro: whole pages only, both ends rounded down.)
      o->relro_lo = start & ~(page - 1);
      o->relro_hi = (start + ph.p_memsz) & ~(page - 1);
    }
  }
  if (!o->dynamic) return false;
  for (const auto *d = reinterpret_cast<const ElfW(Dyn) *>(o->dynamic); d->d_tag != DT_NULL; d++) {
    switch (d->d_tag) {
      case DT_SYMTAB: o->symtab = reinterpret_cast<const ElfW(Sym) *>(dyn_address(*o, d->d_un.d_ptr)); break;
      case DT_STRTAB: o->strtab = reinterpret_cast<const char *>(dyn_address(*o, d->d_un.d_ptr)); break;
      case DT_STRSZ: o->strsz = d->d_un.d_val; break;
      case DT_RELA: o->rela = reinterpret_cast<const ElfW(Rela) *>(dyn_address(*o, d->d_un.d_ptr)); break;
      case DT_RELASZ: o->rela_bytes = d->d_un.d_val; break;
      case DT_JMPREL: o->jmprel = reinterpret_cast<const ElfW(Rela) *>(dyn_address(*o, d->d_un.d_ptr)); break;
      case DT_PLTRELSZ: o->jmprel_bytes = d->d_un.d_val; break;
      case DT_PLTREL: o->jmprel_is_rela = d->d_un.d_val == DT_RELA; break;
      default: break;
    }
  }
  return o->symtab && o->strtab;
}

// Objects the rewrite leaves alone: the agent, libunwind (the agent's
// unwinder, called inside the hooks), and objects outside the program's
// own namespace (dlmopen's), whose allocator may be another libc's.
bool in_base_namespace(uintptr_t dynamic) {
  for (const link_map *m = _r_debug.r_map; m; m = m->l_next)
    if (reinterpret_cast<uintptr_t>(m->l_ld) == dynamic) return true;
  return false;
}

bool left_alone(const dl_phdr_info *info, const Object &o) {
  const auto self = reinterpret_cast<uintptr_t>(&got_hooks);
  if (self >= o.lo && self < o.hi) return true;
  const char *name = info->dlpi_name ? info->dlpi_name : "";
  const char *base = strrchr(name, '/');
  if (strncmp(base ? base + 1 : name, "libunwind", 9) == 0) return true;
  return !in_base_namespace(o.dynamic);
}

// Whether the page holding addr is mapped read-only now (/proc/self/maps,
// raw reads into a buffer on the stack): a RELRO page the loader has not
// protected yet (an object still being loaded by another thread) is left
// writable.
bool read_only_now(uintptr_t addr) {
  const int fd = int(syscall(SYS_open, "/proc/self/maps", O_RDONLY | O_CLOEXEC));
  if (fd < 0) return true;
  char buf[4096];
  size_t have = 0;
  bool found = false, read_only = true;
  for (;;) {
    const long n = syscall(SYS_read, fd, buf + have, sizeof buf - have);
    if (n <= 0) break;
    have += size_t(n);
    char *line = buf;
    for (char *nl; (nl = static_cast<char *>(memchr(line, '\n', size_t(buf + have - line))));
         line = nl + 1) {
      char *end;
      const uintptr_t lo = strtoull(line, &end, 16);
      const uintptr_t hi = strtoull(end + 1, &end, 16);
      if (addr >= lo && addr < hi) {
        found = true;
        read_only = end[1] == 'r' && end[2] != 'w';
        break;
      }
    }
    if (found) break;
    have = size_t(buf + have - line);
    memmove(buf, line, have);
    if (have == sizeof buf) have = 0;  // (no line is that long)
  }
  syscall(SYS_close, fd);
  return read_only;
}

// Writes the slots of one object: its RELRO pages writable meanwhile.
class SlotWriter {
 public:
  explicit SlotWriter(const Object &o) : o_(o) {}
  ~SlotWriter() {
    if (opened_) mprotect(reinterpret_cast<void *>(o_.relro_lo), o_.relro_hi - o_.relro_lo, PROT_READ);
  }
  // False when the slot's page cannot be made writable.
  bool write(void **slot, void *value) {
    const auto at = reinterpret_cast<uintptr_t>(slot);
    if (at >= o_.relro_lo && at < o_.relro_hi) {
      if (!checked_) {
        checked_ = true;
        opened_ = read_only_now(at) && mprotect(reinterpret_cast<void *>(o_.relro_lo),
                                                o_.relro_hi - o_.relro_lo, PROT_READ | PROT_WRITE) == 0;
        failed_ = !opened_ && read_only_now(at);
      }
      if (failed_) return false;
    }
    __atomic_store_n(slot, value, __ATOMIC_RELEASE);
    return true;
  }

 private:
  const Object &o_;
  bool checked_ = false, opened_ = false, failed_ = false;
};

const Entry *entry_named(const char *name) {
  for (size_t i = 0; i < g_entry_count; i++)
    if (strcmp(g_entries[i].name, name) == 0) return &g_entries[i];
  return nullptr;
}

Rewritten *rewritten_at(void **slot) {
  for (size_t i = g_rewritten_count; i-- > 0;)
    if (g_rewritten[i].slot == slot) return &g_rewritten[i];
  return nullptr;
}

enum class Pass { kInstall, kRestore };
struct Walk {
  Pass pass;
  size_t slots = 0, left_out = 0;  // left_out: past kMaxRewritten
};

// Each allocator slot of `o` (JUMP_SLOT or GLOB_DAT of a name with an entry).
template <class Visit>
void for_each_slot(const Object &o, Visit &&visit) {
  auto relocations = [&](const ElfW(Rela) *rel, size_t bytes) {
    if (!rel) return;
    for (size_t i = 0; i < bytes / sizeof(ElfW(Rela)); i++) {
      const uint32_t type = uint32_t(ELF64_R_TYPE(rel[i].r_info));
      const size_t sym = size_t(ELF64_R_SYM(rel[i].r_info));
      if ((type != kJumpSlot && type != kGlobDat) || sym == 0) continue;
      const size_t name_at = o.symtab[sym].st_name;
      if (o.strsz && name_at >= o.strsz) continue;
      if (const Entry *e = entry_named(o.strtab + name_at))
        visit(reinterpret_cast<void **>(o.base + rel[i].r_offset), *e, type == kJumpSlot);
    }
  };
  relocations(o.rela, o.rela_bytes);
  if (o.jmprel_is_rela) relocations(o.jmprel, o.jmprel_bytes);
}

void install_in(const Object &o, Walk &walk) {
  SlotWriter writer(o);
  for_each_slot(o, [&](void **slot, const Entry &e, bool jump_slot) {
    void *now = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    const auto at = reinterpret_cast<uintptr_t>(now);
    // (A JUMP_SLOT not called yet holds its own PLT stub: lazy binding.)
    const bool lazy = jump_slot && at >= o.lo && at < o.hi;
    if (now == e.hook || (now != e.program_fn && !lazy)) return;
    if (!g_active.load(std::memory_order_acquire)) return;
    Rewritten *r = rewritten_at(slot);
    if (!r && g_rewritten_count == kMaxRewritten) {
      walk.left_out++;
      return;
    }
    if (!writer.write(slot, e.hook)) return;
    if (!r) r = &g_rewritten[g_rewritten_count++];
    *r = Rewritten{slot, now};
    walk.slots++;
  });
}

void restore_in(const Object &o, Walk &walk) {
  SlotWriter writer(o);
  for_each_slot(o, [&](void **slot, const Entry &e, bool) {
    if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) != e.hook) return;
    const Rewritten *r = rewritten_at(slot);
    if (writer.write(slot, r ? r->was : e.program_fn)) walk.slots++;
  });
}

int visit_object(dl_phdr_info *info, size_t, void *data) {
  auto &walk = *static_cast<Walk *>(data);
  Object o;
  if (!read_object(info, &o) || left_alone(info, o)) return 0;
  if (walk.pass == Pass::kInstall) install_in(o, walk);
  else restore_in(o, walk);
  return 0;
}

size_t walk_objects(Pass pass) {
  Walk walk{pass};
  dl_iterate_phdr(visit_object, &walk);
  static bool said = false;
  if (walk.left_out && !said) {
    said = true;
    say("more allocator slots than the agent keeps (", "16384",
        "): the calls through the others are not recorded");
  }
  return walk.slots;
}

void after_load() {
  on_modules_changed();
  if (!g_active.load(std::memory_order_acquire)) return;
  GuardScope guard;
  Serialized one;
  if (g_active.load(std::memory_order_acquire)) walk_objects(Pass::kInstall);
}

void add_entry(const char *name, void *hook) {
  // (A name the program does not define: its slots, weak and unbound,
  // hold 0, which must stay 0.)
  void *program_fn = dlsym(RTLD_DEFAULT, name);
  if (g_entry_count < kMaxEntries && program_fn) g_entries[g_entry_count++] = Entry{name, hook, program_fn};
}

}  // namespace

size_t install(bool mappings) {
  GuardScope guard;
  Serialized one;
  g_entry_count = 0;
  size_t count;
  const GotHook *hooks = got_hooks(&count);
  for (size_t i = 0; i < count; i++)
    if (mappings || !hooks[i].mapping) add_entry(hooks[i].name, hooks[i].hook);
  add_entry("dlopen", reinterpret_cast<void *>(&attached_dlopen));
  add_entry("dlmopen", reinterpret_cast<void *>(&attached_dlmopen));
  add_entry("dlclose", reinterpret_cast<void *>(&attached_dlclose));
  g_dlopen = reinterpret_cast<DlopenFn>(dlsym(RTLD_DEFAULT, "dlopen"));
  g_dlmopen = reinterpret_cast<DlmopenFn>(dlsym(RTLD_DEFAULT, "dlmopen"));
  g_dlclose = reinterpret_cast<DlcloseFn>(dlsym(RTLD_DEFAULT, "dlclose"));
  if (!g_dlopen || !g_dlmopen || !g_dlclose) return 0;
  g_rewritten_count = 0;
  g_active.store(true, std::memory_order_release);
  return walk_objects(Pass::kInstall);
}

size_t restore() {
  GuardScope guard;
  g_active.store(false, std::memory_order_release);
  Serialized one;
  const size_t slots = walk_objects(Pass::kRestore);
  g_rewritten_count = 0;
  return slots;
}

}  // namespace got_rewrite
}  // namespace prof
