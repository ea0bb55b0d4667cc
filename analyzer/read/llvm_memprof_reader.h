// Reading an LLVM MemProf raw profile (format/llvm_memprof.h) opened as a
// stream: its call stacks become the stream's stack table, named through the
// profiled binary, and each allocation context goes to the caller with the
// stack it was recorded at.
//
// Invariants:
// - The binary is named by the user (--binary): a raw profile holds no
//   paths. In versions 3 and 4 its build-id must be among the profile's
//   segments; version 1 writes no build-ids, so there its executable
//   segment (file offset and length) must match exactly one segment. A
//   mismatch, a binary without a build-id, or none given when the profile
//   has contexts is refused with a one-line std::runtime_error. Frames
//   outside the binary are named by address.
// - One pass in file order. MIBs come before the stacks that name them, so
//   the contexts wait (one record each, duplicates of a stack merged) until
//   their stack is read; memory follows contexts and distinct frames, never
//   the file size. A MIB whose stack the complete profile never defines is
//   corruption at the MIB's offset; in a cut profile the contexts still
//   waiting go to the empty stack before the truncation is rethrown.
// - Stacks are stored root first as a prefix tree of (parent, pc) nodes,
//   so contexts sharing callers share nodes; the innermost pc, the
//   runtime's allocation interceptor, is left out.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "llvm_memprof.h"
#include "read/stream_context.h"

namespace prof {

// Reads the profile of `ctx` (ProfileFile::llvm_memprof()); `context(host,
// mib)` gets every context with its stack-table id (0: no stack).
void read_llvm_memprof(StreamContext &ctx, const std::string &binary,
                       const std::function<void(uint64_t host, const LlvmMemprofMib &)> &context);

}  // namespace prof
