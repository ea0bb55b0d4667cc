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
//   never malloc, so it records nothing as the application's; from a
//   signal handler (prof_guest_symbol_from_signal) it only tries the mutex.
#pragma once

#include <atomic>
#include <cstdint>

#include "ext.h"
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
// The same for allocation hooks: through the guest's recaller when it has
// one, which sets *unchanged (libprof.h); else the backtracer, *unchanged 0.
// Returns where the *n frames lie: in room, or in the recaller's memory
// (prof_guest_stack_recaller), unchanged until the thread's next call.
const prof_guest_frame *guest_recall_backtrace(prof_guest_frame *room, int max, int *n,
                                               int *vmstate, int *unchanged);
bool guest_registered();
// Whether a guest walk of n frames stopped at its limit (PROF_GUEST_CUT_ADDR).
inline bool guest_stack_cut(const prof_guest_frame *frames, int n) {
  return n > 0 && frames[n - 1].type == PROF_FRAME_CFUNC &&
         frames[n - 1].addr == PROF_GUEST_CUT_ADDR;
}

// A published symbol: kSymLfunc, kSymCfunc or kGuestVmFunction (addr: the
// function's start, line: its size), its name NUL-terminated in memory that
// is never freed.
using GuestSymbol = SymbolView;
constexpr uint8_t kGuestVmFunction = 0x10;

// A published symbol as a stream writes it: a vm-function record (ext.h),
// else the stream's own symbol event, through put_symbol(out, g).
template <class Out, class PutSymbol>
void put_guest_symbol(Out &out, const GuestSymbol &g, PutSymbol put_symbol) {
  if (g.type == kGuestVmFunction)
    put_ext(out, ext::VmFunctionView{g.addr, g.line, g.name});
  else
    put_symbol(out, g);
}

// How many symbols were published; symbol(i) for i below it is immutable.
uint64_t guest_symbol_count();
const GuestSymbol &guest_symbol(uint64_t index);

// Walks the symbols published since the previous call, oldest first.
// Only one thread drains a cursor at a time; any may ask whether it is behind.
class GuestSymbolCursor {
 public:
  template <class Fn>
  void drain(Fn &&emit) {
    const uint64_t end = guest_symbol_count();
    for (uint64_t i = next_.load(std::memory_order_relaxed); i < end; i++) {
      emit(guest_symbol(i));
      next_.store(i + 1, std::memory_order_relaxed);
    }
  }
  // Whether symbols were published that drain() has not walked.
  bool behind() const { return next_.load(std::memory_order_relaxed) < guest_symbol_count(); }
  // Forgets what was walked (a forked child's new stream).
  void restart() { next_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> next_{0};
};

}  // namespace prof
