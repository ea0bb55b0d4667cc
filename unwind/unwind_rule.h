// UnwindRule: how to step from a frame to its caller at one code address,
// read from the DWARF call-frame information (.eh_frame_hdr, .eh_frame) that
// the loaded object carries in memory. It feeds the fast host-stack walk.
//
// Invariants: find_unwind_rule() allocates nothing and takes no lock
// (_dl_find_object is lock-free); it reads only the object's own unwind
// tables, which stay mapped while the object is loaded. Only the x86-64
// rules found at call sites are kept: the CFA as rsp or rbp plus an offset,
// or GCC's stack-realignment form *(rbp + off); rbp either unchanged, saved
// at CFA + off, or saved at rbp + off; the return address saved at CFA + off.
// Anything else (signal frames, other registers, other expressions) comes
// back as kUnsupported so the caller falls back to libunwind.
#pragma once

#include <cstdint>

namespace prof {

struct UnwindRule {
  enum Cfa : uint8_t {
    kUnsupported,  // no rule we can apply: use libunwind
    kOutermost,    // the return address is undefined: the stack ends here
    kRsp,          // CFA = rsp + cfa_off
    kRbp,          // CFA = rbp + cfa_off
    kRbpDeref,     // CFA = *(rbp + cfa_off)
  };
  enum Rbp : uint8_t {
    kSame,      // the caller's rbp is this frame's
    kAtCfa,     // the caller's rbp = *(CFA + rbp_off)
    kAtRbp,     // the caller's rbp = *(rbp + rbp_off)
  };
  Cfa cfa = kUnsupported;
  Rbp rbp = kSame;
  int16_t rbp_off = 0;
  int32_t cfa_off = 0;
  int32_t ra_off = 0;  // the return address is at CFA + ra_off
};

// The rule in force at `pc`. For a return address, pass it minus one: the
// call instruction's rule, which the return address may already be past.
UnwindRule find_unwind_rule(uint64_t pc);

}  // namespace prof
