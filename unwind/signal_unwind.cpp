#include "signal_unwind.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <ucontext.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "proc_maps.h"

namespace prof {
namespace {

// One object's .eh_frame_hdr search table and the libunwind dynamic-info
// entry that points libunwind at it.
struct UnwindTable {
  std::atomic<uint64_t> hdr{0};  // key: the PT_GNU_EH_FRAME address; 0 = free slot
  std::atomic<bool> live{false};
  bool registered = false;  // di is on libunwind's list (it never leaves it)
  bool seen = false;        // sync_tables bookkeeping
  uint64_t fde_count = 0;
  const int32_t *entries = nullptr;  // fde_count pairs (initial location, FDE), hdr-relative
  // The object: its link map, and the extent of its segments, in which
  // every mapping _dl_find_object reports for it lies (one per segment when
  // the segments leave gaps, as node's do).
  const void *link_map = nullptr;
  uint64_t map_start = 0, map_end = 0;
  unw_dyn_info_t di{};
};

constexpr size_t kTableSlots = 4096;  // a power of two
UnwindTable g_tables[kTableSlots];
std::atomic<uint64_t> g_unregistered{0};
pthread_mutex_t g_sync_mutex = PTHREAD_MUTEX_INITIALIZER;

// What one sync found loaded (under g_sync_mutex).
struct LoadedObject {
  uint64_t hdr, fde_count, code_start, code_end, gp, map_start, map_end;
  const int32_t *entries;
  const void *link_map;
};
LoadedObject g_loaded[kTableSlots];
size_t g_loaded_count = 0;
uint64_t g_unusable = 0;

template <class T>
T load(const uint8_t *p) {
  T v;
  memcpy(&v, p, sizeof v);
  return v;
}

// Byte size of a DW_EH_PE_* encoded value; 0 when variable-sized or unknown.
size_t encoded_size(uint8_t enc) {
  switch (enc & 0x0f) {
    case 0x00: case 0x04: case 0x0c: return 8;
    case 0x02: case 0x0a: return 2;
    case 0x03: case 0x0b: return 4;
  }
  return 0;
}

uint64_t load_unsigned(const uint8_t *p, size_t size) {
  return size == 8 ? load<uint64_t>(p) : size == 4 ? load<uint32_t>(p) : load<uint16_t>(p);
}

const uint8_t *skip_leb(const uint8_t *p, const uint8_t *end) {
  while (p < end && (*p++ & 0x80)) {}
  return p;
}

// Reads an .eh_frame_hdr; false unless it holds the sorted table that
// libunwind searches (version 1, entries datarel|sdata4).
bool parse_eh_frame_hdr(const uint8_t *hdr, uint64_t *fde_count, const int32_t **entries) {
  const size_t ptr_size = encoded_size(hdr[1]), count_size = encoded_size(hdr[2]);
  if (hdr[0] != 1 || hdr[3] != 0x3b || !ptr_size || !count_size || (hdr[2] & 0x70)) return false;
  const uint8_t *count_at = hdr + 4 + ptr_size;
  *fde_count = load_unsigned(count_at, count_size);
  *entries = reinterpret_cast<const int32_t *>(count_at + count_size);
  return true;
}

// The pointer encoding of the FDEs of the CIE at `cie` ('R'), or -1.
int fde_encoding(const uint8_t *cie) {
  const uint32_t len = load<uint32_t>(cie);
  if (len == 0 || len == 0xffffffff || load<uint32_t>(cie + 4) != 0) return -1;
  const uint8_t *p = cie + 8, *end = cie + 4 + len;
  const uint8_t version = *p++;
  const char *aug = reinterpret_cast<const char *>(p);
  const size_t aug_len = strnlen(aug, size_t(end - p));
  p += aug_len + 1;
  if (version >= 4) p += 2;  // address and segment sizes
  p = skip_leb(skip_leb(p, end), end);  // code and data alignment
  p = version == 1 ? p + 1 : skip_leb(p, end);  // return address register
  if (aug[0] != 'z') return aug[0] == 0 ? 0 : -1;
  p = skip_leb(p, end);  // augmentation data length
  for (size_t i = 1; i < aug_len && p < end; i++) {
    switch (aug[i]) {
      case 'R': return *p;
      case 'L': p++; break;
      case 'P': {
        const uint8_t enc = *p++;
        if (!encoded_size(enc) || (enc & 0x70) == 0x50) return -1;  // leb or aligned
        p += encoded_size(enc);
        break;
      }
      case 'S': case 'B': case 'G': break;
      default: return -1;
    }
  }
  return 0;  // no 'R': absolute pointers
}

// True when an FDE of table t (at hdr) covers pc.
bool fde_covers(const UnwindTable &t, uint64_t hdr, uint64_t pc) {
  const int64_t rel = int64_t(pc - hdr);
  size_t lo = 0, hi = t.fde_count;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (t.entries[2 * mid] <= rel) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return false;
  const int64_t begin = t.entries[2 * (lo - 1)];
  const uint8_t *fde = reinterpret_cast<const uint8_t *>(hdr + uint64_t(int64_t(t.entries[2 * (lo - 1) + 1])));
  const uint32_t len = load<uint32_t>(fde), cie_offset = load<uint32_t>(fde + 4);
  if (len == 0 || len == 0xffffffff || cie_offset == 0) return false;
  const int enc = fde_encoding(fde + 4 - cie_offset);
  const size_t size = enc < 0 ? 0 : encoded_size(uint8_t(enc));
  if (!size || len < 4 + 2 * size) return false;
  // pc_begin is the table's `begin`; pc_range follows it, unsigned.
  return uint64_t(rel - begin) < load_unsigned(fde + 8 + size, size);
}

size_t slot_of(uint64_t hdr) { return size_t((hdr >> 3) * 0x9E3779B97F4A7C15ull >> 52) & (kTableSlots - 1); }

const UnwindTable *find_table(uint64_t hdr) {
  for (size_t i = slot_of(hdr), n = 0; n < kTableSlots; i = (i + 1) & (kTableSlots - 1), n++) {
    const uint64_t key = g_tables[i].hdr.load(std::memory_order_acquire);
    if (key == hdr) return &g_tables[i];
    if (key == 0) return nullptr;
  }
  return nullptr;
}

// The signal-context check: libunwind will find pc's unwind info in a
// registered table. Everything is re-derived from the object mapped at pc
// now, so an entry left over from an object unloaded since never applies.
bool covered(uint64_t pc) {
  dl_find_object obj;
  if (_dl_find_object(reinterpret_cast<void *>(pc), &obj) != 0 || !obj.dlfo_eh_frame) return false;
  const uint64_t hdr = uint64_t(obj.dlfo_eh_frame);
  const UnwindTable *t = find_table(hdr);
  if (!t || !t->live.load(std::memory_order_acquire)) return false;
  uint64_t fde_count;
  const int32_t *entries;
  if (t->link_map != obj.dlfo_link_map || uint64_t(obj.dlfo_map_start) < t->map_start ||
      uint64_t(obj.dlfo_map_end) > t->map_end ||
      !parse_eh_frame_hdr(static_cast<const uint8_t *>(obj.dlfo_eh_frame), &fde_count, &entries) ||
      fde_count != t->fde_count || entries != t->entries)
    return false;
  if (pc < t->di.start_ip || pc >= t->di.end_ip) return false;
  return fde_covers(*t, hdr, pc);
}

// dl_iterate_phdr callback: notes each object with code and a usable table.
int collect_object(dl_phdr_info *info, size_t, void *) {
  const ElfW(Phdr) *eh = nullptr, *dynamic = nullptr;
  uint64_t code_start = UINT64_MAX, code_end = 0, map_start = UINT64_MAX, map_end = 0;
  constexpr uint64_t kPage = 4096;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    const uint64_t at = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      map_start = std::min(map_start, at & ~(kPage - 1));
      map_end = std::max(map_end, (at + ph.p_memsz + kPage - 1) & ~(kPage - 1));
    }
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
      if (at < code_start) code_start = at;
      if (at + ph.p_memsz > code_end) code_end = at + ph.p_memsz;
    } else if (ph.p_type == PT_GNU_EH_FRAME) {
      eh = &ph;
    } else if (ph.p_type == PT_DYNAMIC) {
      dynamic = &ph;
    }
  }
  if (code_end == 0) return 0;
  LoadedObject o{};
  dl_find_object obj;
  if (!eh || g_loaded_count == kTableSlots ||
      !parse_eh_frame_hdr(reinterpret_cast<const uint8_t *>(info->dlpi_addr + eh->p_vaddr),
                          &o.fde_count, &o.entries) ||
      _dl_find_object(reinterpret_cast<void *>(code_start), &obj) != 0) {
    g_unusable++;
    return 0;
  }
  o.hdr = info->dlpi_addr + eh->p_vaddr;
  o.code_start = code_start;
  o.code_end = code_end;
  o.link_map = obj.dlfo_link_map;
  o.map_start = map_start;
  o.map_end = map_end;
  // Data-relative encodings are relative to DT_PLTGOT, as libunwind's own lookup sets it.
  if (dynamic)
    for (auto *d = reinterpret_cast<const ElfW(Dyn) *>(info->dlpi_addr + dynamic->p_vaddr);
         d->d_tag != DT_NULL; d++)
      if (d->d_tag == DT_PLTGOT) o.gp = d->d_un.d_ptr;
  g_loaded[g_loaded_count++] = o;
  return 0;
}

