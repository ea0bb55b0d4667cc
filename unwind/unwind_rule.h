// UnwindRule: how to step from a frame to its caller at one code address,
// read from the DWARF call-frame information (.eh_frame_hdr, .eh_frame) that
// the loaded object carries in memory. It feeds the fast host-stack walk.
//
// Invariants: find_unwind_rule() allocates nothing and takes no lock
// (_dl_find_object is lock-free); it reads only the object's own unwind
// tables, which stay mapped while the object is loaded. Only the x86-64
// rules found at call sites are kept: the CFA as rsp or rbp plus an offset,
// or a word saved at rsp or rbp plus an offset, plus a constant (GCC's
// stack realignment, OpenSSL's assembly); rbp either unchanged, saved at
// CFA + off, or saved at rbp + off; the return address saved at CFA + off.
// Code that no table covers (JIT code, assembly without CFI) comes back as
// kNoTable: the caller may step it by its frame pointer. Anything else
// (signal frames, other registers, other expressions) comes back as
// kUnsupported so the caller falls back to libunwind.
#pragma once

#include <cstdint>
#include <cstring>

namespace prof {

struct UnwindRule {
  enum Cfa : uint8_t {
    kUnsupported,  // no rule we can apply: use libunwind
    kNoTable,      // no unwind table covers the address
    kOutermost,    // the return address is undefined: the stack ends here
    kRsp,          // CFA = rsp + cfa_off
    kRbp,          // CFA = rbp + cfa_off
    kRbpDeref,     // CFA = *(rbp + cfa_off) + cfa_add
    kRspDeref,     // CFA = *(rsp + cfa_off) + cfa_add
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
  int32_t cfa_add = 0;
  int32_t ra_off = 0;  // the return address is at CFA + ra_off
};

// The frame-pointer convention (push rbp; mov rsp, rbp), which JIT code
// such as V8's keeps: the caller's rbp at rbp, the return address above it.
constexpr UnwindRule kFramePointerRule{UnwindRule::kRbp, UnwindRule::kAtCfa, -16, 16, 0, -8};

// The rule in force at `pc`. For a return address, pass it minus one: the
// call instruction's rule, which the return address may already be past.
UnwindRule find_unwind_rule(uint64_t pc);

// The code range [*begin, *end) of the function containing pc, as its FDE
// states it (a part split off by the compiler, such as foo.cold, has its
// own); false when no loaded object's table covers pc.
bool function_extent(uint64_t pc, uint64_t *begin, uint64_t *end);

// Code was unloaded: every cached rule is stale. Caches compare this
// generation with the one they were filled under.
void forget_unwind_rules();
uint64_t unwind_rules_generation();

// One thread's rules by lookup pc; no lock (only its thread uses it),
// zero-initialised memory is an empty cache. It starts at kFirstSlots and
// doubles, up to kSlots, once it has replaced half as many rules as it
// holds: a short process's few hundred rules then lie in a few pages, where
// the whole table's hash spread them over every page of it (a page fault
// each, much of a short process's start).
template <int kSlots>
struct UnwindRuleCache {
  static constexpr uint32_t kFirstSlots = kSlots < 512 ? kSlots : 512;
  struct Slot {
    uint64_t pc;  // 0: empty
    UnwindRule rule;
  };
  uint64_t generation;
  uint32_t doublings;  // it holds kFirstSlots << doublings slots
  uint32_t replaced;   // rules replaced at this size
  Slot slots[kSlots];

  size_t size() const { return size_t(kFirstSlots) << doublings; }
  // Empties the cache if code was unloaded since it was filled.
  void check_generation() {
    const uint64_t now = unwind_rules_generation();
    if (generation == now) return;
    for (size_t i = 0; i < size(); i++) slots[i].pc = 0;
    generation = now;
  }
  const UnwindRule &at(uint64_t pc) {
    Slot &slot = slots[(pc ^ pc >> 12) & (size() - 1)];
    if (slot.pc != pc) {
      // (Slots past the old size were never used: growing clears nothing.)
      if (slot.pc && ++replaced > size() / 2 && size() < size_t(kSlots)) doublings++, replaced = 0;
      slot.rule = find_unwind_rule(pc);
      slot.pc = pc;
    }
    return slot.rule;
  }
};

// A frame's state as the walk needs it: where it executes, its rsp and rbp.
// For a call site: the caller's state at the return address.
struct CallSite {
  uint64_t ip, sp, rbp;
};

// The stack words a step read (0: none).
struct RuleReads {
  uint64_t ra_at, rbp_at, cfa_at;
};

// The 8-byte word at addr (a stack slot; any alignment).
inline uint64_t load_word(uint64_t addr) {
  uint64_t v;
  memcpy(&v, reinterpret_cast<const void *>(addr), sizeof v);
  return v;
}

// Steps `at` to its caller's state with `r`, the rule at at.ip, reading only
// words inside [lo, hi) and noting them in `reads`. Returns 1 stepped, 0 the
// stack ends at this frame, -1 cannot tell (no rule, a read outside).
inline int apply_unwind_rule(const UnwindRule &r, CallSite &at, uint64_t lo, uint64_t hi,
                             RuleReads &reads) {
  auto inside = [lo, hi](uint64_t addr) { return addr >= lo && addr <= hi - 8; };
  reads.ra_at = reads.rbp_at = reads.cfa_at = 0;
  uint64_t cfa;
  switch (r.cfa) {
    case UnwindRule::kOutermost: return 0;
    case UnwindRule::kRsp: cfa = at.sp + uint64_t(int64_t(r.cfa_off)); break;
    case UnwindRule::kRbp: cfa = at.rbp + uint64_t(int64_t(r.cfa_off)); break;
    case UnwindRule::kRbpDeref:
    case UnwindRule::kRspDeref:
      reads.cfa_at = (r.cfa == UnwindRule::kRbpDeref ? at.rbp : at.sp) + uint64_t(int64_t(r.cfa_off));
      if (!inside(reads.cfa_at)) return -1;
      cfa = load_word(reads.cfa_at) + uint64_t(int64_t(r.cfa_add));
      break;
    default: return -1;
  }
  if (cfa <= at.sp) return -1;  // a caller's frame is always above its callee's
  reads.ra_at = cfa + uint64_t(int64_t(r.ra_off));
  if (!inside(reads.ra_at)) return -1;
  if (r.rbp != UnwindRule::kSame) {
    reads.rbp_at = (r.rbp == UnwindRule::kAtCfa ? cfa : at.rbp) + uint64_t(int64_t(r.rbp_off));
    if (!inside(reads.rbp_at)) return -1;
    at.rbp = load_word(reads.rbp_at);
  }
  at.ip = load_word(reads.ra_at);
  at.sp = cfa;
  return at.ip != 0;
}

}  // namespace prof
