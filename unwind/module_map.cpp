#include "module_map.h"

#include <cstring>
#include <elf.h>
#include <link.h>
#include <unistd.h>

namespace prof {
namespace {

struct Extent {
  uint64_t size;
  const uint8_t *build_id;
  size_t build_id_len;
};

Extent extent(const dl_phdr_info *info) {
  Extent e{0, nullptr, 0};
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && ph.p_vaddr + ph.p_memsz > e.size) e.size = ph.p_vaddr + ph.p_memsz;
    if (ph.p_type != PT_NOTE || e.build_id) continue;
    // Walk the notes for NT_GNU_BUILD_ID ("GNU\0").
    const uint8_t *p = reinterpret_cast<const uint8_t *>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t *end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto *n = reinterpret_cast<const ElfW(Nhdr) *>(p);
      const uint8_t *name = p + sizeof(ElfW(Nhdr));
      const uint8_t *desc = name + ((n->n_namesz + 3) & ~3u);
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
        e.build_id = desc;
        e.build_id_len = n->n_descsz;
        break;
      }
      p = desc + ((n->n_descsz + 3) & ~3u);
    }
  }
  return e;
}

}  // namespace

void ModuleMap::for_each_loaded(LoadFn visit, void *ctx) {
  struct State {
    LoadFn visit;
    void *ctx;
    char exe[4096];
  } st{visit, ctx, {0}};
  const ssize_t n = readlink("/proc/self/exe", st.exe, sizeof st.exe - 1);
  st.exe[n > 0 ? n : 0] = 0;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *arg) {
        auto *s = static_cast<State *>(arg);
        const Extent e = extent(info);
        if (e.size == 0) return 0;
        // The main program has an empty name; the vDSO has no file.
        const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : s->exe;
        s->visit(ModuleInfo{info->dlpi_addr, e.size, path, e.build_id, e.build_id_len}, s->ctx);
        return 0;
      },
      &st);
}

void ModuleMap::sync(LoadFn on_load, UnloadFn on_unload, void *ctx) {
  for (size_t i = 0; i < count_; i++) known_[i].seen = false;
  struct State {
    ModuleMap *self;
    LoadFn on_load;
    void *ctx;
  } st{this, on_load, ctx};
  for_each_loaded(
      [](const ModuleInfo &m, void *arg) {
        auto *s = static_cast<State *>(arg);
        if (s->self->mark_seen(m.base, m.size)) s->on_load(m, s->ctx);
      },
      &st);
  size_t kept = 0;
  for (size_t i = 0; i < count_; i++) {
    if (!known_[i].seen) {
      on_unload(known_[i].base, ctx);
      continue;
    }
    known_[kept++] = known_[i];
  }
  count_ = kept;
}

bool ModuleMap::mark_seen(uint64_t base, uint64_t size) {
  for (size_t i = 0; i < count_; i++)
    if (known_[i].base == base && known_[i].size == size) return !(known_[i].seen = true);
  if (count_ < kMaxModules) known_[count_++] = Known{base, size, true};
  return true;
}

bool ModuleMap::extent_of(const void *addr, uint64_t *lo, uint64_t *hi) {
  struct Query {
    uint64_t addr, lo, hi;
    bool found;
  } q{reinterpret_cast<uint64_t>(addr), 0, 0, false};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *arg) {
        auto *q = static_cast<Query *>(arg);
        for (int i = 0; i < info->dlpi_phnum; i++) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          const uint64_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
          if (q->addr >= lo && q->addr < hi) {
            const Extent e = extent(info);
            q->lo = info->dlpi_addr;
            q->hi = info->dlpi_addr + e.size;
            q->found = true;
            return 1;
          }
        }
        return 0;
      },
      &q);
  *lo = q.lo;
  *hi = q.hi;
  return q.found;
}

}  // namespace prof
