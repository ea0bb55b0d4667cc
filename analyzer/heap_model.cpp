#include "heap_model.h"

#include <cmath>

namespace prof {

double HeapModel::scaled(uint64_t size) const {
  if (mean_ == 0 || size == 0) return double(size);
  return double(size) / (1.0 - std::exp(-double(size) / double(mean_)));
}

StackStats &HeapModel::touch(std::unordered_map<StackKey, StackStats, StackKeyHash> &m,
                             const StackKey &k) {
  return m[k];
}

void HeapModel::change_live(StackStats &s, double delta) {
  // XXX: lazily capture this stack's bytes at the latest global peak before
  // they change: they have not changed since that peak.
  if (s.peak_epoch != peak_epoch_) {
    s.peak_bytes = s.live_bytes;
    s.peak_epoch = peak_epoch_;
  }
  s.live_bytes += delta;
  live_ += delta;
  if (live_ > peak_) {
    peak_ = live_;
    peak_epoch_++;
  }
}

void HeapModel::create(const StackKey &stack, uint64_t addr, uint64_t size) {
  const double w = scaled(size);
  StackStats &s = touch(stacks_, stack);
  s.allocs++;
  s.alloc_bytes += w;
  s.alloc_count += size ? w / double(size) : 1.0;
  if (size < s.min_size) s.min_size = size;
  if (size > s.max_size) s.max_size = size;
  allocated_ += w;
  histogram_[size ? 64 - __builtin_clzll(size) : 0]++;
  heap_.insert(heap_addr(addr, stack.file), Block{size, w, &s, clock_});
  change_live(s, w);
  last_alloc_addr_ = heap_addr(addr, stack.file);
}

bool HeapModel::retire(uint64_t addr, uint32_t file, bool count_free) {
  Block b;
  const uint64_t key = heap_addr(addr, file);
  if (!heap_.take(key, &b)) {
    if (count_free) unknown_frees_++;
    return false;
  }
  StackStats &s = *b.stats;
  s.frees++;
  const uint64_t life = clock_ - b.born;
  if (life < s.min_life) s.min_life = life;
  if (life > s.max_life) s.max_life = life;
  s.sum_life += life;
  if (count_free && key == last_alloc_addr_) {
    s.temporary++;
    temporary_++;
  }
  change_live(s, -b.weight);
  return true;
}

void HeapModel::alloc(const StackKey &stack, uint64_t addr, uint64_t size) {
  clock_++;
  alloc_calls_++;
  create(stack, addr, size);
}

bool HeapModel::free(uint64_t addr, uint32_t file) {
  clock_++;
  free_calls_++;
  const bool known = retire(addr, file, true);
  last_alloc_addr_ = UINT64_MAX;
  return known;
}

void HeapModel::realloc(const StackKey &stack, uint64_t oaddr, uint64_t naddr, uint64_t nsize) {
  clock_++;
  realloc_calls_++;
  if (oaddr != 0) retire(oaddr, stack.file, false);
  create(stack, naddr, nsize);
}

void HeapModel::map(const StackKey &stack, uint64_t addr, uint64_t len) {
  StackStats &s = touch(mmap_stacks_, stack);
  s.allocs++;
  s.alloc_bytes += double(len);
  s.alloc_count += 1;
  s.live_bytes += double(len);
  mappings_[heap_addr(addr, stack.file)] = {len, stack};
  mapped_ += double(len);
  if (mapped_ > mapped_peak_) mapped_peak_ = mapped_;
}

void HeapModel::unmap(uint64_t addr, uint64_t len, uint32_t file) {
  // An unmap may cover parts of several mappings: trim each overlap.
  const uint64_t lo = heap_addr(addr, file), hi = lo + len;
  auto it = mappings_.upper_bound(lo);
  if (it != mappings_.begin()) --it;
  while (it != mappings_.end() && it->first < hi) {
    const uint64_t start = it->first, end = start + it->second.first;
    const StackKey stack = it->second.second;
    if (end <= lo) {
      ++it;
      continue;
    }
    const uint64_t cut_lo = start > lo ? start : lo, cut_hi = end < hi ? end : hi;
    StackStats &s = mmap_stacks_[stack];
    s.live_bytes -= double(cut_hi - cut_lo);
    mapped_ -= double(cut_hi - cut_lo);
    it = mappings_.erase(it);
    if (start < cut_lo) mappings_[start] = {cut_lo - start, stack};
    if (cut_hi < end) it = mappings_.emplace(cut_hi, std::make_pair(end - cut_hi, stack)).first;
    if (cut_lo == start && cut_hi == end) s.frees++;
  }
}

void HeapModel::time_mark(uint64_t time_ns, uint64_t rss) {
  samples_.push_back(HeapSample{time_ns, rss, uint64_t(live_)});
}

void HeapModel::finish() {
  for (auto &kv : stacks_)
    if (kv.second.peak_epoch != peak_epoch_) {
      kv.second.peak_bytes = kv.second.live_bytes;
      kv.second.peak_epoch = peak_epoch_;
    }
}

}  // namespace prof
