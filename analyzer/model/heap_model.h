// HeapModel: the native view of memory streams, built in one pass: totals,
// peak heap and the stacks holding it at the peak, leaks by stack, temporary
// allocations, a size histogram, per-stack MemProf-style statistics (count,
// min/avg/max size and lifetime), heap over time split by its largest stacks
// and snapshots of its holders, and the mmap domain.
//
// Invariants:
// - Memory is proportional to the live blocks of the stream being read and to
//   unique stacks, never to events (series and snapshots are bounded).
// - Pairing: a free or realloc takes the OLDEST live block at its address
//   (LiveHeap); a pointer never seen allocated counts as an unknown free.
// - Every stream is its own process: peaks are found per stream, in stream
//   order, and the peak of several streams is the sum of theirs (their
//   timelines are not aligned). A stream's holders at its peak are exact in
//   O(1) per event: a stack's bytes at the latest peak are captured lazily,
//   the first time they change after it. The mmap domain has its own peak
//   and holders alike.
// - Heap over time by stack: each stream's kBands largest stacks (by their
//   bytes at its peak, then by the most they held at a kept point) and
//   their bytes at each of its kept points, replayed at its end from a
//   StackHistory (bounded per point, see there).
// - Lifetimes count events (allocations, reallocations and frees) of the
//   stream between a block's allocation and its free or reallocation.
// - Temporary allocation, heaptrack's rule exactly (a realloc being a free
//   of the old block, then an allocation): a release (free, or the old
//   block of a realloc) of a block of the same size and stack as the
//   allocation (or realloc's new block) that was the event just before it;
//   a free of an unknown pointer is no event.
// - Threads (event-thread records): each block keeps the thread that made
//   it; a thread's figures are the blocks it made (bytes, calls, those live
//   now and at its stream's peak, captured as stacks' are) and the frees it
//   made. Events of threads not chosen (set_thread) count nowhere: their
//   blocks stay in the live table only so that a free pairs right, and a
//   free of one by a chosen thread is no unknown free.
// - Sampled streams: every recorded block of size s stands for
//   s / (1 - exp(-s / mean)) bytes and that many bytes / s blocks (and
//   calls: estimated_calls()); sizes and lifetimes (min/max) describe the
//   recorded blocks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "llvm_memprof.h"
#include "model/live_heap.h"
#include "model/stack_history.h"

namespace prof {

// What an LLVM MemProf runtime measured of a stack's blocks, summed over the
// `records` (MIBs) merged into it.
struct Measures {
  uint64_t records = 0;
  double accesses = 0, lifetime_ms = 0, lifetime_overlaps = 0, cpu_migrations = 0;
  uint64_t min_accesses = UINT64_MAX, max_accesses = 0;
  uint64_t min_life_ms = UINT64_MAX, max_life_ms = 0;
};

// A stack's Measures, allocated only for the stacks that have them (so the
// stacks of libprof's streams do not pay for them); copies are deep.
class MeasuresSlot {
 public:
  MeasuresSlot() = default;
  MeasuresSlot(const MeasuresSlot &o) : p_(o.p_ ? std::make_unique<Measures>(*o.p_) : nullptr) {}
  MeasuresSlot &operator=(const MeasuresSlot &o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<Measures>(*o.p_) : nullptr;
    return *this;
  }
  MeasuresSlot(MeasuresSlot &&) noexcept = default;
  MeasuresSlot &operator=(MeasuresSlot &&) noexcept = default;

  const Measures *get() const { return p_.get(); }
  Measures &make() {
    if (!p_) p_ = std::make_unique<Measures>();
    return *p_;
  }

