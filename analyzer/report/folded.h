// Folded stacks for flame graphs (flamegraph.pl, speedscope, inferno): one
// line per stack, root first, frames ';'-separated, then a space and the
// count. Frames are function names (file and line would split a function's
// samples by line); guest frames are "@chunk:line".
//
// Invariants: lines are sorted by stack, counts rounded to integers and lines
// with a count of 0 left out; ';' and line breaks inside names are replaced.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "model/profile.h"

namespace prof {

struct FoldedOptions {
  // Memory streams: alloc-bytes, alloc-count, leaked-bytes or peak-bytes.
  std::string metric = "alloc-bytes";
  // CPU streams: the VM state as the root frame.
  bool by_vmstate = false;
};

// A memory metric: its option name, what its counts are, and a heading.
struct MemoryMetric {
  const char *name;   // alloc-bytes, alloc-count, leaked-bytes, peak-bytes
  const char *unit;   // bytes, allocations
  const char *title;
  double StackStats::*field;
};
const std::vector<MemoryMetric> &memory_metrics();

// Stack (root first, ';'-joined) -> count.
std::map<std::string, double> folded_stacks(Profile &profile, const FoldedOptions &opt);
// The stacks of profiles added up; with `per_process` each profile's under a
// root frame "[pid N]" (or "[FILE]" for streams without a pid).
std::map<std::string, double> folded_stacks(const std::vector<Profile *> &profiles,
                                            const FoldedOptions &opt, bool per_process);
void render_folded(const std::map<std::string, double> &stacks, std::ostream &out);

}  // namespace prof