bool same_object(const UnwindTable &t, const LoadedObject &o) {
  return t.fde_count == o.fde_count && t.entries == o.entries && t.di.start_ip == o.code_start &&
         t.di.end_ip == o.code_end && t.link_map == o.link_map && t.map_start == o.map_start &&
         t.map_end == o.map_end;
}

// Empties t's range: libunwind and covered() both stop using it.
void retire(UnwindTable &t) {
  t.live.store(false, std::memory_order_release);
  __atomic_store_n(&t.di.end_ip, t.di.start_ip, __ATOMIC_RELEASE);
}

// Points slot t (not live) at object o and publishes it.
void publish(UnwindTable &t, const LoadedObject &o) {
  // XXX: the range stays empty (end 0) until every other field is written;
  // libunwind's list walk reads these fields with no lock.
  __atomic_store_n(&t.di.end_ip, 0, __ATOMIC_RELEASE);
  t.fde_count = o.fde_count;
  t.entries = o.entries;
  t.link_map = o.link_map;
  t.map_start = o.map_start;
  t.map_end = o.map_end;
  t.di.start_ip = o.code_start;
  t.di.gp = o.gp;
  t.di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
  t.di.load_offset = 0;
  t.di.u.rti.name_ptr = 0;
  t.di.u.rti.segbase = o.hdr;
  t.di.u.rti.table_len = o.fde_count * 2 * sizeof(int32_t) / sizeof(unw_word_t);
  t.di.u.rti.table_data = uint64_t(o.entries);
  __atomic_store_n(&t.di.end_ip, o.code_end, __ATOMIC_RELEASE);
  if (!t.registered) {
    _U_dyn_register(&t.di);
    t.registered = true;
  }
  t.hdr.store(o.hdr, std::memory_order_release);
  t.live.store(true, std::memory_order_release);
}

