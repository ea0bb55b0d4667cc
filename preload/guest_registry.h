// GuestRegistry: the guest VM's backtracer and the guest symbols it published,
// shared by the allocation hooks and the CPU sampler.
//
// Invariants:
// - guest_backtrace() is async-signal-safe and lock-free: it reads one atomic
//   pointer to an immutable registration, so it may run in a signal handler
//   or inside an allocation hook.
// - Symbols form an append-only list that is never freed; each stream writer
//   keeps its own GuestSymbolCursor and emits each symbol once.
// - Publishing (prof_guest_symbol) takes a mutex and maps memory with mmap,
//   never malloc, so it records nothing as the application's.
#pragma once

#include <cstdint>

#include "libprof.h"
#include "symtab.h"

namespace prof {

// Frames innermost first; returns the count (0: no guest frames) and sets
// *vmstate (PROF_VMST_*, or -1 when no guest is registered).
int guest_backtrace(prof_guest_frame *frames, int max, int *vmstate);
// The same from a signal handler that interrupted the thread at ucontext,
// which the backtracer may read (prof_guest_signal_context).
int guest_backtrace_interrupted(prof_guest_frame *frames, int max, int *vmstate,
                                const void *ucontext);
bool guest_registered();

// A published symbol: kSymLfunc or kSymCfunc, its name NUL-terminated in
// memory that is never freed.
using GuestSymbol = SymbolView;

// How many symbols were published; symbol(i) for i below it is immutable.
uint64_t guest_symbol_count();
const GuestSymbol &guest_symbol(uint64_t index);

// Walks the symbols published since the previous call, oldest first.
class GuestSymbolCursor {
 public:
  template <class Fn>
  void drain(Fn &&emit) {
    const uint64_t end = guest_symbol_count();
    for (; next_ < end; next_++) emit(guest_symbol(next_));
  }

 private:
  uint64_t next_ = 0;
};

}  // namespace prof
