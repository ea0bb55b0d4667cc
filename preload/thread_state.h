// ThreadState: what each thread of the profiled program carries for the
// agent: the re-entrancy guard, the allocation-sampling countdown, and a
// lazily mapped scratch area for stacks (the unwinder's and the interner's
// memory of the thread's previous stack, and room to capture the next).
//
// Invariants: the TLS block is initial-exec (no allocation on first access,
// usable from the very first malloc); the scratch area comes from mmap and is
// unmapped by a thread-exit destructor. While `guard` is set, the thread's
// allocations are the agent's (or libunwind's) and are never recorded.
#pragma once

#include <cstdint>

#include "host_stack.h"
#include "libprof.h"
#include "memory/stack_interner.h"

namespace prof {

struct ThreadScratch {
  PathCache host_path;
  PathCache guest_path;
  prof_guest_frame guest[256];
  HostStackCache unwind;
};

struct ThreadState {
  bool guard;
  bool sampling_ready;
  int64_t countdown;  // bytes until the next sampled allocation
  uint64_t rng;
  ThreadScratch *scratch;
};

extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// The calling thread's scratch area, mapped on first use; nullptr if mmap fails.
ThreadScratch *thread_scratch();

// Sets the guard for a scope; nests.
class GuardScope {
 public:
  GuardScope() : was_(t_state.guard) { t_state.guard = true; }
  ~GuardScope() { t_state.guard = was_; }

 private:
  bool was_;
};

}  // namespace prof
