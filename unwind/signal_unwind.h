// SignalUnwind: the host stack of a thread interrupted by a signal, captured
// in the handler from the signal's context, so the handler's own frames
// never show. Two back ends:
// - the rule walk (first): steps with the DWARF rules of unwind_rule.h
//   (found lock-free through _dl_find_object, cached per thread), reading
//   only the thread's own stack mapping, known from its registration. The
//   first frame's rule is the interrupted instruction's own, so prologues
//   and epilogues unwind right. Code that no table covers is stepped by the
//   guest VM when it is its JIT code (LuaJIT's traces, set_jit_step), else
//   by its frame pointer (V8's JIT code, assembly without CFI), and the
//   walk ends where that leads off the stack. Any other frame it cannot
//   step (a rule it does not read, a signal frame, a read off the stack)
//   sends the whole capture to libunwind.
// - libunwind, under the rule below.
//
// The rule that makes libunwind async-signal-safe (callers rely on it):
#pragma once

#include <cstdint>

#include "unwind_rule.h"

namespace prof {

// What one thread's handler keeps between samples (zero-initialised memory
// is empty; the thread's own handler alone uses it).
struct SignalWalkCache {
  static constexpr int kRuleSlots = 1024;
  // The thread's stack mapping: the walk reads only between the interrupted
  // sp and hi. lo moves down as the main thread's stack grows.
  uint64_t stack_lo, stack_hi;
  // The last mapping found not to be the stack (a coroutine's, an alternate
  // signal stack): samples there are walked within it without reading the
  // maps again.
  uint64_t other_lo, other_hi;
  UnwindRuleCache<kRuleSlots> rules;
};

class SignalUnwind {
 public:
  // Runs libunwind's one-time initialisation (it takes a lock), selects its
  // per-thread cache and registers the loaded objects. Not in signal context.
  static void init();
  // Registers objects loaded since the last call and empties the entries of
  // those unloaded. Not in signal context; the caller blocks the sampling
  // signal on its thread while this runs. Thread-safe.
  static void sync_tables();
  // On the thread itself, not in signal context: notes the stack it runs on.
  static void set_stack(SignalWalkCache *cache);
  // In a signal handler: fills ips[0..max) innermost first, starting with
  // the interrupted instruction of `ucontext`; returns the count (at least 1
  // when max > 0). Sets *stopped when the walk ended early (a frame-pointer
  // chain leading off the stack, code loaded after the last sync), and
  // *fell_back when the rule walk gave the capture to libunwind. Without
  // rule_walk_first, libunwind alone (the safe mode), which steps code no
  // registered table covers (JIT code) by its frame pointers only when the
  // cache knows the thread's stack.
  static int capture(void *ucontext, uint64_t *ips, int max, SignalWalkCache *cache,
                     bool rule_walk_first, bool *stopped, bool *fell_back);
  // In a signal handler that interrupted code entered at stack pointer
  // `entry_sp` (the agent, perhaps inside libunwind): the frames that
  // called into it, those whose stack pointer lies above entry_sp, into
  // ips[0..max) innermost first; returns the count. The rule walk alone
  // (libunwind may be what was interrupted): where it cannot step, those
  // found so far, with *stopped set.
  static int capture_callers(void *ucontext, uint64_t entry_sp, uint64_t *ips, int max,
                             SignalWalkCache *cache, bool *stopped);
  // In a signal handler that interrupted code called from `call` (its
  // return address, sp and rbp after the return): that frame and its
  // callers, by the rule walk alone, as capture_callers.
  static int capture_from_call(const CallSite &call, uint64_t *ips, int max, SignalWalkCache *cache,
                               bool *stopped);
  // How many objects could not be registered (no usable table, table full).
  static uint64_t unregistered_objects();
  // A guest VM's step through its JIT code (libprof.h, prof_guest_jit_step):
  // the rule walk asks it at code no table covers before stepping by the
  // frame pointer. Set once, before sampling reads it.
  using JitStep = int (*)(uint64_t pc, uint64_t sp, int covered, uint64_t *vm_pc, uint64_t *vm_sp);
  static void set_jit_step(JitStep step);
};

}  // namespace prof