 private:
  std::unique_ptr<Measures> p_;
};

struct StackStats {
  double alloc_bytes = 0, alloc_count = 0;  // estimated (scaled when sampled)
  double live_bytes = 0, peak_bytes = 0;    // now / at its stream's peak
  uint64_t allocs = 0, frees = 0, temporary = 0, live_blocks = 0;  // recorded blocks
  double live_count = 0;  // the live blocks, estimated as alloc_count is (heap domain only)
  uint64_t peak_blocks = 0;  // recorded blocks at its stream's peak (heap domain only)
  uint64_t min_size = UINT64_MAX, max_size = 0;
  uint64_t min_life = UINT64_MAX, max_life = 0, sum_life = 0;
  uint64_t peak_epoch = 0;  // internal: the peak its peak_bytes belongs to
  MeasuresSlot measures;  // LLVM MemProf contexts only (add_measured)
};

// The measures of a stack, all 0 for stacks without.
const Measures &measures_of(const StackStats &s);

// Accesses per byte per second of a measured stack's mean lifetime (taken
// as at least 1 ms, as MemProf does): the hot and cold of heap-profile-guided
// optimisation; 0 for stacks without measures.
double access_density(const StackStats &s);
// Adds the MemProf measures of `from` to `to` (stacks merged by frames).
void merge_measures(StackStats &to, const StackStats &from);

// A thread's share of its stream's memory (HeapModel's invariants).
struct ThreadHeap {
  uint32_t file = 0;
  uint64_t tid = 0;     // 0: events of no known thread, or `others`
  bool others = false;  // the stream's threads past kMaxStreamThreads - 1, together
  double alloc_bytes = 0, alloc_count = 0;  // the blocks it made, estimated as a stack's
  double free_count = 0;                    // its frees (realloc's releases aside), estimated so
  double live_bytes = 0, live_count = 0;    // its blocks live now
  double peak_bytes = 0;                    // its blocks' bytes at its stream's peak
  uint64_t allocs = 0, frees = 0, live_blocks = 0;  // recorded
  uint64_t peak_epoch = 0;  // internal: the peak its peak_bytes belongs to
};

// A point of the heap over time: at a time mark (timed) or after a number of
// events of a stream without time marks.
struct HeapPoint {
  uint32_t file = 0;
  bool timed = false;
  uint64_t time_ns = 0, rss = 0, events = 0;
  double heap_bytes = 0;   // the writer's count where heap-total records give it, else stacks_bytes
  double stacks_bytes = 0;  // the live bytes of the stream's stacks (estimated when sampled)
  // The live bytes then of each of its stream's largest stacks (StreamHeap::top, in that order).
  std::vector<double> bands;
};

// A stream's heap at its peak (the first time it reached it) and at its end.
// With heap-total records (the writer's exact count, format/ext.h), the
// peak's time is known, and a sampled stream's peak is that count's, exact,
// instead of an estimate.
struct StreamHeap {
  uint32_t file = 0;
  uint64_t peak_events = 0, end_events = 0;  // the stream's events read by then
  double peak_bytes = 0, end_bytes = 0;
  bool counted = false;      // the stream had heap-total records
  double counted_peak = 0;   // their largest live-bytes (usable sizes)
  uint64_t peak_ns = 0;      // when it was reached (counted only)
  bool writer_peak = false;  // peak_bytes is counted_peak (a sampled stream's), reached at peak_ns
  // Its largest stacks, at most HeapModel::kBands, largest first: (stack id,
  // bytes at the peak); and the bytes of all its stacks at the peak.
  std::vector<std::pair<uint32_t, double>> top;
  double stacks_peak = 0;
};

// The time in seconds of event `events` of stream `file` (its peak, say)
// from its points of over_time(): between two time marks interpolated by
// events, after the last one that mark's time; -1 without time marks.
double time_of_event(const std::vector<HeapPoint> &points, uint32_t file, uint64_t events);

// The time in seconds of a stream's peak: the writer's where the peak is
// its count, else that of the first event that reached it; -1 without
// time marks.
double peak_time(const std::vector<HeapPoint> &points, const StreamHeap &h);

// The RFC's heap snapshot: the heap at a point, and its largest holders.
struct HeapSnapshot {
  HeapPoint at;
  std::vector<std::pair<uint32_t, double>> holders;  // (stack id, bytes), largest first
};

// XXX: aligned to a cache line: it is written on its own thread (Profile).
class alignas(64) HeapModel {
 public:
  static constexpr size_t kMaxPoints = 1024;
  static constexpr size_t kBands = 10;  // stacks of a stream drawn apart, as heaptrack's charts

  // Streams are read one at a time, between these two calls; stacks are
  // dense ids (StackIndex), and a stream's are `first_stack` and above.
  void begin_stream(uint32_t file, uint32_t first_stack);
  void end_stream();

  // The events from now on are of thread `tid`, the stream's thread `local`
  // (1 up to kMaxStreamThreads - 1, in the order its caller met them, the
  // last one for all threads past those; threads()' index first_thread() +
  // local), and count if `chosen`. Every stream starts at local 0 (tid 0,
  // no known thread), chosen.
  static constexpr uint32_t kMaxStreamThreads = 1 << 16;
  void set_thread(uint32_t local, uint64_t tid, bool chosen);
  size_t first_thread() const { return first_thread_; }
  const std::vector<ThreadHeap> &threads() const { return threads_; }

