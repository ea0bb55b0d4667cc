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
// Values are rounded to integers (estimates of sampled streams), and those
// beyond an int64 held at its largest.
//
// Writing: every sample is encoded and compressed as soon as it is made,
// then the tables (protobuf merges a message's fields in any order), so
// memory follows the tables, not the samples times their depth.
#pragma once

#include <ostream>
#include <vector>

#include "model/profile.h"

namespace prof {

// Writes the gzipped serialized profile of the stacks of `profiles` (all
// memory or all CPU).
void write_pprof(const std::vector<Profile *> &profiles, bool label_pid, std::ostream &out);

}  // namespace prof
