// ProfileDiff: a before/after comparison of two memory profiles (heaptrack
// -d): per stack, the change of bytes allocated, allocation calls, bytes
// leaked and bytes held at the peak, largest changes first.
//
// Invariants: stacks are matched by their frames' functions (host functions
// by name, Lua functions by the line they start at, chunks by basename), so
// a line added to a file moves no stack, or with by_line by their frames'
// labels (function, file, line), as merged streams are; a stack in
// one profile only compares with 0; stacks whose four figures are all
// unchanged are left out; ties are ordered by their frames.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "model/profile.h"

namespace prof {

struct DiffOptions {
  // alloc-bytes, alloc-count, leaked-bytes, peak-bytes, or a MemProf measure
  // but access-density (a ratio, not a sum)
  std::string sort = "alloc-bytes";
  size_t top = 20;                   // stacks shown
  size_t stack_depth = 12;           // frames per stack in text (0: all)
  bool by_line = false;              // stacks matched by file and line, not by function
};

// {"before": totals, "after": totals, "sort", "stacks": [ { figure: {"before",
//   "after", "delta"} ..., "stack": frames } ]}, totals = {"files",
//   "alloc_bytes", "alloc_count", "leaked_bytes", "peak_bytes"}.
nlohmann::json diff_json(Profile &before, Profile &after, const DiffOptions &opt);
void render_diff(const nlohmann::json &diff, const DiffOptions &opt, std::ostream &out);

}  // namespace prof
