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

class SampledSet {
 public:
  bool init();
  bool mapped() const { return slots_ != nullptr; }
  // Unmaps the set (the agent is off for good), if it was mapped.
  void release();
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
  // 2-bit counts (16 KiB), not bytes (64 KiB), so that its probe stays in
  // the L1 cache.
  std::atomic<uint64_t> filter_[kFilter / kPerWord] = {};
  std::atomic<uint64_t> overflow_{0};
};

extern SampledSet g_sampled;

// The sampling decision of one call, taken by its hook once, in two halves
// that never repeat each other. Inline, from this thread's countdown and the
// filter alone, it settles nearly every call (as nothing to record); what it
// leaves open (a draw of the countdown, a probe of the set) the hook settles
// out of line, so that its pass-through path makes no call. Neither half
// allocates or locks: the hooks need no guard for them.
enum class Sampled : uint8_t { kNo, kYes, kOpen };

// A new block of `size` bytes: every one is recorded when sampling is off
// (mean 0); else its bytes are counted down, and it is when they cross zero
// (kOpen: countdown_crossed() tells).
inline Sampled sample_allocation(uint64_t mean, size_t size) {
  if (!mean) return Sampled::kYes;
  // One test: the countdown is 0 until the thread's first draw.
  if (__builtin_expect(size < uint64_t(t_state.countdown), 1)) {
    t_state.countdown -= int64_t(size);
    return Sampled::kNo;
  }
  return Sampled::kOpen;
}

// The free of block p: every one is recorded when sampling is off; else only
// a sampled block's (kOpen: the filter cannot rule p out; sampled_free()
// tells).
inline Sampled sample_free(uint64_t mean, const void *p) {
  if (!mean) return Sampled::kYes;
  return g_sampled.may_contain(uint64_t(p)) ? Sampled::kOpen : Sampled::kNo;
}

// The out-of-line halves, which settle a kOpen: whether this allocation of
// `size` bytes makes the countdown cross zero (drawing it first, the first
// time on this thread); whether p was sampled (it is then forgotten).
bool countdown_crossed(uint64_t mean, size_t size);
inline bool sampled_free(const void *p) { return g_sampled.remove(uint64_t(p)); }

// Whether a block is recorded, given the verdict of the inline half.
inline bool settle_allocation(Sampled s, uint64_t mean, size_t size) {
  return s == Sampled::kYes || (s == Sampled::kOpen && countdown_crossed(mean, size));
}
inline bool settle_free(Sampled s, const void *p) {
  return s == Sampled::kYes || (s == Sampled::kOpen && sampled_free(p));
}

// Under sampling, remembers the recorded block p, so that its free is
// recorded too; also a block that settle_free() forgot but that lives on (a
// failed realloc).
inline void remember_sampled(uint64_t mean, const void *p) {
  if (mean) g_sampled.insert(uint64_t(p));
}

}  // namespace prof
