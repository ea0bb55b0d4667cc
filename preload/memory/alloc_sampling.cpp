#include "memory/alloc_sampling.h"

#include <ctime>
#include <sys/mman.h>
#include <unistd.h>

#include "memory/negative_log.h"
#include "stream/raw_thread.h"
#include "thread_state.h"

namespace prof {

SampledSet g_sampled;

static uint64_t next_random() {
  uint64_t x = t_state.rng;  // xorshift64*
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  t_state.rng = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static int64_t next_interval(uint64_t mean) {
  // -ln(U) * mean with U uniform in (0, 1].
  const double u = (double(next_random() >> 11) + 1.0) / 9007199254740992.0;
  return int64_t(negative_log(u) * double(mean)) + 1;
}

bool countdown_crossed(uint64_t mean, size_t size) {
  if (!t_state.sampling_ready) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t_state.rng = uint64_t(ts.tv_nsec) ^ (uint64_t(gettid()) << 32) ^ 0x9E3779B97F4A7C15ull;
    t_state.countdown = next_interval(mean);
    t_state.sampling_ready = true;
  }
  if (size < uint64_t(t_state.countdown)) {
    t_state.countdown -= int64_t(size);
    return false;
  }
  // XXX: one draw per crossing; a block larger than several intervals is
  // still one sample, weighted by the analyzer.
  t_state.countdown = next_interval(mean);
  return true;
}

bool SampledSet::init() {
  void *p = mmap(nullptr, kCapacity * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  raw_wipe_on_fork(p, kCapacity * sizeof(uint64_t));  // a child's set starts empty (reset())
  slots_ = static_cast<std::atomic<uint64_t> *>(p);
  return true;
}

void SampledSet::release() {
  if (slots_) munmap(slots_, kCapacity * sizeof(uint64_t));
  slots_ = nullptr;
}

void SampledSet::reset() {
  madvise(slots_, kCapacity * sizeof(uint64_t), MADV_DONTNEED);
  for (auto &f : filter_) f.store(0, std::memory_order_relaxed);
  overflow_.store(0, std::memory_order_relaxed);
}

static size_t home_of(uint64_t addr, size_t capacity) {
  return ((addr >> 4) * 0x9E3779B97F4A7C15ull >> 20) & (capacity - 1);
}

void SampledSet::count(uint64_t addr, int delta) {
  // A compare-and-swap of the whole word: a saturated count stays saturated
  // (never a false "not sampled"), and a count is never taken below zero.
  const size_t b = filter_of(addr);
  std::atomic<uint64_t> &word = filter_[b / kPerWord];
  const uint64_t one = uint64_t(1) << shift_of(b);
  uint64_t v = word.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t c = (v >> shift_of(b)) & kSaturated;
    if (c == kSaturated || (delta < 0 && c == 0)) return;
    const uint64_t next = delta > 0 ? v + one : v - one;
    if (word.compare_exchange_weak(v, next, std::memory_order_relaxed)) return;
  }
}

void SampledSet::insert(uint64_t addr) {
  count(addr, +1);
  const size_t home = home_of(addr, kCapacity);
  for (size_t i = 0; i < 4096; i++) {
    std::atomic<uint64_t> &s = slots_[(home + i) & (kCapacity - 1)];
    uint64_t v = s.load(std::memory_order_relaxed);
    if ((v == 0 || v == kTombstone) &&
        s.compare_exchange_strong(v, addr, std::memory_order_acq_rel))
      return;
  }
  overflow_.fetch_add(1, std::memory_order_relaxed);
}

bool SampledSet::remove(uint64_t addr) {
  if (!may_contain(addr)) return false;
  const size_t home = home_of(addr, kCapacity);
  for (size_t i = 0; i < 4096; i++) {
    std::atomic<uint64_t> &s = slots_[(home + i) & (kCapacity - 1)];
    uint64_t v = s.load(std::memory_order_acquire);
    if (v == 0) return false;
    if (v != addr) continue;
    // XXX: a slot whose successor is empty ends every probe chain through it,
    // so it can become empty itself; tombstones would lengthen the probe of
    // every unsampled free. (A concurrent insert landing in that successor in
    // the same instant could be lost: a false leak of one sample, at worst.)
    const uint64_t next = slots_[(home + i + 1) & (kCapacity - 1)].load(std::memory_order_acquire);
    if (s.compare_exchange_strong(v, next == 0 ? 0 : kTombstone, std::memory_order_acq_rel)) {
      count(addr, -1);
      return true;
    }
  }
  return false;
}

}  // namespace prof