UnwindTable *slot_for(uint64_t hdr) {
  for (size_t i = slot_of(hdr), n = 0; n < kTableSlots; i = (i + 1) & (kTableSlots - 1), n++) {
    const uint64_t key = g_tables[i].hdr.load(std::memory_order_relaxed);
    if (key == hdr || key == 0) return &g_tables[i];
  }
  return nullptr;
}

// The bounds of the stack sp lies on: the thread's own (lo moves down as
// the main thread's stack grows) or another mapping (a coroutine's, an
// alternate signal stack), each looked up in the maps once. False when the
// maps name no mapping there.
bool stack_bounds(SignalWalkCache *c, uint64_t sp, uint64_t *lo, uint64_t *hi) {
  if (sp < c->stack_lo || sp >= c->stack_hi) {
    if (sp < c->other_lo || sp >= c->other_hi) {
      uint64_t a, b;
      if (!mapping_of(sp, &a, &b)) return false;
      if (b == c->stack_hi)
        c->stack_lo = a;
      else
        c->other_lo = a, c->other_hi = b;
    }
    if (sp < c->stack_lo || sp >= c->stack_hi) {
      *lo = c->other_lo, *hi = c->other_hi;
      return true;
    }
  }
  *lo = c->stack_lo, *hi = c->stack_hi;
  return true;
}