  // The stream began in a running process (an attached agent): a free of
  // an address it never allocated frees a block from before recording.
  void set_attached() { attached_ = true; }
  void set_sampling(uint64_t mean_bytes) {
    mean_ = mean_bytes;
    sampled_ = sampled_ || mean_bytes;
  }
  // A hint that an event at addr comes soon: readers that decode a few
  // events ahead hide the cache misses of the live-block table.
  void prefetch(uint64_t addr) const { heap_.prefetch(addr); }
  void alloc(uint32_t stack, uint64_t addr, uint64_t size);
  void free(uint64_t addr);
  void realloc(uint32_t stack, uint64_t oaddr, uint64_t naddr, uint64_t nsize);
  // An LLVM MemProf context: blocks counted, sized and measured by the
  // runtime, not seen one by one (no peak, no leaks, no frees).
  void add_measured(uint32_t stack, const LlvmMemprofMib &mib);
  void map(uint32_t stack, uint64_t addr, uint64_t len);
  void unmap(uint64_t addr, uint64_t len);
  // Heap over time: a time mark, or a point by event count.
  void time_mark(uint64_t time_ns, uint64_t rss);
  void event_mark();
  // The writer's exact count of live heap bytes at a time (heap-total).
  void heap_total(uint64_t time_ns, uint64_t live_bytes);
  // Records the heap now with its `top` largest holders (at most kMaxPoints
  // snapshots; later ones are counted in snapshots_dropped()).
  void snapshot(bool timed, uint64_t time_ns, size_t top);
  // After the last stream: leaves a stack's leaked blocks out of the leaks
  // (suppressions), its threads' live figures too; its other figures stay.
  void drop_leaks(uint32_t stack);

  // Statistics by stack id; a stack the heap (or mmap) events never named
  // has allocs == 0.
  const std::vector<StackStats> &stacks() const { return stacks_; }
  const std::vector<StackStats> &mmap_stacks() const { return mmap_stacks_; }
  double peak_bytes() const { return peaks_ + peak_; }
  double live_bytes() const { return leaked_ + live_; }
  uint64_t live_blocks() const { return leaked_blocks_ + heap_.size() - outside_blocks_; }
  // The calls recorded; in sampled streams only the sampled ones.
  uint64_t alloc_calls() const { return alloc_calls_; }
  uint64_t realloc_calls() const { return realloc_calls_; }
  uint64_t free_calls() const { return free_calls_; }
  // The calls made, estimated as blocks are (each recorded call stands for
  // as many as its block does); the recorded calls in streams not sampled.
  struct Calls {
    double allocs = 0, reallocs = 0, frees = 0;
  };
  const Calls &estimated_calls() const { return estimated_; }
  bool sampled() const { return sampled_; }
  double allocated_bytes() const { return allocated_; }
  // Sampled streams: the variance of allocated_bytes()'s estimate (the
  // Horvitz-Thompson estimator's, from the recorded blocks); 0 when exact.
  double allocated_variance() const { return allocated_variance_; }
  double allocated_blocks() const { return allocated_count_; }
  uint64_t unknown_frees() const { return unknown_frees_; }
  // Attached streams' frees (and reallocs) of blocks allocated before
  // recording began, apart from unknown frees.
  uint64_t frees_before_recording() const { return frees_before_recording_; }
  uint64_t temporary() const { return temporary_; }
  uint64_t measured_contexts() const { return measured_; }
  uint64_t sampling_mean() const { return mean_; }
  const std::array<uint64_t, 65> &size_histogram() const { return histogram_; }
  // The series by heap-total records if any stream had them (the heap as
  // the writer counted it, RSS from the time mark before each), else by
  // time marks, else by event counts.
  const std::vector<HeapPoint> &over_time() const;
  const std::vector<HeapSnapshot> &snapshots() const { return snapshots_; }
  // One per stream read, in order.
  const std::vector<StreamHeap> &stream_heaps() const { return stream_heaps_; }
  uint64_t snapshots_dropped() const { return snapshots_dropped_; }
  double mapped_bytes() const { return mapped_done_ + mapped_; }
  double mapped_peak() const { return mapped_peaks_ + mapped_peak_; }
  uint64_t maps() const { return maps_; }
  uint64_t unmaps() const { return unmaps_; }

