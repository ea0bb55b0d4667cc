// FunctionFigures: memory by function, as heaptrack_print merges it: per
// function (or per line), the bytes and calls allocated, the bytes leaked
// and the bytes at the peak, in the function itself (the innermost frame
// that is not the allocator's, Profile::node; in a stack with guest frames
// the innermost guest frame, the VM's frames above it allocating on its
// behalf) and anywhere on the stack (inclusive: once a stack, however often
// it recurs).
//
// Invariants: computed at the end from the per-stack figures (StackStats),
// never per event; memory follows the distinct functions (a figure set and
// a name each) and the call tree's frames (one id each), never the stacks:
// code no symbol names (an address no module covers, a module+0xoffset) is
// one row per module, "[unknown]" for no module, as heaptrack_print merges
// its unresolved frames; a Lua function is one row for all of its lines
// unless by line (frame_names.h function_name, Frame::label).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/profile.h"

namespace prof {

struct MemoryFigures {
  double alloc_bytes = 0, alloc_count = 0, leaked_bytes = 0, peak_bytes = 0;
};

struct FunctionFigures {
  std::string function;
  MemoryFigures self, total;
};

struct FunctionTables {
  // The `top` functions with the most bytes allocated in themselves, and
  // with the most with what they call; ties by name.
  std::vector<FunctionFigures> by_self, by_total;
};

FunctionTables memory_by_function(Profile &profile, bool by_line, size_t top);

}  // namespace prof
