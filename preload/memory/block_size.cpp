#include "memory/block_size.h"

#include <cstring>
#include <dlfcn.h>
#include <link.h>

namespace prof {
namespace {

// Whether fn lies in glibc's libc.so.6. (_dl_find_object, not dladdr,
// which scans libc's whole symbol table: a cost to every process's start.)
bool in_libc(void *fn) {
  dl_find_object found;
  if (!fn || _dl_find_object(fn, &found) != 0 || !found.dlfo_link_map) return false;
  const char *name = found.dlfo_link_map->l_name;
  const char *slash = name ? strrchr(name, '/') : nullptr;
  return name && strncmp(slash ? slash + 1 : name, "libc.so.", 8) == 0;
}

}  // namespace

void BlockSize::choose(const RealAllocator &real) {
  usable_size_.store(real.usable_size ? real.usable_size : unmeasured, std::memory_order_relaxed);
  reads_header_.store(false, std::memory_order_relaxed);
  if (!in_libc(reinterpret_cast<void *>(real.usable_size)) ||
      !in_libc(reinterpret_cast<void *>(real.malloc)))
    return;
  // Blocks of every kind glibc makes: tcache and fastbin sizes, small and
  // large bins, mmapped chunks (the one calloc of 300000), zeroed and
  // aligned ones.
  static constexpr size_t kSizes[] = {0, 1, 24, 25, 200, 1000, 5000, 70000};
  void *blocks[sizeof kSizes / sizeof kSizes[0] + 4];
  size_t n = 0;
  for (size_t size : kSizes) blocks[n++] = real.malloc(size);
  blocks[n++] = real.calloc(1, 40);
  blocks[n++] = real.calloc(1, 300000);
  blocks[n++] = real.memalign(64, 100);
  blocks[n++] = real.memalign(4096, 5000);
  bool agree = true;
  for (size_t i = 0; i < n; i++)
    agree = agree && (!blocks[i] || from_header(blocks[i]) == real.usable_size(blocks[i]));
  for (size_t i = 0; i < n; i++) real.free(blocks[i]);
  reads_header_.store(agree, std::memory_order_relaxed);
}

}  // namespace prof
