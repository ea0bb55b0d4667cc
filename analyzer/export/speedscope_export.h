// The speedscope export: profiles as one speedscope file
// (https://www.speedscope.app/file-format-schema.json), which the speedscope
// app opens as it is.
//
// Layout:
// - shared.frames: one per (function, file), {"name", "file"}; the line is
//   left out, since it is the line of a call and would split a function;
// - one "evented" profile per value type (stack_values.h) and per profile
//   given: memory alloc_objects, alloc_space, inuse_objects, inuse_space,
//   peak_space, CPU samples; named by the type, prefixed "pid N: " with
//   `name_pid`; unit "bytes" or "none". Its events walk the call tree depth
//   first: a frame opens ("O") where the stacks through it start and closes
//   ("C") their total later, a stack's own value before its callees'; values
//   are the stacks' rounded to integers (zeros left out), the empty stack's
//   first, outside every frame; endValue is their sum. An evented profile
//   costs an event pair per call-tree node where a sampled one would repeat
//   every stack's frames.
// - activeProfileIndex: alloc_space for memory, else the first profile.
//
// Writing: the profiles as they are made, then the frames they named.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "model/profile.h"

namespace prof {

void write_speedscope(const std::vector<Profile *> &profiles, bool name_pid,
                      const std::string &name, std::ostream &out);

}  // namespace prof
