// HostStack: capture of the calling thread's native stack with libunwind,
// the agent's own frames removed.
//
// Invariants: capture() neither allocates through malloc once warmed up (the
// agent's hooks guard re-entry anyway) nor takes locks of its own; it returns
// return addresses innermost first. Frames inside libprof.so are dropped so a
// stack begins at the program's call into the allocator.
#pragma once

#include <cstddef>
#include <cstdint>

namespace prof {

class HostStack {
 public:
  // Records which addresses are the agent's (call once, at start).
  static void init_self_range(const void *any_agent_address);
  // Fills ips[0..max) innermost first; returns the count.
  static int capture(uint64_t *ips, int max);
};

}  // namespace prof
