// HeapModel: the native view of a libprof memory stream, built in one pass:
// totals, peak heap and the stacks holding it at the peak, leaks by stack,
// temporary allocations, a size histogram, per-stack MemProf-style statistics
// (count, min/avg/max size and lifetime), heap over time, and the mmap domain.
//
// Invariants: memory is proportional to live blocks and unique stacks, never
// to events. Pairing takes the oldest live block at an address (LiveHeap).
// Peak holders are exact in O(1) per event: a stack's bytes at the latest
// peak are captured lazily, the first time it changes after that peak.
// Lifetimes are counted on the allocation clock (events since the block was
// allocated). Sampled streams are scaled per event by s / (1 - exp(-s/mean)).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "live_heap.h"
#include "memprof.h"

namespace prof {

// Where an event happened: its stacks, or for streams without stacks (genuine
// LuaJIT), its guest location (`site`, interned by the stream's reader).
struct StackKey {
  uint32_t file = 0;  // which stream (ids are per stream)
  uint64_t host = 0, guest = 0;
  uint32_t site = 0;
  bool operator==(const StackKey &o) const {
    return file == o.file && host == o.host && guest == o.guest && site == o.site;
  }
};
struct StackKeyHash {
  size_t operator()(const StackKey &k) const {
    return std::hash<uint64_t>()(k.host * 0x9E3779B97F4A7C15ull ^ k.guest ^
                                  (uint64_t(k.file) << 56) ^ (uint64_t(k.site) << 32));
  }
};

struct StackStats {
  uint64_t allocs = 0;         // blocks created here (alloc or realloc)
  double alloc_bytes = 0;      // scaled
  double alloc_count = 0;      // scaled
  uint64_t min_size = UINT64_MAX, max_size = 0;
  uint64_t frees = 0;
  uint64_t min_life = UINT64_MAX, max_life = 0, sum_life = 0;
  uint64_t temporary = 0;
  double live_bytes = 0;       // now
  double peak_bytes = 0;       // at the global peak (valid after finish())
  uint64_t peak_epoch = 0;     // internal: the peak its peak_bytes belongs to
};

struct HeapSample {
  uint64_t time_ns, rss, heap_bytes;
};

class HeapModel {
 public:
  void set_sampling(uint64_t mean_bytes) { mean_ = mean_bytes; }
  void alloc(const StackKey &stack, uint64_t addr, uint64_t size);
  // Returns false for a pointer never seen allocated.
  bool free(uint64_t addr, uint32_t file);
  void realloc(const StackKey &stack, uint64_t oaddr, uint64_t naddr, uint64_t nsize);
  void map(const StackKey &stack, uint64_t addr, uint64_t len);
  void unmap(uint64_t addr, uint64_t len, uint32_t file);
  void time_mark(uint64_t time_ns, uint64_t rss);
  void finish();

  const std::unordered_map<StackKey, StackStats, StackKeyHash> &stacks() const { return stacks_; }
  const std::unordered_map<StackKey, StackStats, StackKeyHash> &mmap_stacks() const {
    return mmap_stacks_;
  }
  double peak_bytes() const { return peak_; }
  double live_bytes() const { return live_; }
  uint64_t events() const { return clock_; }
  uint64_t alloc_calls() const { return alloc_calls_; }
  uint64_t realloc_calls() const { return realloc_calls_; }
  uint64_t free_calls() const { return free_calls_; }
  double allocated_bytes() const { return allocated_; }
  uint64_t unknown_frees() const { return unknown_frees_; }
  uint64_t temporary() const { return temporary_; }
  uint64_t live_blocks() const { return heap_.size(); }
  const std::array<uint64_t, 65> &size_histogram() const { return histogram_; }
  const std::vector<HeapSample> &over_time() const { return samples_; }
  double mapped_bytes() const { return mapped_; }
  double mapped_peak() const { return mapped_peak_; }
  uint64_t mean() const { return mean_; }

 private:
  struct Block {
    uint64_t size;
    double weight;        // scaled bytes this block stands for
    StackStats *stats;    // its stack's (map elements never move)
    uint64_t born;        // allocation clock
  };
  double scaled(uint64_t size) const;
  StackStats &touch(std::unordered_map<StackKey, StackStats, StackKeyHash> &m, const StackKey &k);
  void create(const StackKey &stack, uint64_t addr, uint64_t size);
  bool retire(uint64_t addr, uint32_t file, bool count_free);
  void change_live(StackStats &s, double delta);

  static uint64_t heap_addr(uint64_t addr, uint32_t file) {
    // XXX: x86-64 user addresses fit in 47 bits; the stream index goes above
    // them so that a parent and its forked children never share a block.
    return addr | (uint64_t(file) << 48);
  }

  uint64_t mean_ = 0;
  uint64_t clock_ = 0;
  uint64_t alloc_calls_ = 0, realloc_calls_ = 0, free_calls_ = 0, unknown_frees_ = 0;
  double allocated_ = 0, live_ = 0, peak_ = 0;
  uint64_t peak_epoch_ = 0;
  uint64_t temporary_ = 0;
  uint64_t last_alloc_addr_ = UINT64_MAX;
  std::array<uint64_t, 65> histogram_{};
  LiveHeap<Block> heap_;
  std::unordered_map<StackKey, StackStats, StackKeyHash> stacks_;
  std::vector<HeapSample> samples_;
  // The mmap domain: start -> (length, stack).
  std::map<uint64_t, std::pair<uint64_t, StackKey>> mappings_;
  std::unordered_map<StackKey, StackStats, StackKeyHash> mmap_stacks_;
  double mapped_ = 0, mapped_peak_ = 0;
};

}  // namespace prof