 private:
  struct Block {
    uint64_t size;
    // XXX: the stream's event clock (2^47 events, a stream of petabytes)
    // shares a word with the thread: a block stays 24 bytes.
    uint64_t born : 47;
    uint64_t outside : 1;  // made by a thread not chosen: counts nowhere
    uint64_t thread : 16;  // the stream's thread that made it (set_thread's local)
    uint32_t stack;
    float weight;    // estimated bytes this block stands for; 0: its size
  };
  // A series kept under kMaxPoints by dropping every other point and then
  // taking one point in two, four, ...: bounded and deterministic.
  struct Series {
    std::vector<HeapPoint> points;
    uint64_t stride = 1, offered = 0;
    bool add(const HeapPoint &p);  // true when the point is kept
  };
  double scaled(uint64_t size) const;
  StackStats &stats(std::vector<StackStats> &table, uint32_t stack);
  // Both return the calls the block stands for (1 when not sampled).
  double create(uint32_t stack, uint64_t addr, uint64_t size);
  double retire(uint64_t addr);
  void change_live(StackStats &s, double delta);
  void change_thread_live(ThreadHeap &t, double delta) const;
  // An allocation of a thread not chosen: its block, kept for pairing only.
  void keep_outside(uint64_t addr, uint64_t size);
  // A sampled stream with the writer's count: its peak, and the stacks at
  // it, are the count's.
  bool writer_decides_peak() const { return counted_stream_ && mean_; }
  // Changes a stack's live bytes and its domain's (heap or mmap); true when
  // the domain reaches a new peak (a new epoch).
  static bool change_held(StackStats &s, double delta, double &live, double &peak,
                          uint64_t &epoch);
  void settle_peaks(std::vector<StackStats> &table, uint64_t epoch) const;
  void unmap_range(uint64_t addr, uint64_t len);
  HeapPoint point(bool timed, uint64_t time_ns, uint64_t rss) const;
  void add_point(Series &series, const HeapPoint &p);
  void choose_top(StreamHeap &h) const;
  void replay_bands(const StreamHeap &h);

  uint32_t file_ = 0, first_stack_ = 0;
  std::vector<ThreadHeap> threads_{1};
  size_t first_thread_ = 0;
  uint32_t thread_ = 0;  // this stream's, local
  bool chosen_ = true;
  uint64_t outside_blocks_ = 0;  // the live table's blocks of threads not chosen
  uint64_t mean_ = 0;
  uint64_t stream_events_ = 0, peak_events_ = 0;
  uint64_t alloc_calls_ = 0, realloc_calls_ = 0, free_calls_ = 0, unknown_frees_ = 0;
  uint64_t frees_before_recording_ = 0;
  bool attached_ = false;  // this stream
  Calls estimated_;
  bool sampled_ = false;
  double allocated_ = 0, allocated_count_ = 0;
  double live_ = 0, peak_ = 0;  // this stream
  double leaked_ = 0, peaks_ = 0;  // streams already read
  uint64_t leaked_blocks_ = 0;
  // The leaked blocks of each stack by the thread that made them (threads_'
  // index), kept at each stream's end for drop_leaks.
  struct LeakShare {
    size_t thread;
    double bytes, count;
    uint64_t blocks;
  };
  std::unordered_map<uint32_t, std::vector<LeakShare>> leak_shares_;
  void keep_leak_shares();
  uint64_t peak_epoch_ = 1;
  uint64_t temporary_ = 0;
  // The size and stack of the allocation that was the last event, if it was.
  uint64_t last_alloc_size_ = 0;
  uint32_t last_alloc_stack_ = 0;
  uint64_t measured_ = 0;
  bool last_alloc_valid_ = false;
  std::array<uint64_t, 65> histogram_{};
  LiveHeap<Block> heap_;
  std::vector<StackStats> stacks_;
  Series timed_, counted_, totals_;
  StackHistory history_;  // this stream's
  uint64_t rss_ = 0;  // this stream's latest time mark's
  bool counted_stream_ = false;
  double counted_peak_ = 0;
  uint64_t counted_peak_ns_ = 0;
  double allocated_variance_ = 0;
  std::vector<HeapSnapshot> snapshots_;
  std::vector<StreamHeap> stream_heaps_;
  uint64_t snapshots_dropped_ = 0;
  // The mmap domain: start -> (length, its stack in mmap_stacks_).
  std::map<uint64_t, std::pair<uint64_t, uint32_t>> mappings_;
  std::vector<StackStats> mmap_stacks_;
  double mapped_ = 0, mapped_peak_ = 0;       // this stream
  uint64_t mapped_epoch_ = 1;                  // as peak_epoch_, for the mmap domain
  double mapped_done_ = 0, mapped_peaks_ = 0;  // streams already read
  uint64_t maps_ = 0, unmaps_ = 0;
};

}  // namespace prof
