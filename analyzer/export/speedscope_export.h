// The speedscope export: profiles as one speedscope file
// (https://www.speedscope.app/file-format-schema.json), which the speedscope
// app opens as it is.
//
// Layout:
// - shared.frames: one per (function, file), {"name", "file"}; the line is
//   left out, since it is the line of a call and would split a function;
// - one "sampled" profile per value type (stack_values.h) and per profile
//   given: memory alloc_objects, alloc_space, inuse_objects, inuse_space,
//   peak_space, CPU samples; named by the type, prefixed "pid N: " with
//   `name_pid`; unit "bytes" or "none"; samples root first, their weights
//   rounded to integers (zeros left out), endValue their sum;
// - activeProfileIndex: alloc_space for memory, else the first profile.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "model/profile.h"

namespace prof {

void write_speedscope(const std::vector<Profile *> &profiles, bool name_pid,
                      const std::string &name, std::ostream &out);

}  // namespace prof
