// Allocation sampling (PROF_SAMPLE_BYTES): Poisson sampling of allocated
// bytes, as tcmalloc and jemalloc do, and the set of sampled live blocks so
// that exactly their frees are recorded.
//
// Invariants: lock-free and malloc-free. Each thread counts down an
// exponentially distributed number of bytes (mean = the configured interval);
// the allocation that crosses zero is sampled, so a block of size s is
// sampled with probability 1 - exp(-s/mean) and the analyzer scales it back.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "thread_state.h"

namespace prof {

// True when this allocation of `size` bytes is sampled (mean > 0).
bool sample_allocation(uint64_t mean, size_t size);

class SampledSet {
 public:
  bool init();
  void insert(uint64_t addr);
  // True (and forgotten) when addr was sampled.
  bool remove(uint64_t addr);
  void reset();
  // False when addr is certainly not in the set (the filter alone).
  bool may_contain(uint64_t addr) const {
    const size_t b = filter_of(addr);
    return (filter_[b / kPerWord].load(std::memory_order_relaxed) >> shift_of(b)) & kSaturated;
  }
  uint64_t overflow() const { return overflow_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kCapacity = size_t(1) << 22;
  static constexpr size_t kFilter = size_t(1) << 16;
  static constexpr uint64_t kTombstone = 1;
  static size_t filter_of(uint64_t addr) {
    return ((addr >> 4) * 0xC2B2AE3D27D4EB4Full >> 40) & (kFilter - 1);
  }
  // Each bucket is a 2-bit count of the live sampled blocks hashed to it;
  // kSaturated stands for 3 or more and is never counted down again.
  static constexpr uint64_t kSaturated = 3;
  static constexpr size_t kPerWord = 32;
  static unsigned shift_of(size_t bucket) { return unsigned(2 * (bucket % kPerWord)); }
  // Adds `delta` (+1 or -1) to addr's bucket unless it is saturated.
  void count(uint64_t addr, int delta);
  std::atomic<uint64_t> *slots_ = nullptr;
  // XXX: nearly every free is of an unsampled block; a small counting filter
  // (cache-resident, unlike the table) answers those without a table probe.
  // 16 KiB: as bytes (64 KiB) its probe missed the L1 cache on a quarter of
  // binary-trees' frees.
  std::atomic<uint64_t> filter_[kFilter / kPerWord] = {};
  std::atomic<uint64_t> overflow_{0};
};

extern SampledSet g_sampled;

// The hooks' shortcuts past the recorder for the calls sampling leaves out
// (nearly all of them): inline, and touching only this thread's countdown
// and the filter, so they need no guard.
// True when sampling (mean > 0) leaves this allocation out; its bytes are
// then counted down. False: record_alloc() decides.
inline bool allocation_left_out(uint64_t mean, size_t size) {
  if (!mean || !t_state.sampling_ready || int64_t(size) >= t_state.countdown) return false;
  t_state.countdown -= int64_t(size);
  return true;
}
// True when sampling leaves this free out: p is certainly not sampled.
inline bool free_left_out(uint64_t mean, const void *p) {
  return mean && !g_sampled.may_contain(uint64_t(p));
}

}  // namespace prof
