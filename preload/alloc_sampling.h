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
  uint64_t overflow() const { return overflow_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kCapacity = size_t(1) << 22;
  static constexpr size_t kFilter = size_t(1) << 16;
  static constexpr uint64_t kTombstone = 1;
  std::atomic<uint64_t> *slots_ = nullptr;
  // XXX: nearly every free is of an unsampled block; a small counting filter
  // (cache-resident, unlike the table) answers those without a table probe.
  std::atomic<uint8_t> filter_[kFilter] = {};
  std::atomic<uint64_t> overflow_{0};
};

extern SampledSet g_sampled;

}  // namespace prof
