// The pprof export: profiles as one gzipped perftools.profiles.Profile
// (pprof.proto), the file `go tool pprof` reads.
//
// Mapping of the model (stack_values.h):
// - sample types: memory alloc_objects, alloc_space, inuse_objects,
//   inuse_space, peak_space, all bytes and counts (default: alloc_space);
//   CPU samples/count, each sample labelled "vmstate";
// - one Mapping per module a stream loaded: its path, [base, base + size)
//   with file offset 0 (base is the load bias), its build-id in hex;
// - one Location per host code address (the return address - 1), in the
//   module that covered it, with the functions inlined there as extra Lines,
//   innermost first; a guest frame, or a host frame without a module, is a
//   Location of its own with no Mapping;
// - one Function per (name, file);
// - with `label_pid`, every sample carries a numeric "pid" label: its
//   profile's first stream's process (--per-process).
// Values are rounded to integers (estimates of sampled streams).
#pragma once

#include <string>
#include <vector>

#include "model/profile.h"

namespace prof {

// The gzipped serialized profile of the stacks of `profiles` (all memory or
// all CPU).
std::string pprof_profile(const std::vector<Profile *> &profiles, bool label_pid);

}  // namespace prof
