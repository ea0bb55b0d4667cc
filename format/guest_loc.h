// Guest locations: where a guest VM was when a memory event happened, as
// memprof's event-header source bits and `loc` fields say (memprof.h); also
// the location of an allocation site (ext.h).
//
// loc            := loc-lua | loc-c | loc-trace      (by source; none for 0, 1)
// loc-lua        := sym-addr line-no
// loc-c          := sym-addr
// loc-trace      := trace-no
#pragma once

#include <cstdint>

namespace prof {

constexpr uint8_t kAsourceNone = 0 << 2;
constexpr uint8_t kAsourceInternal = 1 << 2;
constexpr uint8_t kAsourceLfunc = 2 << 2;
constexpr uint8_t kAsourceCfunc = 3 << 2;
constexpr uint8_t kAsourceTrace = 4 << 2;
constexpr uint8_t kAsourceMask = 7 << 2;

// H: stacks follow the location (an event-header's, a site-head's).
constexpr uint8_t kMemprofStacks = 0x20;

// Where the guest VM was when the event happened (source + its loc fields).
struct GuestLoc {
  uint8_t source = kAsourceNone;
  uint64_t addr = 0;     // prototype (Lua) or function (C)
  uint64_t line = 0;     // Lua only
  uint64_t traceno = 0;  // trace only
};

template <class Out>
void put_guest_loc(Out &out, const GuestLoc &loc) {
  switch (loc.source) {
    case kAsourceLfunc:
      out.put_uleb(loc.addr);
      out.put_uleb(loc.line);
      break;
    case kAsourceCfunc:
      out.put_uleb(loc.addr);
      break;
    case kAsourceTrace:
      out.put_uleb(loc.traceno);
      break;
  }
}

// Reads the loc fields `source` calls for from any reader with uleb().
template <class In>
void read_guest_loc(In &in, uint8_t source, GuestLoc &loc) {
  loc = GuestLoc{};
  loc.source = source;
  switch (source) {
    case kAsourceLfunc:
      loc.addr = in.uleb();
      loc.line = in.uleb();
      break;
    case kAsourceCfunc:
      loc.addr = in.uleb();
      break;
    case kAsourceTrace:
      loc.traceno = in.uleb();
      break;
  }
}

}  // namespace prof
