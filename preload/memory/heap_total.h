// HeapTotal: the exact count of the program's live heap bytes, kept by the
// hooks on every call (recorded or not: sampling leaves out events, never
// this count), and the heap-total records (format/ext.h) that carry it into
// the stream: whenever it has moved by a step, at each time mark, and at
// every peak, so that the analyzer's heap over time and its peak are exact.
//
// Invariants:
// - A block counts at the allocator's usable size, from its allocation to
//   its free (malloc_usable_size, read by the hook before the real free);
//   a guest VM's own block (prof_guest_alloc) at the size the VM gives.
//   Blocks of the agent's own (guard set) and those allocated before the
//   agent was armed never count; the latter's frees do (a few bytes of
//   ld.so's and libc's start, at most).
// - The hot path is a thread-local add and two relaxed loads: each thread
//   adds its change to the shared count every kFlushBytes, or at once when
//   the count may pass the peak or a step (heap_total_moved(), out of line).
//   With one thread the count is exact at every call; with several, a
//   thread's view misses what the others have not added yet (less than
//   kFlushBytes each).
// - The peak is written (its value and the time it was reached, read at
//   least every kPeakClockEvery new peaks) before any later record of the
//   count; the records of one thread are in time order.
#pragma once

#include <atomic>
#include <cstdint>

#include "thread_state.h"

namespace prof {

struct HeapTotal {
  static constexpr int64_t kFlushBytes = 64 << 10;
  static constexpr int64_t kMinStep = 64 << 10;
  static constexpr int kPeakClockEvery = 64;
  std::atomic<int64_t> shared{0};  // the threads' changes added in
  // A thread's count outside [low, high] takes the out-of-line path: the
  // peak, or a step from the last record, may have been passed.
  std::atomic<int64_t> low{INT64_MIN}, high{0};
};

extern HeapTotal g_heap_total;

// The out-of-line half of count_heap(): `delta` is the thread's change not
// yet added in, this call's included.
void heap_total_moved(int64_t delta);

// A block of `bytes` usable bytes allocated (positive) or freed (negative)
// by the program.
inline void count_heap(int64_t bytes) {
  const int64_t delta = t_state.heap_delta + bytes;
  const int64_t count = g_heap_total.shared.load(std::memory_order_relaxed) + delta;
  if (__builtin_expect(count > g_heap_total.high.load(std::memory_order_relaxed) ||
                           count < g_heap_total.low.load(std::memory_order_relaxed) ||
                           delta > HeapTotal::kFlushBytes || delta < -HeapTotal::kFlushBytes,
                       0)) {
    heap_total_moved(delta);
    return;
  }
  t_state.heap_delta = delta;
}

// Writes the peak not yet written, then the count now (time marks, the
// stream's end). Guarded, with the stream open.
void write_heap_total(uint64_t time_ns);
// A forked child counts its own heap from what it inherited.
void restart_heap_total_in_child();

}  // namespace prof
