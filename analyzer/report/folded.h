// Folded stacks for flame graphs (flamegraph.pl, speedscope, inferno): one
// line per stack, root first, frames ';'-separated, then a space and the
// count. Frames are function names (file and line would split a function's
// samples by line); guest frames are "@chunk:line".
//
// Invariants: the stacks are a tree of names (NameTree) with a count per
// node, so memory follows the distinct frames, never the depth of every
// stack; lines are written in the byte order of their text, walking the
// tree with one line buffer; counts are rounded to integers and lines with a
// count of 0 left out; ';' and line breaks inside names are replaced; a
// stack without frames is "[no stack]".
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "model/name_tree.h"
#include "model/profile.h"

namespace prof {

struct FoldedOptions {
  // Memory streams: a name of memory_metrics().
  std::string metric = "alloc-bytes";
  // CPU streams: the VM state as the root frame.
  bool by_vmstate = false;
  // Memory streams: the guest object type as the leaf frame ("[table]").
  bool by_type = false;
  // A frame repeated in a row (recursion) is one frame.
  bool collapse_recursion = false;
  // Of a profile with both (a run's memory and CPU streams), one domain only.
  enum class Domain : uint8_t { Both, Memory, Cpu } domain = Domain::Both;
};

// A memory metric: its option name, what its counts are, and a heading.
// `measured`: only LLVM MemProf profiles have it (HeapModel::add_measured).
struct MemoryMetric {
  const char *name;   // alloc-bytes, alloc-count, leaked-bytes, peak-bytes, access-count, ...
  const char *unit;   // bytes, allocations, accesses, ...
  const char *title;
  double (*value)(const StackStats &);
  bool measured = false;
};
const std::vector<MemoryMetric> &memory_metrics();

struct FoldedStacks {
  NameTree names;
  std::vector<double> counts;  // by node of `names`: the count of the stack ending there
  double count(uint32_t node) const { return node < counts.size() ? counts[node] : 0; }
  // For tooltips: by name id, "file:line" (the file's basename) of the first
  // frame seen with that name, "" unknown; by node, whether a frame of it
  // was inlined.
  std::vector<std::string> where;
  std::vector<bool> inlined;
};

// Adds the stacks of a profile; with `per_process` under a root frame
// "[pid N]" (or "[FILE]" for streams without a pid).
void add_folded_stacks(Profile &profile, const FoldedOptions &opt, bool per_process,
                       FoldedStacks &into);
FoldedStacks folded_stacks(const std::vector<Profile *> &profiles, const FoldedOptions &opt,
                           bool per_process);

// Calls line(text, count) for every stack with a count above 0, in the byte
// order of their lines (text as render_folded() writes it).
void for_each_folded(const FoldedStacks &stacks,
                     const std::function<void(const std::string &, double)> &line);
void render_folded(const FoldedStacks &stacks, std::ostream &out);
// The same as a JSON array of {"stack": text, "value": count}, counts not rounded.
void render_folded_json(const FoldedStacks &stacks, std::ostream &out);

}  // namespace prof
