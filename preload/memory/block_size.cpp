#include "memory/block_size.h"

#include <cstring>
#include <dlfcn.h>

namespace prof {
namespace {

// Whether fn lies in glibc's libc.so.6.
bool in_libc(void *fn) {
  Dl_info info;
  if (!fn || !dladdr(fn, &info) || !info.dli_fname) return false;
  const char *slash = strrchr(info.dli_fname, '/');
  return strncmp(slash ? slash + 1 : info.dli_fname, "libc.so.", 8) == 0;
}

}  // namespace

void BlockSize::choose(const RealAllocator &real) {
  reads_header_ = false;
  usable_size_ = real.usable_size ? real.usable_size : unmeasured;
  if (!in_libc(reinterpret_cast<void *>(real.usable_size)) ||
      !in_libc(reinterpret_cast<void *>(real.malloc)))
    return;
  // Blocks of every kind glibc makes: tcache and fastbin sizes, small and
  // large bins, mmapped chunks, zeroed and aligned ones.
  static constexpr size_t kSizes[] = {0, 1, 24, 25, 200, 1000, 5000, 70000, 300000};
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
  reads_header_ = agree;
}

}  // namespace prof
