// The heap count's measure of a block: glibc's chunk header read directly
// must give exactly what malloc_usable_size gives, on every kind of block.
#include <catch2/catch.hpp>

#include <malloc.h>
#include <cstdlib>
#include <vector>

#include "memory/block_size.h"

using prof::BlockSize;
using prof::RealAllocator;

namespace {
RealAllocator glibc() {
  return RealAllocator{::malloc, ::calloc, ::memalign, ::free, ::malloc_usable_size};
}
}  // namespace

TEST_CASE("block size: glibc's headers are read, and agree with malloc_usable_size") {
  BlockSize size;
  size.choose(glibc());
  REQUIRE(size.reads_header());
  CHECK(size(nullptr) == 0);
  std::vector<void *> blocks;
  // Every small size, then larger ones up to mmapped chunks, zeroed and
  // aligned ones, and blocks that realloc grew and shrank.
  for (size_t n = 0; n < 2048; n++) blocks.push_back(malloc(n));
  for (size_t n = 2048; n < (4 << 20); n = n * 5 / 4 + 7) blocks.push_back(malloc(n));
  for (size_t n : {1, 100, 5000, 200000}) {
    blocks.push_back(calloc(n, 3));
    blocks.push_back(memalign(256, n));
    blocks.push_back(realloc(malloc(n), n * 3));
    blocks.push_back(realloc(malloc(n * 3), n));
  }
  for (void *p : blocks) {
    INFO("block " << p);
    CHECK(size(p) == malloc_usable_size(p));
  }
  for (void *p : blocks) free(p);
}

TEST_CASE("block size: another allocator's measure is asked, never a header") {
  RealAllocator other = glibc();
  other.usable_size = [](void *) noexcept -> size_t { return 42; };  // not libc's
  BlockSize size;
  size.choose(other);
  CHECK_FALSE(size.reads_header());
  void *p = malloc(100);
  CHECK(size(p) == 42);
  free(p);

  other.usable_size = nullptr;  // an allocator without one: the heap goes uncounted
  size.choose(other);
  CHECK_FALSE(size.reads_header());
  CHECK(size(&other) == 0);
}
