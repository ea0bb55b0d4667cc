// SignalUnwind: the host stack of a thread interrupted by a signal, captured
// in the handler from the signal's context with libunwind, so the handler's
// own frames never show.
//
// The rule that makes it async-signal-safe (callers rely on it):
// - libunwind looks up unwind info through dl_iterate_phdr, which takes the
//   loader lock that the interrupted code may hold (or be half-way through
//   taking); that is the known deadlock. So the objects' .eh_frame_hdr search
//   tables are registered with libunwind's dynamic-info list ahead of time,
//   outside signal context (sync_tables), and capture() steps past a frame
//   only when its address lies in a registered table and an FDE there
//   covers it. libunwind then always finds the info in the registered table
//   and never calls dl_iterate_phdr. The check itself uses _dl_find_object,
//   which is lock-free. A stack ends at the first frame that fails it.
// - libunwind keeps a per-thread cache: capture() must not run on a thread
//   interrupted inside libunwind (the agent's own unwinding). The caller
//   knows that (its guard) and must not call capture() then.
// - No malloc, no lock, no stdio in capture(). Registered tables are never
//   freed; an unloaded object's entry is emptied, and libunwind's cache
//   flushed, before its address range can describe another object.
#pragma once

#include <cstdint>

namespace prof {

class SignalUnwind {
 public:
  // Runs libunwind's one-time initialisation (it takes a lock), selects its
  // per-thread cache and registers the loaded objects. Not in signal context.
  static void init();
  // Registers objects loaded since the last call and empties the entries of
  // those unloaded. Not in signal context; the caller blocks the sampling
  // signal on its thread while this runs. Thread-safe.
  static void sync_tables();
  // In a signal handler: fills ips[0..max) innermost first, starting with
  // the interrupted instruction of `ucontext`; returns the count (at least 1
  // when max > 0). Sets *stopped when the walk ended early at a frame no
  // registered table covers (code loaded after the last sync, JIT code).
  static int capture(void *ucontext, uint64_t *ips, int max, bool *stopped);
  // How many objects could not be registered (no usable table, table full).
  static uint64_t unregistered_objects();
};

}  // namespace prof