// True when ip is the kernel's way back from a signal handler, glibc's
// __restore_rt (mov $15, %rax; syscall), in code a table covers (so
// mapped): the handler's frame returns there, the interrupted state saved
// at its sp.
bool at_sigreturn(uint64_t ip) {
  static const uint8_t kSigreturn[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
  return covered(ip) && memcmp(reinterpret_cast<const void *>(ip), kSigreturn, sizeof kSigreturn) == 0;
}

std::atomic<SignalUnwind::JitStep> g_jit_step{nullptr};

// The rule walk from `at`, whose own rule is looked up at pc (the
// interrupted instruction, or a return address's call): the frame count.
// Where a frame has a rule the walk cannot apply (libunwind may), or the
// maps know no stack at sp, it ends with *unwalkable set. Code no table
// covers is stepped by its frame pointer; where that leads off the stack,
// the walk ends (*stopped). Only the frames whose sp lies above `above_sp`
// are kept.
int rule_walk(CallSite at, uint64_t pc, uint64_t *ips, int max, SignalWalkCache *c,
              uint64_t above_sp, bool *stopped, bool *unwalkable) {
  *unwalkable = false;
  const SignalUnwind::JitStep jit_step = g_jit_step.load(std::memory_order_acquire);
  int jit_steps_left = 16;  // (a guest that stepped into JIT code again cannot loop)
  uint64_t stack_lo, stack_hi;
  if (!stack_bounds(c, at.sp, &stack_lo, &stack_hi)) {
    *unwalkable = true;
    return 0;
  }
  c->rules.check_generation();
  // The interrupted frame may be in an epilogue whose rule still reads a
  // register it just popped: the red zone below sp, which signal delivery
  // leaves intact, may be read.
  constexpr uint64_t kRedZone = 128;
  uint64_t lo = at.sp - stack_lo >= kRedZone ? at.sp - kRedZone : stack_lo;
  RuleReads reads;
  int n = 0;
  while (n < max) {
    if (at.sp > above_sp) ips[n++] = at.ip;
    if (n == max) break;
    const UnwindRule &rule = c->rules.at(pc);
    // (glibc's __restore_rt has rules no step here applies: only then is
    // its code looked at.)
    if ((rule.cfa == UnwindRule::kUnsupported || rule.cfa == UnwindRule::kNoTable) && at_sigreturn(at.ip)) {
      // On through the signal frame, to the interrupted state (perhaps on
      // another stack: a handler on a sigaltstack); each frame beyond it is
      // a caller of the code above_sp marks.
      const auto *saved = reinterpret_cast<const ucontext_t *>(at.sp);
      if (at.sp + sizeof *saved > stack_hi) {
        *stopped = true;
        break;
      }
      const greg_t *regs = saved->uc_mcontext.gregs;
      at = CallSite{uint64_t(regs[REG_RIP]), uint64_t(regs[REG_RSP]), uint64_t(regs[REG_RBP])};
      if (!stack_bounds(c, at.sp, &stack_lo, &stack_hi)) {
        *stopped = true;
        break;
      }
      lo = at.sp - stack_lo >= kRedZone ? at.sp - kRedZone : stack_lo;
      pc = at.ip;
      above_sp = 0;
      continue;
    }
    const bool no_table = rule.cfa == UnwindRule::kNoTable;
    uint64_t vm_pc, vm_sp;
    if (jit_step && jit_steps_left > 0 && jit_step(at.ip, at.sp, !no_table, &vm_pc, &vm_sp) &&
        vm_sp >= at.sp && vm_sp < stack_hi) {
      // The JIT code (or VM code that lowered its stack) runs in the VM's
      // frame: it is that frame, at vm_pc, and the walk goes on from there
      // (the guest names the code it ran).
      jit_steps_left--;
      if (n > 0 && ips[n - 1] == at.ip) n--;
      at.ip = vm_pc, at.sp = vm_sp;
      pc = vm_pc;
      continue;
    }
    const int stepped = apply_unwind_rule(no_table ? kFramePointerRule : rule, at, lo, stack_hi, reads);
    if (stepped < 0) {
      *stopped = true;
      *unwalkable = !no_table;
      break;
    }
    if (stepped == 0) break;
    pc = at.ip - 1;
  }
  return n;
}

// The rule walk from the interrupted state.
int rule_walk(const ucontext_t *uc, uint64_t *ips, int max, SignalWalkCache *c, uint64_t above_sp,
              bool *stopped, bool *unwalkable) {
  const greg_t *regs = uc->uc_mcontext.gregs;
  const CallSite at{uint64_t(regs[REG_RIP]), uint64_t(regs[REG_RSP]), uint64_t(regs[REG_RBP])};
  return rule_walk(at, at.ip, ips, max, c, above_sp, stopped, unwalkable);
}

}  // namespace

