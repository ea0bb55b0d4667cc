// Memory by guest object type (the Julia memory profiler's view): what a
// VM's allocator said each block was for (format/ext.h object-type), summed
// over the memory model's stacks, as part of the summary.
//
// Invariants: one row per type met, in type-id order, then "untyped" for the
// blocks without one, so the rows add up to the memory totals; nothing (a
// null) when no stream had a type. Peak figures are each stream's own peak,
// summed as the peak heap is.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "model/profile.h"

namespace prof {

// [{"type", "alloc_bytes", "alloc_count", "peak_bytes", "peak_blocks",
//   "leaked_bytes", "leaked_blocks"}], or null.
nlohmann::json object_types_json(const Profile &profile);
void render_object_types(const nlohmann::json &types, std::ostream &out);

}  // namespace prof
