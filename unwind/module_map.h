// ModuleMap: the ELF objects loaded in this process (path, load bias, extent,
// build-id), for offline symbolization.
//
// Invariants: no malloc (fixed tables; dl_iterate_phdr itself takes the
// loader lock, so never call this from a signal handler). sync() reports each
// object once when it appears and once when it goes, so a caller that emits a
// record per callback writes an exact load/unload history.
#pragma once

#include <cstddef>
#include <cstdint>

namespace prof {

struct ModuleInfo {
  uint64_t base;  // load bias (dlpi_addr)
  uint64_t size;  // end of the highest PT_LOAD, relative to base
  const char *path;
  const uint8_t *build_id;  // the GNU build-id note's bytes, or nullptr
  size_t build_id_len;
};

class ModuleMap {
 public:
  using LoadFn = void (*)(const ModuleInfo &info, void *ctx);
  using UnloadFn = void (*)(uint64_t base, void *ctx);

  // Calls visit() for every object loaded now, the main program under its
  // /proc/self/exe path (for a stream's opening module records, e.g. the
  // CPU sampler's). Stateless: it does not change what sync() knows.
  static void for_each_loaded(LoadFn visit, void *ctx);
  // Compares the loaded objects with the last call and reports the changes.
  void sync(LoadFn on_load, UnloadFn on_unload, void *ctx);
  // Forgets everything (a forked child starts a new stream).
  void reset() { count_ = 0; }
  // The extent [lo, hi) of the object containing `addr` (own-frame filtering).
  static bool extent_of(const void *addr, uint64_t *lo, uint64_t *hi);

 private:
  static constexpr size_t kMaxModules = 4096;
  struct Known {
    uint64_t base;
    uint64_t size;
    bool seen;
  };
  // True when the object is new (not seen by the previous sync()).
  bool mark_seen(uint64_t base, uint64_t size);

  // Zero-initialized, so no constructor runs at start: a static map's pages
  // stay untouched until its first sync().
  Known known_[kMaxModules]{};
  size_t count_ = 0;
};

}  // namespace prof
