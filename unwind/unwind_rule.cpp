#include "unwind_rule.h"

#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <dwarf.h>  // DWARF's names (DW_CFA_*, DW_OP_*, DW_EH_PE_*), from elfutils

namespace prof {
namespace {

constexpr unsigned kRegRbp = 6, kRegRsp = 7;  // DWARF's x86-64 register numbers
// A CFA instruction: DW_CFA_advance_loc, _offset and _restore keep their
// operand in the low bits; DW_CFA_extended is any other.
constexpr uint8_t kCfaPrimary = 0xc0, kCfaOperand = 0x3f;
// A DW_EH_PE encoding: how the value is stored, and what it is relative to.
constexpr uint8_t kPeFormat = 0x0f, kPeApply = 0x70;
constexpr uint32_t kDwarf64Length = 0xffffffff;  // a 64-bit length follows (not in .eh_frame)

// A bounded reader over trusted-but-checked DWARF bytes.
struct Cursor {
  const uint8_t *p, *end;
  bool ok = true;

  bool need(size_t n) {
    if (size_t(end - p) < n) ok = false;
    return ok;
  }
  template <class T>
  T fixed() {
    T v{};
    if (need(sizeof v)) memcpy(&v, p, sizeof v), p += sizeof v;
    return v;
  }
  uint64_t uleb() {
    uint64_t v = 0;
    for (unsigned shift = 0; need(1); shift += 7) {
      const uint8_t b = *p++;
      if (shift < 64) v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    return 0;
  }
  int64_t sleb() {
    uint64_t v = 0;
    unsigned shift = 0;
    for (; need(1); ) {
      const uint8_t b = *p++;
      if (shift < 64) v |= uint64_t(b & 0x7f) << shift;
      shift += 7;
      if (!(b & 0x80)) {
        if (shift < 64 && (b & 0x40)) v |= ~uint64_t(0) << shift;
        return int64_t(v);
      }
    }
    return 0;
  }
  // A DW_EH_PE-encoded pointer; `datarel` is the base of DW_EH_PE_datarel.
  // Indirect pointers are returned undereferenced (only skipped here).
  uint64_t encoded(uint8_t enc, uint64_t datarel = 0) {
    if (enc == DW_EH_PE_omit) return 0;
    const uint64_t here = uint64_t(p);
    uint64_t v;
    switch (enc & kPeFormat) {
      case DW_EH_PE_absptr: case DW_EH_PE_udata8: v = fixed<uint64_t>(); break;
      case DW_EH_PE_uleb128: v = uleb(); break;
      case DW_EH_PE_udata2: v = fixed<uint16_t>(); break;
      case DW_EH_PE_udata4: v = fixed<uint32_t>(); break;
      case DW_EH_PE_sleb128: v = uint64_t(sleb()); break;
      case DW_EH_PE_sdata2: v = uint64_t(int64_t(fixed<int16_t>())); break;
      case DW_EH_PE_sdata4: v = uint64_t(int64_t(fixed<int32_t>())); break;
      case DW_EH_PE_sdata8: v = uint64_t(fixed<int64_t>()); break;
      default: ok = false; return 0;
    }
    switch (enc & kPeApply) {
      case DW_EH_PE_absptr: break;
      case DW_EH_PE_pcrel: v += here; break;
      case DW_EH_PE_datarel: v += datarel; break;
      default: ok = false;
    }
    return v;
  }
};

struct RegRule {
  enum Kind : uint8_t { kSame, kUndefined, kOffset, kAtRbp, kOther } kind = kSame;
  int64_t off = 0;
};

struct CfaState {
  unsigned cfa_reg = kRegRsp;
  int64_t cfa_off = 8;
  bool cfa_deref = false;      // CFA = *(cfa_reg + cfa_off) + cfa_add
  int64_t cfa_add = 0;
  bool cfa_other = false;      // an expression we do not evaluate
  RegRule rbp, ra;
};

struct Cie {
  uint64_t code_align = 1;
  int64_t data_align = -8;
  unsigned ra_reg = 16;
  uint8_t fde_enc = 0;
  bool has_aug_data = false;
  bool signal_frame = false;
  const uint8_t *instr = nullptr, *instr_end = nullptr;
};

bool parse_cie(const uint8_t *at, Cie *cie) {
  Cursor c{at, at + 8};
  const uint32_t len = c.fixed<uint32_t>();
  if (!c.ok || len == 0 || len == kDwarf64Length) return false;
  c.end = c.p + len;
  if (c.fixed<uint32_t>() != 0) return false;  // a CIE's id is 0 in .eh_frame
  const uint8_t version = c.fixed<uint8_t>();
  if (version != 1 && version != 3) return false;
  const char *aug = reinterpret_cast<const char *>(c.p);
  const size_t aug_len = strnlen(aug, size_t(c.end - c.p));
  c.p += aug_len + 1;
  cie->code_align = c.uleb();
  cie->data_align = c.sleb();
  cie->ra_reg = version == 1 ? c.fixed<uint8_t>() : unsigned(c.uleb());
  const uint8_t *aug_end = nullptr;  // where the 'z' augmentation data ends
  for (size_t i = 0; i < aug_len && c.ok; i++) {
    switch (aug[i]) {
      case 'z': {
        if (i != 0) return false;
        const uint64_t n = c.uleb();
        aug_end = c.p + n;
        break;
      }
      case 'R': cie->fde_enc = c.fixed<uint8_t>(); break;
      case 'L': c.fixed<uint8_t>(); break;
      case 'P': c.encoded(c.fixed<uint8_t>()); break;
      case 'S': cie->signal_frame = true; break;
      default: return false;  // an augmentation we cannot skip safely
    }
  }
  // Without 'z' only an empty augmentation has a known length.
  if (!c.ok || (aug_len > 0 && !aug_end)) return false;
  cie->has_aug_data = aug_end != nullptr;
  cie->instr = aug_end ? aug_end : c.p;
  cie->instr_end = c.end;
  return cie->instr <= c.end;
}

// A DWARF expression of the single form DW_OP_breg6 <off>; sets *off.
bool rbp_plus(Cursor &block, int64_t *off) {
  if (block.fixed<uint8_t>() != DW_OP_breg6) return false;
  *off = block.sleb();
  return block.ok;
}

// Evaluates a DW_CFA_def_cfa_expression at `pc` into *st when it comes to
// rsp or rbp plus a constant, or *(rsp or rbp + constant) + constant (GCC's
// stack realignment, OpenSSL's assembly); else marks the CFA as one we do
// not evaluate. The PLT's expression, rsp + 8 + ((rip & 15) >= 11) * 8, is
// of the first kind.
void cfa_expression(Cursor block, uint64_t pc, CfaState *st) {
  struct Value {
    unsigned reg;  // kRegRsp, kRegRbp, or kNoReg: a constant
    int64_t off;
    bool deref;
    int64_t add;  // after the deref
  };
  constexpr unsigned kNoReg = ~0u;
  constexpr int kDepth = 8;
  Value stack[kDepth];
  int n = 0;
  bool ok = true;
  auto constant = [](const Value &v) { return v.reg == kNoReg && !v.deref; };
  auto binary = [&](auto fn) {
    if (n < 2 || !constant(stack[n - 1]) || !constant(stack[n - 2])) return false;
    stack[n - 2].off = fn(stack[n - 2].off, stack[n - 1].off);
    n--;
    return true;
  };
  while (ok && block.p < block.end) {
    const uint8_t op = block.fixed<uint8_t>();
    if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
      ok = n < kDepth;
      if (ok) stack[n++] = Value{kNoReg, op - DW_OP_lit0, false, 0};
      continue;
    }
    switch (op) {
      case DW_OP_breg6:     // rbp
      case DW_OP_breg7:     // rsp
      case DW_OP_breg16: {  // rip
        const int64_t off = block.sleb();
        ok = n < kDepth;
        if (ok && op == DW_OP_breg16) stack[n++] = Value{kNoReg, int64_t(pc) + off, false, 0};
        else if (ok) stack[n++] = Value{op == DW_OP_breg6 ? kRegRbp : kRegRsp, off, false, 0};
        break;
      }
      case DW_OP_deref:
        ok = n > 0 && stack[n - 1].reg != kNoReg && !stack[n - 1].deref;
        if (ok) stack[n - 1].deref = true;
        break;
      case DW_OP_plus_uconst: {
        const int64_t add = int64_t(block.uleb());
        ok = n > 0;
        if (ok) (stack[n - 1].deref ? stack[n - 1].add : stack[n - 1].off) += add;
        break;
      }
      case DW_OP_plus:  // a register and a constant at most
        ok = n >= 2 && !stack[n - 1].deref && !stack[n - 2].deref &&
             (stack[n - 1].reg == kNoReg || stack[n - 2].reg == kNoReg);
        if (ok) {
          if (stack[n - 2].reg == kNoReg) stack[n - 2].reg = stack[n - 1].reg;
          stack[n - 2].off += stack[n - 1].off;
          n--;
        }
        break;
      case DW_OP_and: ok = binary([](int64_t a, int64_t b) { return a & b; }); break;
      case DW_OP_ge: ok = binary([](int64_t a, int64_t b) { return int64_t(a >= b); }); break;
      case DW_OP_shl:
        ok = binary([](int64_t a, int64_t b) { return b < 64 ? int64_t(uint64_t(a) << b) : 0; });
        break;
      default: ok = false;
    }
  }
  const Value &v = stack[n > 0 ? n - 1 : 0];
  st->cfa_deref = st->cfa_other = false;
  if (ok && block.ok && n == 1 && v.reg != kNoReg) {
    st->cfa_reg = v.reg;
    st->cfa_off = v.off;
    st->cfa_deref = v.deref;
    st->cfa_add = v.add;
  } else {
    st->cfa_other = true;
  }
}

// Runs CFA instructions [c.p, c.end) from `loc` while the location is at or
// below `pc`. `initial` is the CIE's state (DW_CFA_restore); false when an
// instruction is one we cannot represent.
bool run_cfa_program(Cursor c, const Cie &cie, uint64_t loc, uint64_t pc, const CfaState &initial,
                     CfaState *st) {
  // (Compilers nest DW_CFA_remember_state once or twice: a deeper program
  // is refused. Small, for the handlers on small alternate stacks.)
  constexpr int kStackMax = 4;
  CfaState saved[kStackMax];
  int depth = 0;
  auto rule_of = [&](uint64_t reg) -> RegRule * {
    if (reg == kRegRbp) return &st->rbp;
    if (reg == cie.ra_reg) return &st->ra;
    return nullptr;  // registers the walk does not need
  };
  auto set = [&](uint64_t reg, RegRule::Kind kind, int64_t off) {
    if (RegRule *r = rule_of(reg)) *r = RegRule{kind, off};
  };
  auto restore = [&](uint64_t reg) {
    if (reg == kRegRbp) st->rbp = initial.rbp;
    if (reg == cie.ra_reg) st->ra = initial.ra;
  };
  while (c.p < c.end && c.ok) {
    const uint8_t op = c.fixed<uint8_t>();
    const uint8_t operand = op & kCfaOperand;
    uint64_t advance = 0;
    switch (op & kCfaPrimary) {
      case DW_CFA_advance_loc: advance = operand; break;
      case DW_CFA_offset: set(operand, RegRule::kOffset, int64_t(c.uleb()) * cie.data_align); continue;
      case DW_CFA_restore: restore(operand); continue;
      case DW_CFA_extended:
        switch (op) {
          case DW_CFA_nop: break;
          case DW_CFA_set_loc: {
            const uint64_t to = c.encoded(cie.fde_enc);
            if (to > pc) return c.ok;
            loc = to;
            break;
          }
          case DW_CFA_advance_loc1: advance = c.fixed<uint8_t>(); break;
          case DW_CFA_advance_loc2: advance = c.fixed<uint16_t>(); break;
          case DW_CFA_advance_loc4: advance = c.fixed<uint32_t>(); break;
          case DW_CFA_offset_extended: {
            const uint64_t r = c.uleb();
            set(r, RegRule::kOffset, int64_t(c.uleb()) * cie.data_align);
            break;
          }
          case DW_CFA_restore_extended: restore(c.uleb()); break;
          case DW_CFA_undefined: set(c.uleb(), RegRule::kUndefined, 0); break;
          case DW_CFA_same_value: set(c.uleb(), RegRule::kSame, 0); break;
          case DW_CFA_register: {
            const uint64_t r = c.uleb();
            c.uleb();
            set(r, RegRule::kOther, 0);
            break;
          }
          case DW_CFA_remember_state:
            if (depth == kStackMax) return false;
            saved[depth++] = *st;
            break;
          case DW_CFA_restore_state:
            if (depth == 0) return false;
            *st = saved[--depth];
            break;
          case DW_CFA_def_cfa:
            st->cfa_reg = unsigned(c.uleb());
            st->cfa_off = int64_t(c.uleb());
            st->cfa_deref = st->cfa_other = false;
            break;
          case DW_CFA_def_cfa_register:
            st->cfa_reg = unsigned(c.uleb());
            st->cfa_deref = st->cfa_other = false;
            break;
          case DW_CFA_def_cfa_offset: st->cfa_off = int64_t(c.uleb()); break;
          case DW_CFA_def_cfa_expression: {
            const uint64_t len = c.uleb();
            if (!c.need(len)) return false;
            cfa_expression(Cursor{c.p, c.p + len}, pc, st);
            c.p += len;
            break;
          }
          case DW_CFA_expression: {  // only rbp saved at rbp + off
            const uint64_t r = c.uleb(), len = c.uleb();
            if (!c.need(len)) return false;
            Cursor block{c.p, c.p + len};
            c.p += len;
            int64_t off;
            if (rbp_plus(block, &off) && block.p == block.end)
              set(r, RegRule::kAtRbp, off);
            else
              set(r, RegRule::kOther, 0);
            break;
          }
          case DW_CFA_offset_extended_sf: {
            const uint64_t r = c.uleb();
            set(r, RegRule::kOffset, c.sleb() * cie.data_align);
            break;
          }
          case DW_CFA_def_cfa_sf:
            st->cfa_reg = unsigned(c.uleb());
            st->cfa_off = c.sleb() * cie.data_align;
            st->cfa_deref = st->cfa_other = false;
            break;
          case DW_CFA_def_cfa_offset_sf: st->cfa_off = c.sleb() * cie.data_align; break;
          case DW_CFA_val_offset: {
            const uint64_t r = c.uleb();
            c.uleb();
            set(r, RegRule::kOther, 0);
            break;
          }
          case DW_CFA_val_offset_sf: {
            const uint64_t r = c.uleb();
            c.sleb();
            set(r, RegRule::kOther, 0);
            break;
          }
          case DW_CFA_val_expression: {
            const uint64_t r = c.uleb(), len = c.uleb();
            if (!c.need(len)) return false;
            c.p += len;
            set(r, RegRule::kOther, 0);
            break;
          }
          case DW_CFA_GNU_args_size: c.uleb(); break;
          case DW_CFA_GNU_negative_offset_extended: {
            const uint64_t r = c.uleb();
            set(r, RegRule::kOffset, -int64_t(c.uleb()) * cie.data_align);
            break;
          }
          default: return false;
        }
        break;
    }
    if (advance) {
      loc += advance * cie.code_align;
      if (loc > pc) return c.ok;
    }
  }
  return c.ok;
}

// The FDE that may cover pc (the caller checks its range), found through
// the object's .eh_frame_hdr table; *no_table when no table has any entry
// for pc (code outside any object, or before the table's first entry).
const uint8_t *find_fde(uint64_t pc, bool *no_table) {
  dl_find_object obj;
  *no_table = false;
  if (_dl_find_object(reinterpret_cast<void *>(pc), &obj) != 0 || !obj.dlfo_eh_frame) {
    *no_table = true;
    return nullptr;
  }
  const uint8_t *hdr = static_cast<const uint8_t *>(obj.dlfo_eh_frame);
  // XXX: only the usual table encoding, which the binary search below reads.
  if (hdr[0] != 1 || hdr[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4)) return nullptr;
  Cursor c{hdr + 4, hdr + 4 + 16};
  c.encoded(hdr[1], uint64_t(hdr));  // eh_frame_ptr
  const uint64_t count = c.encoded(hdr[2], uint64_t(hdr));
  if (!c.ok || count == 0) return nullptr;
  const int32_t *table = reinterpret_cast<const int32_t *>(c.p);
  // The last entry whose initial location is at or below pc.
  uint64_t lo = 0, hi = count;
  while (hi - lo > 1) {
    const uint64_t mid = (lo + hi) / 2;
    if (uint64_t(hdr) + uint64_t(int64_t(table[2 * mid])) <= pc) lo = mid;
    else hi = mid;
  }
  if (uint64_t(hdr) + uint64_t(int64_t(table[2 * lo])) > pc) {
    *no_table = true;
    return nullptr;
  }
  return hdr + table[2 * lo + 1];
}

// The FDE covering pc, opened: its CIE, its code range, and the cursor at its
// augmentation data. *no_table tells code that no FDE covers (as opposed to
// an FDE that cannot be read).
bool open_fde(uint64_t pc, Cursor *c, Cie *cie, uint64_t *begin, uint64_t *range,
              bool *no_table) {
  const uint8_t *fde = find_fde(pc, no_table);
  if (!fde) return false;
  *c = Cursor{fde, fde + 8};
  const uint32_t len = c->fixed<uint32_t>();
  if (!c->ok || len == 0 || len == kDwarf64Length) return false;
  c->end = c->p + len;
  const uint8_t *cie_field = c->p;
  const uint32_t cie_off = c->fixed<uint32_t>();
  if (!c->ok || cie_off == 0 || !parse_cie(cie_field - cie_off, cie)) return false;
  *begin = c->encoded(cie->fde_enc);
  *range = c->encoded(cie->fde_enc & kPeFormat);
  if (!c->ok) return false;
  if (pc < *begin || pc - *begin >= *range) {  // between two functions' entries
    *no_table = true;
    return false;
  }
  return true;
}

std::atomic<uint64_t> g_rules_generation{1};

}  // namespace

void forget_unwind_rules() { g_rules_generation.fetch_add(1, std::memory_order_release); }

uint64_t unwind_rules_generation() { return g_rules_generation.load(std::memory_order_acquire); }

bool function_extent(uint64_t pc, uint64_t *begin, uint64_t *end) {
  Cursor c;
  Cie cie;
  uint64_t range;
  bool no_table;
  if (!open_fde(pc, &c, &cie, begin, &range, &no_table)) return false;
  *end = *begin + range;
  return true;
}

UnwindRule find_unwind_rule(uint64_t pc) {
  UnwindRule out;
  Cursor c;
  Cie cie;
  uint64_t begin, range;
  bool no_table;
  if (!open_fde(pc, &c, &cie, &begin, &range, &no_table) || cie.signal_frame) {
    if (no_table) out.cfa = UnwindRule::kNoTable;
    return out;
  }
  if (cie.has_aug_data) {
    const uint64_t skip = c.uleb();
    if (!c.need(skip)) return out;
    c.p += skip;
  }
  CfaState initial;
  initial.ra = RegRule{RegRule::kOffset, -8};
  if (!run_cfa_program(Cursor{cie.instr, cie.instr_end}, cie, 0, 0, initial, &initial))
    return out;
  CfaState st = initial;
  if (!run_cfa_program(c, cie, begin, pc, initial, &st)) return out;

  if (st.ra.kind == RegRule::kUndefined) {
    out.cfa = UnwindRule::kOutermost;
    return out;
  }
  if (st.ra.kind != RegRule::kOffset || st.cfa_other) return out;
  switch (st.rbp.kind) {
    case RegRule::kSame: out.rbp = UnwindRule::kSame; break;
    case RegRule::kOffset: out.rbp = UnwindRule::kAtCfa; break;
    case RegRule::kAtRbp: out.rbp = UnwindRule::kAtRbp; break;
    default: return out;
  }
  out.rbp_off = int16_t(st.rbp.off);
  out.ra_off = int32_t(st.ra.off);
  out.cfa_off = int32_t(st.cfa_off);
  out.cfa_add = int32_t(st.cfa_add);
  if (st.cfa_deref)
    out.cfa = st.cfa_reg == kRegRsp ? UnwindRule::kRspDeref : UnwindRule::kRbpDeref;
  else if (st.cfa_reg == kRegRsp)
    out.cfa = UnwindRule::kRsp;
  else if (st.cfa_reg == kRegRbp)
    out.cfa = UnwindRule::kRbp;
  return out;
}

}  // namespace prof
