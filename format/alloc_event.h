// AllocEvent: one event-alloc, event-free or event-realloc of a memprof
// stream (the grammar is memprof.h's), as the agent writes it and readers
// return it; compact events (compact_events.h) are read back into it.
#pragma once

#include <cstdint>

#include "guest_loc.h"

namespace prof {

constexpr uint8_t kAeventSymtab = 0;
constexpr uint8_t kAeventAlloc = 1;
constexpr uint8_t kAeventFree = 2;
constexpr uint8_t kAeventRealloc = 3;
constexpr uint8_t kAeventMask = 0x03;
constexpr uint8_t kMemprofEpilogue = 0x80;

// An event-alloc, event-free or event-realloc: what the agent writes, and the
// fields MemprofReader returns for it. Only the fields of the event type are
// written (oaddr/osize: free and realloc; naddr/nsize: alloc and realloc).
struct AllocEvent {
  uint8_t aevent = kAeventAlloc;  // kAeventAlloc, kAeventFree or kAeventRealloc
  GuestLoc loc;
  bool has_stacks = false;  // extended only: write host_stack and guest_stack
  uint64_t host_stack = 0, guest_stack = 0;
  uint64_t oaddr = 0, osize = 0, naddr = 0, nsize = 0;
};

}  // namespace prof
