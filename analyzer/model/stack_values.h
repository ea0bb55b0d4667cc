// The stacks of a Profile with their figures, as nodes of its CallTree
// (whole frames: file, line, module, address), for the exporters that keep
// more than folded names: pprof and speedscope.
//
// Invariants: memory stacks come with five values, in this order:
//   alloc_objects/count, alloc_space/bytes   everything allocated
//   inuse_objects/count, inuse_space/bytes   still live at the end (leaks)
//   peak_space/bytes                         held at the heap's peak
// (estimates in sampled streams: inuse_objects scales the recorded live
// blocks by the stack's mean blocks per recorded block); CPU stacks with
// then, for LLVM MemProf profiles, access_count/count,
// access_density/accesses/byte/s, lifetime/milliseconds,
// lifetime_overlaps/count, cpu_migrations/count; CPU stacks with
// one, samples/count, and their VM state. Stacks with all values 0 are
// left out; mmap stacks are not memory stacks here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"

namespace prof {

struct ValueType {
  std::string type, unit;
};

struct StackValues {
  std::vector<ValueType> types;
  std::vector<uint32_t> nodes;    // the stacks, in profile.calls()
  std::vector<double> values;     // types.size() a stack, in the order of `types`
  std::vector<uint8_t> vmstates;  // CPU stacks: the VM state of each
  const double *values_of(size_t stack) const { return values.data() + stack * types.size(); }
};

// The memory stacks of a profile with memory streams, else its CPU stacks.
StackValues stack_values(Profile &profile);

}  // namespace prof