void SignalUnwind::set_jit_step(JitStep step) { g_jit_step.store(step, std::memory_order_release); }

void SignalUnwind::set_stack(SignalWalkCache *cache) {
  uint64_t lo = 0, hi = 0;
  const uint64_t sp = uint64_t(__builtin_frame_address(0));
  if (!mapping_of(sp, &lo, &hi)) lo = hi = 0;
  cache->stack_lo = lo, cache->stack_hi = hi;
  cache->other_lo = cache->other_hi = 0;
}

void SignalUnwind::init() {
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  // XXX: libunwind initialises itself under a lock on first use: do it here.
  unw_context_t context;
  unw_cursor_t cursor;
  unw_getcontext(&context);
  if (unw_init_local(&cursor, &context) == 0) unw_step(&cursor);
  sync_tables();
}

void SignalUnwind::sync_tables() {
  pthread_mutex_lock(&g_sync_mutex);
  g_loaded_count = 0;
  g_unusable = 0;
  dl_iterate_phdr(collect_object, nullptr);
  for (UnwindTable &t : g_tables) t.seen = false;
  for (size_t i = 0; i < g_loaded_count; i++) {
    UnwindTable *t = slot_for(g_loaded[i].hdr);
    if (t && t->live.load(std::memory_order_relaxed) && same_object(*t, g_loaded[i])) t->seen = true;
  }
  // Retire what is gone or changed, flush libunwind's cached rules for it,
  // and only then publish the new objects (they may reuse those addresses).
  bool retired = false;
  for (UnwindTable &t : g_tables)
    if (t.live.load(std::memory_order_relaxed) && !t.seen) retire(t), retired = true;
  if (retired) {
    unw_flush_cache(unw_local_addr_space, 0, 0);
    forget_unwind_rules();
  }
  for (size_t i = 0; i < g_loaded_count; i++) {
    UnwindTable *t = slot_for(g_loaded[i].hdr);
    if (!t) {
      g_unusable++;
      continue;
    }
    if (!t->seen) publish(*t, g_loaded[i]);
  }
  g_unregistered.store(g_unusable, std::memory_order_relaxed);
  pthread_mutex_unlock(&g_sync_mutex);
}

uint64_t SignalUnwind::unregistered_objects() { return g_unregistered.load(std::memory_order_relaxed); }

