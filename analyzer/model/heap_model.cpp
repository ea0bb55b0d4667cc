#include "model/heap_model.h"

#include <algorithm>
#include <cmath>

namespace prof {

void HeapModel::Series::add(const HeapPoint &p) {
  if (offered++ % stride != 0) return;
  if (points.size() == kMaxPoints) {
    for (size_t i = 0; i < kMaxPoints / 2; i++) points[i] = points[2 * i];
    points.resize(kMaxPoints / 2);
    stride *= 2;
    offered = 1;
  }
  points.push_back(p);
}

void HeapModel::begin_stream(uint32_t file, uint32_t first_stack) {
  file_ = file;
  first_stack_ = first_stack;
  mean_ = 0;
  stream_events_ = peak_events_ = 0;
  live_ = peak_ = 0;
  mapped_ = mapped_peak_ = 0;
  last_alloc_valid_ = false;
  peak_epoch_++;
  mapped_epoch_++;
}

void HeapModel::settle_peaks(std::vector<StackStats> &table, uint64_t epoch) const {
  // Stacks unchanged since the stream's last peak still hold what they held then.
  for (size_t i = first_stack_; i < table.size(); i++)
    if (table[i].peak_epoch != epoch) {
      table[i].peak_bytes = table[i].live_bytes;
      table[i].peak_blocks = table[i].live_blocks;
      table[i].peak_epoch = epoch;
    }
}

bool HeapModel::change_held(StackStats &s, double delta, double &live, double &peak,
                            uint64_t &epoch) {
  // XXX: capture this stack's bytes at the latest peak before they change:
  // they have not changed since that peak.
  if (s.peak_epoch != epoch) {
    s.peak_bytes = s.live_bytes;
    s.peak_epoch = epoch;
  }
  s.live_bytes += delta;
  live += delta;
  if (live <= peak) return false;
  peak = live;
  epoch++;
  return true;
}

void HeapModel::end_stream() {
  settle_peaks(stacks_, peak_epoch_);
  settle_peaks(mmap_stacks_, mapped_epoch_);
  stream_heaps_.push_back(StreamHeap{file_, peak_events_, stream_events_, peak_, live_});
  leaked_ += live_;
  leaked_blocks_ += heap_.size();
  peaks_ += peak_;
  mapped_done_ += mapped_;
  mapped_peaks_ += mapped_peak_;
  live_ = peak_ = 0;
  mapped_ = mapped_peak_ = 0;
  // XXX: the stream's blocks are counted in its stacks' live bytes; the
  // blocks themselves are needed no more.
  heap_ = LiveHeap<Block>();
  mappings_.clear();
}

StackStats &HeapModel::stats(std::vector<StackStats> &table, uint32_t stack) {
  if (stack >= table.size()) table.resize(size_t(stack) + 1);
  return table[stack];
}

double HeapModel::scaled(uint64_t size) const {
  if (mean_ == 0 || size == 0) return double(size);
  // XXX: the weight is kept as a float in the block; use that very value for
  // both the allocation and the free, so live bytes return to exactly 0.
  return double(float(double(size) / -std::expm1(-double(size) / double(mean_))));
}

// Called before the block's live_blocks change: they are captured as the
// bytes are, at the latest peak.
void HeapModel::change_live(StackStats &s, double delta) {
  if (s.peak_epoch != peak_epoch_) s.peak_blocks = s.live_blocks;
  if (change_held(s, delta, live_, peak_, peak_epoch_)) peak_events_ = stream_events_;
}

double HeapModel::create(uint32_t stack, uint64_t addr, uint64_t size) {
  StackStats &s = stats(stacks_, stack);
  const double w = scaled(size);
  const double count = size ? w / double(size) : 1.0;
  s.allocs++;
  s.alloc_bytes += w;
  s.alloc_count += count;
  s.min_size = std::min(s.min_size, size);
  s.max_size = std::max(s.max_size, size);
  allocated_ += w;
  allocated_count_ += count;
  histogram_[size ? 64 - __builtin_clzll(size) : 0]++;
  heap_.insert(addr, Block{size, stream_events_, stack, mean_ ? float(w) : 0.0f});
  change_live(s, w);
  s.live_blocks++;
  return count;
}

double HeapModel::retire(uint64_t addr) {
  Block b;
  if (!heap_.take(addr, &b)) {
    unknown_frees_++;
    return 1;
  }
  StackStats &s = stacks_[b.stack];
  s.frees++;
  const uint64_t life = stream_events_ - b.born;
  s.min_life = std::min(s.min_life, life);
  s.max_life = std::max(s.max_life, life);
  s.sum_life += life;
  if (last_alloc_valid_ && b.size == last_alloc_size_ && b.stack == last_alloc_stack_) {
    s.temporary++;
    temporary_++;
  }
  last_alloc_valid_ = false;
  change_live(s, -(b.weight > 0 ? double(b.weight) : double(b.size)));
  s.live_blocks--;
  return b.weight > 0 && b.size ? double(b.weight) / double(b.size) : 1.0;
}

void HeapModel::alloc(uint32_t stack, uint64_t addr, uint64_t size) {
  stream_events_++;
  alloc_calls_++;
  estimated_.allocs += create(stack, addr, size);
  last_alloc_size_ = size;
  last_alloc_stack_ = stack;
  last_alloc_valid_ = true;
}

void HeapModel::free(uint64_t addr) {
  stream_events_++;
  free_calls_++;
  estimated_.frees += retire(addr);
}

void HeapModel::realloc(uint32_t stack, uint64_t oaddr, uint64_t naddr, uint64_t nsize) {
  stream_events_++;
  realloc_calls_++;
  if (oaddr != 0) retire(oaddr);  // realloc(NULL, n) allocates
  estimated_.reallocs += create(stack, naddr, nsize);
  last_alloc_size_ = nsize;
  last_alloc_stack_ = stack;
  last_alloc_valid_ = true;
}

void HeapModel::map(uint32_t stack, uint64_t addr, uint64_t len) {
  len = std::min(len, UINT64_MAX - addr);  // a hostile length must not wrap
  maps_++;
  // XXX: a new mapping over a live one replaces it (MAP_FIXED).
  unmap_range(addr, len);
  StackStats &s = stats(mmap_stacks_, stack);
  s.allocs++;
  s.alloc_bytes += double(len);
  s.alloc_count += 1;
  s.live_blocks++;
  s.min_size = std::min(s.min_size, len);
  s.max_size = std::max(s.max_size, len);
  mappings_[addr] = {len, stack};
  change_held(s, double(len), mapped_, mapped_peak_, mapped_epoch_);
}

void HeapModel::unmap(uint64_t addr, uint64_t len) {
  unmaps_++;
  unmap_range(addr, len);
}

void HeapModel::unmap_range(uint64_t addr, uint64_t len) {
  // An unmap may cover parts of several mappings: trim each overlap.
  const uint64_t lo = addr, hi = len > UINT64_MAX - addr ? UINT64_MAX : addr + len;
  auto it = mappings_.upper_bound(lo);
  if (it != mappings_.begin()) --it;
  while (it != mappings_.end() && it->first < hi) {
    const uint64_t start = it->first, end = start + it->second.first;
    const uint32_t index = it->second.second;
    StackStats *s = &mmap_stacks_[index];
    if (end <= lo) {
      ++it;
      continue;
    }
    const uint64_t cut_lo = std::max(start, lo), cut_hi = std::min(end, hi);
    change_held(*s, -double(cut_hi - cut_lo), mapped_, mapped_peak_, mapped_epoch_);
    it = mappings_.erase(it);
    if (start < cut_lo) mappings_.emplace(start, std::make_pair(cut_lo - start, index));
    if (start < cut_lo && cut_hi < end) s->live_blocks++;  // a hole: one mapping is two now
    if (cut_hi < end) {
      it = mappings_.emplace(cut_hi, std::make_pair(end - cut_hi, index)).first;
    } else if (start == cut_lo) {
      s->frees++;
      s->live_blocks--;
    }
  }
}

HeapPoint HeapModel::point(bool timed, uint64_t time_ns, uint64_t rss) const {
  HeapPoint p;
  p.file = file_;
  p.timed = timed;
  p.time_ns = time_ns;
  p.rss = rss;
  p.events = stream_events_;
  p.heap_bytes = live_;
  return p;
}

void HeapModel::time_mark(uint64_t time_ns, uint64_t rss) { timed_.add(point(true, time_ns, rss)); }

void HeapModel::event_mark() { counted_.add(point(false, 0, 0)); }

void HeapModel::snapshot(bool timed, uint64_t time_ns, size_t top) {
  if (snapshots_.size() == kMaxPoints) {
    snapshots_dropped_++;
    return;
  }
  HeapSnapshot snap;
  snap.at = point(timed, time_ns, 0);
  for (size_t i = first_stack_; i < stacks_.size(); i++)
    if (stacks_[i].live_bytes > 0) snap.holders.emplace_back(uint32_t(i), stacks_[i].live_bytes);
  auto larger = [](const std::pair<uint32_t, double> &a, const std::pair<uint32_t, double> &b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  };
  if (snap.holders.size() > top) {
    std::partial_sort(snap.holders.begin(), snap.holders.begin() + long(top), snap.holders.end(),
                      larger);
    snap.holders.resize(top);
  } else {
    std::sort(snap.holders.begin(), snap.holders.end(), larger);
  }
  snapshots_.push_back(std::move(snap));
}

void HeapModel::drop_leaks(uint32_t stack) {
  StackStats &s = stacks_[stack];
  leaked_ -= s.live_bytes;
  leaked_blocks_ -= s.live_blocks;
  s.live_bytes = 0;
  s.live_blocks = 0;
}

const std::vector<HeapPoint> &HeapModel::over_time() const {
  return timed_.points.empty() ? counted_.points : timed_.points;
}

}  // namespace prof
