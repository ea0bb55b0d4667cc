// BlockSize: the usable size of a block of the program's, the measure the
// heap count (heap_total.h) takes of every allocation and free.
//
// glibc's malloc_usable_size reads two chunk headers: the block's own, and
// the next chunk's, to see that the block is in use. A block about to be
// freed is in use, and free() reads its header anyway, but the next one is
// one more cache miss per call (on Lua binary-trees, one in eight of the
// whole run's, by cachegrind). So where the real allocator is glibc's, the size
// is read from the block's own header, as musable() computes it:
//
//   header (the 8 bytes before the block) = chunk size | IS_MMAPPED (2) |
//   NON_MAIN_ARENA (4) | PREV_INUSE (1);
//   usable = chunk size - 8, or - 16 for an mmapped chunk.
//
// Invariants:
// - The header is read only once the real malloc_usable_size is libc's
//   and agreed with it on blocks of every kind made for the test (small,
//   large, mmapped, from calloc and memalign); else the real one is called.
// - choose_on_first_use() defers that test to the first block measured: a
//   process that never allocates (/bin/true under the agent) never has its
//   heap set up, grown or mapped by the agent. Threads that race to it each
//   make the same choice; any measure they take meanwhile is the real one.
// - NULL measures 0, as malloc_usable_size(NULL) does.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace prof {

struct RealAllocator {
  void *(*malloc)(size_t);
  void *(*calloc)(size_t, size_t);
  void *(*memalign)(size_t, size_t);
  void (*free)(void *);
  size_t (*usable_size)(void *);
};

class BlockSize {
 public:
  // Reads headers from now on if `real` is glibc's and they agree with its
  // malloc_usable_size; measures with it otherwise.
  void choose(const RealAllocator &real);
  // Until the first measure, which calls first_use (which should choose).
  void choose_on_first_use(size_t (*first_use)(void *)) {
    usable_size_.store(first_use, std::memory_order_relaxed);
  }
  bool reads_header() const { return reads_header_.load(std::memory_order_relaxed); }

  size_t operator()(const void *p) const {
    if (!reads_header()) return usable_size_.load(std::memory_order_relaxed)(const_cast<void *>(p));
    return p ? from_header(p) : 0;
  }

 private:
  static size_t from_header(const void *p) {
    // Through the address: the compiler may know p as the start of a block.
    uint64_t header;
    memcpy(&header, reinterpret_cast<const void *>(uintptr_t(p) - sizeof header), sizeof header);
    return size_t((header & ~uint64_t(7)) - (header & kIsMmapped ? 16 : 8));
  }
  static constexpr uint64_t kIsMmapped = 2;
  std::atomic<bool> reads_header_{false};
  static size_t unmeasured(void *) { return 0; }
  std::atomic<size_t (*)(void *)> usable_size_{unmeasured};
};

}  // namespace prof