int SignalUnwind::capture_callers(void *ucontext, uint64_t entry_sp, uint64_t *ips, int max,
                                  SignalWalkCache *cache, bool *stopped) {
  *stopped = false;
  if (max <= 0) return 0;
  bool unwalkable;
  return rule_walk(static_cast<const ucontext_t *>(ucontext), ips, max, cache, entry_sp, stopped, &unwalkable);
}

int SignalUnwind::capture_from_call(const CallSite &call, uint64_t *ips, int max,
                                    SignalWalkCache *cache, bool *stopped) {
  *stopped = false;
  if (max <= 0 || call.ip == 0) return 0;
  bool unwalkable;
  return rule_walk(call, call.ip - 1, ips, max, cache, 0, stopped, &unwalkable);
}

int SignalUnwind::capture(void *ucontext, uint64_t *ips, int max, SignalWalkCache *cache,
                          bool rule_walk_first, bool *stopped, bool *fell_back) {
  *stopped = *fell_back = false;
  if (max <= 0) return 0;
  const auto *uc = static_cast<const ucontext_t *>(ucontext);
  if (cache && rule_walk_first) {
    bool unwalkable;
    const int walked = rule_walk(uc, ips, max, cache, 0, stopped, &unwalkable);
    if (walked > 0 && !unwalkable) return walked;
    *stopped = false;
    *fell_back = true;
  }
  // libunwind from the interrupted state; where it meets code no table
  // covers, frame-pointer steps over it (reading only the stack the thread
  // is on, when known), and libunwind again from the first covered frame.
  ucontext_t from = *uc;
  greg_t *regs = from.uc_mcontext.gregs;
  uint64_t lo = 0, hi = 0;
  if (cache && !stack_bounds(cache, uint64_t(regs[REG_RSP]), &lo, &hi)) hi = 0;
  bool signal_frame = true;  // from's ip is looked up as is, not as a return address
  int n = 0;
  while (n < max) {
    CallSite at{uint64_t(regs[REG_RIP]), uint64_t(regs[REG_RSP]), uint64_t(regs[REG_RBP])};
    if (n == 0) ips[n++] = at.ip;
    if (!covered(signal_frame ? at.ip : at.ip - 1)) {
      RuleReads reads;
      while (n < max && hi && apply_unwind_rule(kFramePointerRule, at, at.sp, hi, reads) > 0) {
        ips[n++] = at.ip;
        if (covered(at.ip - 1)) break;
      }
      if (n == max || !hi || !covered(at.ip - 1)) {
        *stopped = n < max;
        return n;
      }
      regs[REG_RIP] = greg_t(at.ip), regs[REG_RSP] = greg_t(at.sp), regs[REG_RBP] = greg_t(at.rbp);
      signal_frame = false;
    }
    unw_cursor_t cursor;
    if (unw_init_local2(&cursor, reinterpret_cast<unw_context_t *>(&from),
                        signal_frame ? UNW_INIT_SIGNAL_FRAME : 0) < 0) {
      *stopped = true;
      return n;
    }
    bool uncovered = false;
    while (n < max && !uncovered) {
      if (unw_step(&cursor) <= 0) return n;
      // XXX: after a step, unw_is_signal_frame() tells whether the frame just
      // left was a signal frame, which makes libunwind look the new ip up as is.
      const bool exact = unw_is_signal_frame(&cursor) > 0;
      unw_word_t ip, sp, rbp;
      if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0) return n;
      ips[n++] = ip;
      if (covered(exact ? ip : ip - 1)) continue;
      if (n == max || unw_get_reg(&cursor, UNW_X86_64_RSP, &sp) < 0 ||
          unw_get_reg(&cursor, UNW_X86_64_RBP, &rbp) < 0) {
        *stopped = n < max;
        return n;
      }
      regs[REG_RIP] = greg_t(ip), regs[REG_RSP] = greg_t(sp), regs[REG_RBP] = greg_t(rbp);
      signal_frame = exact;
      uncovered = true;
    }
  }
  return n;
}

}  // namespace prof
