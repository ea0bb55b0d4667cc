// The heap over time of each process split by its largest stacks, as the
// heap chart draws it (heaptrack's "consumed" view): the points of
// HeapModel::over_time(), the exact peak inserted at the first event that
// reached it, each point's heap shared among the stream's StreamHeap::top
// stacks in proportion to their live bytes, and the rest as "other".
//
// Invariants: at every point the bands add up to the point's heap (scaled
// shares to within rounding, under a byte). The peak's point is at
// peak_time() (heap_model.h), as `summary` gives it; a sampled stream's
// writer's peak takes the stacks of the point after it. Where
// the heap is the stacks' own sum (no heap-total records) a band is its
// stack's live bytes; where it is the writer's count (usable sizes, or the
// exact heap of a sampled stream) the stacks' bytes (requested, or
// estimated) are scaled to it. A stack holding under 1/256 of the peak so
// far counts in "other" at that point (StackHistory).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/profile.h"

namespace prof {

struct HeapBand {
  // Its innermost frame (allocator frames folded), with as many callers
  // (" < CALLER") as tell it from the other bands'; "other stacks".
  std::string label;
  std::string frames;  // every frame, innermost first, one a line; "" for other
  std::vector<double> bytes;  // at each point of its ProcessHeap
};

struct ProcessHeap {
  uint64_t pid = 0;
  bool timed = false;  // x in seconds since the process started, else events read
  std::vector<double> x, total;  // the points, in order, from (0, 0)
  size_t peak = 0;               // the peak's point
  uint64_t peak_events = 0;      // the first event that reached it
  std::vector<HeapBand> bands;   // largest first; "other stacks" last, if it ever holds a byte
  // (x, bytes) where a time mark gave the RSS (at it, or at a heap-total
  // record after it), timed only.
  std::vector<std::pair<double, double>> rss;
  const std::vector<std::pair<uint64_t, std::string>> *markers = nullptr;  // (ns, label)
};

// The legend's label of each stack (outermost frame first, as
// Profile::frames gives it): its innermost named frame, then as many of its
// named callers (" < caller") as tell it from the others', up to 4; where
// that still reads as another's label (stacks apart in stripped code only),
// the frames where they part (", via lib.so+0x1f0"), as long as some do.
std::vector<std::string> band_labels(const std::vector<std::vector<Frame>> &stacks);

// One per memory stream, in the order read.
std::vector<ProcessHeap> heap_over_time(const std::vector<Profile *> &profiles);

}  // namespace prof
