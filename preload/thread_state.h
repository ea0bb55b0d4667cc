// ThreadState: what each thread of the profiled program carries for the
// agent: the re-entrancy guard, the allocation-sampling countdown, its
// change of the live heap count, and a
// lazily mapped scratch area for stacks (the unwinder's and the interner's
// memory of the thread's previous stack, and room to capture the next).
//
// Invariants: the TLS block is initial-exec (no allocation on first access,
// usable from the very first malloc); the scratch area comes from mmap and is
// unmapped by a thread-exit destructor. While `guard` is set, the thread's
// allocations are the agent's (or libunwind's) and are never recorded, and
// the program's signal handlers wait (program_signals.h): they run as the
// outermost GuardScope ends. A guard whose frames were left by longjmp is
// found out (guard_abandoned()) the next time the thread enters the agent
// from a shallower frame.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstddef>

#include "host_stack.h"
#include "libprof.h"
#include "memory/stack_interner.h"

namespace prof {

struct ThreadScratch {
  PathCache host_path;
  PathCache guest_path;
  // The adapter's walk and capture that guest_path holds last (record_guest;
  // nullptr: another's).
  const void *guest_walk;
  uint64_t guest_walk_seq;
  prof_guest_frame guest[256];
  HostStackCache unwind;
};

struct ThreadState {
  // 0 outside the agent; inside, the stack pointer where the innermost
  // GuardScope began: the agent's frames from there on are below it.
  uintptr_t guard;
  // The program's call into the agent, where the outermost GuardScope was
  // given it (a recorded allocation): a CPU sample inside the agent walks
  // the program's stack from there when it cannot walk out (ip 0: unknown).
  CallSite entered_from;
  bool sampling_ready;
  uint8_t deferred;   // program signals held back while guarded (program_signals.h)
  uint8_t object_type;  // PROF_OBJECT_* the guest's allocator wrapper set (0: none)
  // The thread's id, read at its first recorded event (0: not yet; a forked
  // child's thread reads its own).
  uint32_t tid;
  int64_t countdown;  // bytes until the next sampled allocation
  int64_t heap_delta;  // live heap bytes not yet added in (memory/heap_total.h)
  uint64_t rng;
  ThreadScratch *scratch;
};

extern __thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// The calling thread's scratch area, mapped on first use; nullptr if mmap fails.
ThreadScratch *map_thread_scratch();
inline ThreadScratch *thread_scratch() {
  return __builtin_expect(t_state.scratch != nullptr, 1) ? t_state.scratch : map_thread_scratch();
}

// Delivers the program's signals held back while the thread was guarded.
void release_deferred_signals();

// The calling function's stack pointer.
inline uintptr_t stack_pointer() {
#if defined(__x86_64__)
  uintptr_t sp;
  asm("mov %%rsp, %0" : "=r"(sp));
  return sp;
#else
  return reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
#endif
}

// Keeps the thread's errno across a scope of the agent's own system calls:
// the code that called a hook, or that a signal interrupted, may read it.
class ErrnoKept {
 public:
  ErrnoKept() : saved_(errno) {}
  ~ErrnoKept() { errno = saved_; }
  ErrnoKept(const ErrnoKept &) = delete;
  ErrnoKept &operator=(const ErrnoKept &) = delete;

 private:
  int saved_;
};

// Sets the guard for a scope; nests.
class GuardScope {
 public:
  // (Inlined even on the paths an exception takes, so that no copy of the
  // scope has to live in memory.)
  __attribute__((always_inline)) GuardScope() : GuardScope(CallSite{}) {}
  __attribute__((always_inline)) explicit GuardScope(const CallSite &entered_from)
      : was_(t_state.guard) {
    if (!was_) t_state.entered_from = entered_from;
    t_state.guard = stack_pointer();
  }
  __attribute__((always_inline)) ~GuardScope() {
    t_state.guard = was_;
    if (__builtin_expect(t_state.deferred != 0, 0) && !was_) release_deferred_signals();
  }

 private:
  uintptr_t was_;
};

// Called with the guard set, from a hook or a signal handler: true when the
// guarded frames are gone (a longjmp out of a signal handler that had
// interrupted the agent left them): the caller's frame is above where the
// innermost GuardScope began, and not on an alternate signal stack. The guard is
// then cleared, and what the lost frames held is put right (the thread's
// ring reservation, its stack caches) and counted.
bool guard_abandoned();

}  // namespace prof
