#include "model/heap_model.h"

#include <algorithm>
#include <cmath>

namespace prof {

bool HeapModel::Series::add(const HeapPoint &p) {
  if (offered++ % stride != 0) return false;
  if (points.size() == kMaxPoints) {
    for (size_t i = 0; i < kMaxPoints / 2; i++) points[i] = points[2 * i];
    points.resize(kMaxPoints / 2);
    stride *= 2;
    offered = 1;
  }
  points.push_back(p);
  return true;
}

void HeapModel::begin_stream(uint32_t file, uint32_t first_stack) {
  file_ = file;
  first_stack_ = first_stack;
  mean_ = 0;
  attached_ = false;
  stream_events_ = peak_events_ = 0;
  live_ = peak_ = 0;
  mapped_ = mapped_peak_ = 0;
  last_alloc_valid_ = false;
  peak_epoch_++;
  mapped_epoch_++;
  rss_ = 0;
  counted_stream_ = false;
  counted_peak_ = 0;
  counted_peak_ns_ = 0;
  history_.clear();
  first_thread_ = threads_.size();
  threads_.emplace_back();
  threads_.back().file = file;
  thread_ = 0;
  chosen_ = true;
}

void HeapModel::set_thread(uint32_t local, uint64_t tid, bool chosen) {
  const size_t at = first_thread_ + local;
  if (at >= threads_.size()) threads_.resize(at + 1);
  ThreadHeap &t = threads_[at];
  if (t.tid == 0 && !t.others) {
    t.file = file_;
    t.others = local == kMaxStreamThreads - 1;
    t.tid = t.others ? 0 : tid;
  }
  thread_ = local;
  chosen_ = chosen;
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
  for (size_t i = first_thread_; i < threads_.size(); i++) change_thread_live(threads_[i], 0);
  settle_peaks(mmap_stacks_, mapped_epoch_);
  // XXX: a sampled stream's peak from its events is the largest of a noisy
  // estimate, biased upward; the writer's count is exact.
  if (writer_decides_peak()) peak_ = counted_peak_;
  stream_heaps_.push_back(StreamHeap{file_, peak_events_, stream_events_, peak_, live_,
                                     counted_stream_, counted_peak_, counted_peak_ns_,
                                     writer_decides_peak(), {}, 0});
  choose_top(stream_heaps_.back());
  replay_bands(stream_heaps_.back());
  history_.clear();
  keep_leak_shares();
  leaked_ += live_;
  leaked_blocks_ += heap_.size() - outside_blocks_;
  outside_blocks_ = 0;
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

void HeapModel::add_measured(uint32_t stack, const LlvmMemprofMib &mib) {
  StackStats &s = stats(stacks_, stack);
  s.allocs += mib.alloc_count;
  s.alloc_count += double(mib.alloc_count);
  s.alloc_bytes += double(mib.total_size);
  s.min_size = std::min(s.min_size, mib.min_size);
  s.max_size = std::max(s.max_size, mib.max_size);
  Measures &m = s.measures.make();
  m.records++;
  m.accesses += double(mib.total_access);
  m.min_accesses = std::min(m.min_accesses, mib.min_access);
  m.max_accesses = std::max(m.max_accesses, mib.max_access);
  m.lifetime_ms += double(mib.total_lifetime);
  m.min_life_ms = std::min(m.min_life_ms, mib.min_lifetime);
  m.max_life_ms = std::max(m.max_life_ms, mib.max_lifetime);
  m.lifetime_overlaps += double(mib.lifetime_overlaps);
  m.cpu_migrations += double(mib.migrations);
  alloc_calls_ += mib.alloc_count;
  allocated_ += double(mib.total_size);
  allocated_count_ += double(mib.alloc_count);
  measured_++;
}

const Measures &measures_of(const StackStats &s) {
  static const Measures kNone;
  return s.measures.get() ? *s.measures.get() : kNone;
}

double access_density(const StackStats &s) {
  const Measures *m = s.measures.get();
  if (!m || s.alloc_bytes <= 0 || s.alloc_count <= 0) return 0;
  const double mean_life_s = std::max(m->lifetime_ms / s.alloc_count, 1.0) / 1000;
  return m->accesses / s.alloc_bytes / mean_life_s;
}

void merge_measures(StackStats &to, const StackStats &from) {
  const Measures *f = from.measures.get();
  if (!f) return;
  Measures &t = to.measures.make();
  t.records += f->records;
  t.accesses += f->accesses;
  t.lifetime_ms += f->lifetime_ms;
  t.lifetime_overlaps += f->lifetime_overlaps;
  t.cpu_migrations += f->cpu_migrations;
  t.min_accesses = std::min(t.min_accesses, f->min_accesses);
  t.max_accesses = std::max(t.max_accesses, f->max_accesses);
  t.min_life_ms = std::min(t.min_life_ms, f->min_life_ms);
  t.max_life_ms = std::max(t.max_life_ms, f->max_life_ms);
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
// XXX: change_live(), create() and retire() are always inlined into alloc(),
// free() and realloc(): their calls cost as much as their work.
[[gnu::always_inline]] inline void HeapModel::change_live(StackStats &s, double delta) {
  if (s.peak_epoch != peak_epoch_) s.peak_blocks = s.live_blocks;
  // XXX: a sampled stream's peak is the writer's count's, not the estimate's
  // (heap_total() opens those epochs): a phase whose estimate overshoots
  // must not take the stacks at the peak from the phase that reached it.
  uint64_t epoch = peak_epoch_;
  if (change_held(s, delta, live_, peak_, epoch) && !writer_decides_peak()) {
    peak_epoch_ = epoch;
    peak_events_ = stream_events_;
  }
}

// Before the stacks' change (which may open a new peak): a thread's bytes
// at the latest peak are captured as a stack's are.
[[gnu::always_inline]] inline void HeapModel::change_thread_live(ThreadHeap &t, double delta) const {
  if (t.peak_epoch != peak_epoch_) {
    t.peak_bytes = t.live_bytes;
    t.peak_epoch = peak_epoch_;
  }
  t.live_bytes += delta;
}

void HeapModel::keep_outside(uint64_t addr, uint64_t size) {
  heap_.insert(addr, Block{size, stream_events_, 1, 0, 0, 0.0f});
  outside_blocks_++;
  last_alloc_valid_ = false;
}

[[gnu::always_inline]] inline double HeapModel::create(uint32_t stack, uint64_t addr,
                                                      uint64_t size) {
  StackStats &s = stats(stacks_, stack);
  const double w = scaled(size);
  const double count = size ? w / double(size) : 1.0;
  ThreadHeap &t = threads_[first_thread_ + thread_];
  t.allocs++;
  t.alloc_bytes += w;
  t.alloc_count += count;
  t.live_blocks++;
  t.live_count += count;
  change_thread_live(t, w);
  s.allocs++;
  s.alloc_bytes += w;
  s.alloc_count += count;
  s.min_size = std::min(s.min_size, size);
  s.max_size = std::max(s.max_size, size);
  allocated_ += w;
  allocated_count_ += count;
  // Sampled with probability p = size / w: this block adds (1 - p) w^2.
  if (mean_ && size) allocated_variance_ += (w - double(size)) * w;
  histogram_[size ? 64 - __builtin_clzll(size) : 0]++;
  heap_.insert(addr, Block{size, stream_events_, 0, thread_, stack, mean_ ? float(w) : 0.0f});
  history_.touch(stack);
  change_live(s, w);
  s.live_blocks++;
  s.live_count += count;
  return count;
}

// The calls the block released stands for; 0 when it counts nowhere (a
// block of a thread not chosen, or an unknown one freed by such a thread).
[[gnu::always_inline]] inline double HeapModel::retire(uint64_t addr) {
  Block b;
  if (!heap_.take(addr, &b)) {
    if (!chosen_) return 0;
    (attached_ ? frees_before_recording_ : unknown_frees_)++;
    return 1;
  }
  if (b.outside) {
    outside_blocks_--;
    last_alloc_valid_ = false;
    return 0;
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
  history_.touch(b.stack);
  const double bytes = b.weight > 0 ? double(b.weight) : double(b.size);
  const double count = b.weight > 0 && b.size ? double(b.weight) / double(b.size) : 1.0;
  ThreadHeap &t = threads_[first_thread_ + b.thread];
  change_thread_live(t, -bytes);
  t.live_blocks--;
  t.live_count = t.live_blocks ? t.live_count - count : 0;
  if (t.live_blocks == 0) t.live_bytes = 0;  // (no float residue once none)
  change_live(s, -bytes);
  s.live_blocks--;
  s.live_count = s.live_blocks ? s.live_count - count : 0;  // (no float residue once none)
  return count;
}

void HeapModel::alloc(uint32_t stack, uint64_t addr, uint64_t size) {
  stream_events_++;
  if (!chosen_) return keep_outside(addr, size);
  alloc_calls_++;
  estimated_.allocs += create(stack, addr, size);
  last_alloc_size_ = size;
  last_alloc_stack_ = stack;
  last_alloc_valid_ = true;
}

void HeapModel::free(uint64_t addr) {
  stream_events_++;
  const double count = retire(addr);
  if (count == 0) return;
  free_calls_++;
  estimated_.frees += count;
  if (!chosen_) return;  // (a chosen thread's block, freed by another)
  ThreadHeap &t = threads_[first_thread_ + thread_];
  t.frees++;
  t.free_count += count;
}

void HeapModel::realloc(uint32_t stack, uint64_t oaddr, uint64_t naddr, uint64_t nsize) {
  stream_events_++;
  if (oaddr != 0) retire(oaddr);  // realloc(NULL, n) allocates
  if (!chosen_) return keep_outside(naddr, nsize);
  realloc_calls_++;
  estimated_.reallocs += create(stack, naddr, nsize);
  last_alloc_size_ = nsize;
  last_alloc_stack_ = stack;
  last_alloc_valid_ = true;
}

void HeapModel::map(uint32_t stack, uint64_t addr, uint64_t len) {
  len = std::min(len, UINT64_MAX - addr);  // a hostile length must not wrap
  if (len == 0) return;  // (mmap refuses it: only a crafted stream has one)
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
  p.heap_bytes = p.stacks_bytes = live_;
  return p;
}

void HeapModel::add_point(Series &series, const HeapPoint &p) {
  if (series.add(p))
    history_.checkpoint(stream_events_, peak_, [this](uint32_t stack) { return stacks_[stack].live_bytes; });
}

void HeapModel::time_mark(uint64_t time_ns, uint64_t rss) {
  rss_ = rss;
  add_point(timed_, point(true, time_ns, rss));
}

void HeapModel::heap_total(uint64_t time_ns, uint64_t live_bytes) {
  HeapPoint p = point(true, time_ns, rss_);
  p.heap_bytes = double(live_bytes);
  add_point(totals_, p);
  if (!counted_stream_ || double(live_bytes) > counted_peak_) {
    counted_peak_ = double(live_bytes);
    counted_peak_ns_ = time_ns;
    // The writer records a peak before the count falls from it: the
    // stacks now are those at the peak.
    if (mean_) {
      peak_epoch_++;
      peak_events_ = stream_events_;
    }
  }
  counted_stream_ = true;
}

void HeapModel::event_mark() { add_point(counted_, point(false, 0, 0)); }

void HeapModel::choose_top(StreamHeap &h) const {
  // XXX: a stack that held nothing at the peak can still have grown and
  // shrunk before it (a phase of its own): the most it held at a kept point
  // ranks it after those that held bytes at the peak.
  std::vector<double> most(stacks_.size() - first_stack_, 0);
  for (const StackHistory::Entry &e : history_.entries())
    most[e.stack - first_stack_] = std::max(most[e.stack - first_stack_], e.bytes);
  std::vector<uint32_t> ranked;
  for (size_t i = first_stack_; i < stacks_.size(); i++) {
    h.stacks_peak += stacks_[i].peak_bytes;
    if (stacks_[i].peak_bytes > 0 || most[i - first_stack_] > 0) ranked.push_back(uint32_t(i));
  }
  auto larger = [&](uint32_t a, uint32_t b) {
    const StackStats &x = stacks_[a], &y = stacks_[b];
    if (x.peak_bytes != y.peak_bytes) return x.peak_bytes > y.peak_bytes;
    if (most[a - first_stack_] != most[b - first_stack_])
      return most[a - first_stack_] > most[b - first_stack_];
    return a < b;
  };
  const size_t n = std::min(kBands, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + long(n), ranked.end(), larger);
  for (size_t i = 0; i < n; i++) h.top.emplace_back(ranked[i], stacks_[ranked[i]].peak_bytes);
}

void HeapModel::replay_bands(const StreamHeap &h) {
  const std::vector<StackHistory::Entry> &entries = history_.entries();
  for (Series *series : {&timed_, &counted_, &totals_}) {
    std::vector<double> now(h.top.size(), 0);
    size_t next = 0;
    for (HeapPoint &p : series->points) {
      if (p.file != file_) continue;
      for (; next < entries.size() && entries[next].events <= p.events; next++)
        for (size_t b = 0; b < h.top.size(); b++)
          if (h.top[b].first == entries[next].stack) now[b] = entries[next].bytes;
      p.bands = now;
    }
  }
}

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

void HeapModel::keep_leak_shares() {
  heap_.for_each([this](const Block &b) {
    if (b.outside) return;
    std::vector<LeakShare> &shares = leak_shares_[b.stack];
    const size_t thread = first_thread_ + b.thread;
    if (shares.empty() || shares.back().thread != thread) {
      auto same = std::find_if(shares.begin(), shares.end(),
                               [thread](const LeakShare &l) { return l.thread == thread; });
      if (same == shares.end()) {
        shares.push_back(LeakShare{thread, 0, 0, 0});
      } else {
        std::swap(*same, shares.back());  // (the last one is tried first)
      }
    }
    LeakShare &l = shares.back();
    l.bytes += b.weight > 0 ? double(b.weight) : double(b.size);
    l.count += b.weight > 0 && b.size ? double(b.weight) / double(b.size) : 1.0;
    l.blocks++;
  });
}

void HeapModel::drop_leaks(uint32_t stack) {
  auto shares = leak_shares_.find(stack);
  if (shares != leak_shares_.end())
    for (const LeakShare &l : shares->second) {
      ThreadHeap &t = threads_[l.thread];
      t.live_bytes -= l.bytes;
      t.live_count -= l.count;
      t.live_blocks -= l.blocks;
    }
  StackStats &s = stacks_[stack];
  leaked_ -= s.live_bytes;
  leaked_blocks_ -= s.live_blocks;
  s.live_bytes = 0;
  s.live_blocks = 0;
  s.live_count = 0;
}

double time_of_event(const std::vector<HeapPoint> &points, uint32_t file, uint64_t events) {
  double e0 = 0, t0 = -1;
  for (const HeapPoint &p : points) {
    if (p.file != file || !p.timed) continue;
    const double t = double(p.time_ns) / 1e9;
    if (p.events >= events) {
      const double span = double(p.events) - e0, from = t0 < 0 ? 0 : t0;
      return span > 0 ? from + (t - from) * (double(events) - e0) / span : t;
    }
    e0 = double(p.events);
    t0 = t;
  }
  return t0;
}

double peak_time(const std::vector<HeapPoint> &points, const StreamHeap &h) {
  const double t = time_of_event(points, h.file, h.peak_events);
  return h.writer_peak && t >= 0 ? double(h.peak_ns) / 1e9 : t;
}

const std::vector<HeapPoint> &HeapModel::over_time() const {
  if (!totals_.points.empty()) return totals_.points;
  return timed_.points.empty() ? counted_.points : timed_.points;
}

}  // namespace prof
