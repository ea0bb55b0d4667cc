#include "vm_capture.h"

#include <string.h>

#include "line_cache.h"
#include "lj_build.h"
#include "safe_read.h"

static inline bool read_word(bool safe, void *dst, const char *src, size_t n) {
  if (!safe) {
    memcpy(dst, src, n);
    return true;
  }
  return lj_safe_read(dst, src, n);
}

/* The object at src: itself when reads are direct, else a checked copy in
** copy (NULL if unreadable). */
static inline const void *view_object(bool safe, void *copy, const void *src, size_t n) {
  if (!safe) return src;
  return lj_safe_read(copy, src, n) ? copy : NULL;
}

static void charge(struct VmCapture *c) {
  c->site = (struct prof_guest_site){PROF_SITE_INTERNAL, 0, 0};
  if (c->vmstate >= 0) {
    c->site = (struct prof_guest_site){PROF_SITE_TRACE, (uint64_t)c->vmstate, 0};
    return;
  }
  if (~c->vmstate != LJ_STATE_INTERP && ~c->vmstate != LJ_STATE_C) return;
  int at = 0;
  if (c->n > 1 && c->kinds[0] == FRAME_KIND_BUILTIN) at = 1;
  if (at >= c->n) return;
  if (c->kinds[at] == FRAME_KIND_LUA)
    c->site = (struct prof_guest_site){PROF_SITE_LFUNC, c->frames[at].addr, c->frames[at].line};
  else if (c->kinds[at] == FRAME_KIND_C)
    c->site = (struct prof_guest_site){PROF_SITE_CFUNC, c->frames[at].addr, 0};
}

/* Under JIT code the innermost frame is where the trace started, at its
** start line (memprof's and sysprof's name for a trace). */
static inline __attribute__((always_inline)) void name_trace_frame(const char *g, const bool safe,
                                                                    int max, struct VmCapture *c,
                                                                    const struct LjLayout *o) {
  const char *J = lj_jit_state(g);
  uint64_t trace = 0, at = 0;
  uint32_t sizetrace = 0;
  char copy[LJ_COPY_MAX];
  const void *T = NULL;
  if (!read_word(safe, &trace, J + lj_build->j_trace, sizeof trace) || !trace ||
      !read_word(safe, &sizetrace, J + lj_build->j_sizetrace, sizeof sizetrace) ||
      (uint32_t)c->vmstate >= sizetrace ||
      !read_word(safe, &at, (const char *)(uintptr_t)trace + o->ref * (uint32_t)c->vmstate, o->ref) ||
      !at || !(T = view_object(safe, copy, (const void *)(uintptr_t)at, o->T_size)) ||
      lj_gct(T, o) != LJ_GCT_TRACE || !lj_ref(T, o->T_startpt, o))
    return;
  const uint64_t startpt = lj_ref(T, o->T_startpt, o);
  const LJProto *pt = (const LJProto *)(uintptr_t)startpt;
  const uint32_t *startpc = (const uint32_t *)(uintptr_t)lj_ref(T, o->T_startpc, o);
  const struct prof_guest_frame start = {
      PROF_FRAME_LFUNC, startpt,
      safe ? frame_walk_line(pt, startpc + 1, true, o) : line_cache_line(pt, startpc + 1, o)};
  if (c->n > 0 && c->kinds[0] == FRAME_KIND_LUA && c->frames[0].addr == startpt) {
    c->frames[0].line = start.line;
    return;
  }
  if (c->n == max) c->n--;
  for (int i = c->n; i > 0; i--) {
    c->frames[i] = c->frames[i - 1];
    c->kinds[i] = c->kinds[i - 1];
  }
  c->frames[0] = start;
  c->kinds[0] = FRAME_KIND_LUA;
  c->n++;
  if (c->fresh < c->n) c->fresh++;
}

void vm_code_find(const char *g, struct VmCode *code) {
  const uint64_t *dispatch = lj_dispatch(g);
  code->lo = UINT64_MAX;
  code->hi = 0;
  for (int i = 0; i < LJ_GG_DISPATCH_LEN; i++) {
    if (dispatch[i] < code->lo) code->lo = dispatch[i];
    if (dispatch[i] > code->hi) code->hi = dispatch[i];
  }
  /* XXX: the VM's subroutines follow its last handler and fast function. */
  code->hi += 4096;
  code->dispatch = (uint64_t)(uintptr_t)dispatch;
  code->reentry = 0;
}

/* The interpreter's frame base and PC if regs caught it in its own code. */
static bool interpreter_regs(const LJState *L, bool safe, const struct VmCode *code,
                             const struct VmRegs *regs, const uint64_t **base,
                             const uint32_t **pc, const struct LjLayout *o) {
  if (!code || !regs || regs->ip < code->lo || regs->ip >= code->hi ||
      regs->dispatch != code->dispatch || (regs->base & 7))
    return false;
  uint64_t stack = 0; /* (little-endian: a narrower reference fills the low bytes) */
  uint32_t stacksize = 0;
  if (!read_word(safe, &stack, (const char *)L + o->L_stack, o->ref) ||
      !read_word(safe, &stacksize, (const char *)L + o->L_stacksize, sizeof stacksize))
    return false;
  const uint64_t *b = (const uint64_t *)(uintptr_t)regs->base;
  const uint64_t *first = (const uint64_t *)(uintptr_t)stack;
  if (b < first + 1 + o->fr2 || b >= first + stacksize) return false;
  *base = b;
  *pc = (const uint32_t *)(uintptr_t)regs->pc;
  return true;
}

/* vm_capture, with reads direct or checked as safe says, on layout o (both
** constants once inlined). */
static inline __attribute__((always_inline)) void capture(const char *g, const LJState *main,
                                                          const bool safe, int max,
                                                          const struct VmCode *code,
                                                          const struct VmRegs *regs,
                                                          struct FrameTrail *trail,
                                                          struct VmCapture *c,
                                                          const struct LjLayout *o) {
  c->n = 0;
  c->cut = false;
  c->fresh = 0;
  c->vmstate = ~LJ_STATE_INTERP;
  uint64_t cur = 0, jit_base = 0;
  if (!read_word(safe, &c->vmstate, g + lj_build->g_vmstate, sizeof c->vmstate) ||
      !read_word(safe, &cur, g + lj_build->g_cur_L, o->ref)) {
    c->site = (struct prof_guest_site){PROF_SITE_INTERNAL, 0, 0};
    return;
  }
  const LJState *L = cur ? (const LJState *)(uintptr_t)cur : main;
  if (safe) trail = NULL;
  struct FrameWalk w = {.safe = safe, .frames = c->frames, .kinds = c->kinds, .max = max,
                        .steps_left = max + 64, .reentry = code ? code->reentry : 0,
                        .trail = trail, .fresh = trail ? trail->fresh : NULL, .matched = -1};
  const uint64_t *base = NULL;
  const uint32_t *top_pc = NULL;
  if (c->vmstate >= 0 && read_word(safe, &jit_base, g + lj_build->g_jit_base, o->ref) &&
      jit_base) {
    base = (const uint64_t *)(uintptr_t)jit_base;
  } else if (!(~c->vmstate == LJ_STATE_INTERP &&
                 interpreter_regs(L, safe, code, regs, &base, &top_pc, o))) {
    read_word(safe, &base, (const char *)L + o->L_base, sizeof base);
    top_pc = frame_walk_saved_pc(L, safe, o);
  }
  /* The threads walked (the trail's frames included) and their steps. */
  const LJState *threads[2] = {L, main};
  const int nthreads = L != main ? 2 : 1;
  int fresh_of_thread[2] = {0, 0};
  bool clean = false;
  if (base) {
    frame_walk(&w, L, base, top_pc);
    fresh_of_thread[0] = w.nfresh;
    clean = w.clean;
  }
  if (L != main && w.n < w.max && w.matched < 0) {
    const uint64_t *main_base = NULL;
    clean = clean && read_word(safe, &main_base, (const char *)main + o->L_base, sizeof main_base) &&
            main_base;
    if (main_base) {
      frame_walk(&w, main, main_base, NULL);
      fresh_of_thread[1] = w.nfresh - fresh_of_thread[0];
      clean = clean && w.clean;
    }
  }
  c->n = w.n;
  c->cut = w.n >= w.max && !clean;
  c->fresh = w.matched < 0 ? w.n : w.n - (trail->e[w.matched].out_at + trail->e[w.matched].nout);
  if (trail) {
    if (clean && c->n <= max - 2 && w.nfresh < TRAIL_MAX)
      frame_trail_remember(trail, w.matched, w.nfresh, fresh_of_thread, c->frames, c->kinds,
                           c->fresh, threads, nthreads, o);
    else
      frame_trail_forget(trail);
  }
  if (c->vmstate >= 0) name_trace_frame(g, safe, max, c, o);
  charge(c);
}

/* The captures the allocator wrapper of a GC64 VM does not make, out of
** its way: the checked one (signal handlers) and the direct one of a VM
** without GC64. */
static __attribute__((noinline)) void capture_checked(const char *g, const LJState *main, int max,
                                                      const struct VmCode *code,
                                                      const struct VmRegs *regs,
                                                      struct VmCapture *c) {
  capture(g, main, true, max, code, regs, NULL, c, lj_build->layout);
}
static __attribute__((noinline)) void capture_ref32(const char *g, const LJState *main, int max,
                                                    const struct VmCode *code,
                                                    const struct VmRegs *regs,
                                                    struct FrameTrail *trail,
                                                    struct VmCapture *c) {
  capture(g, main, false, max, code, regs, trail, c, &lj_layout_ref32);
}

void vm_capture(const char *g, const LJState *main, bool safe, int max,
                const struct VmCode *code, const struct VmRegs *regs, struct FrameTrail *trail,
                struct VmCapture *c) {
  if (safe)
    capture_checked(g, main, max, code, regs, c);
  else if (lj_build->layout->fr2)
    capture(g, main, false, max, code, regs, trail, c, &lj_layout_gc64);
  else
    capture_ref32(g, main, max, code, regs, trail, c);
}

int vm_capture_prof_state(const struct VmCapture *c) {
  if (c->vmstate >= 0) return PROF_VMST_TRACE;
  switch (~c->vmstate) {
    case LJ_STATE_INTERP:
      if (c->n == 0) return PROF_VMST_INTERP;
      return c->kinds[0] == FRAME_KIND_LUA ? PROF_VMST_LFUNC
             : c->kinds[0] == FRAME_KIND_BUILTIN ? PROF_VMST_FFUNC
                                                 : PROF_VMST_CFUNC;
    case LJ_STATE_C:
      return c->n > 0 && c->kinds[0] == FRAME_KIND_BUILTIN ? PROF_VMST_FFUNC : PROF_VMST_CFUNC;
    case LJ_STATE_GC: return PROF_VMST_GC;
    case LJ_STATE_EXIT: return PROF_VMST_EXIT;
    case LJ_STATE_RECORD: return PROF_VMST_RECORD;
    case LJ_STATE_OPT: return PROF_VMST_OPT;
    case LJ_STATE_ASM: return PROF_VMST_ASM;
    default: return PROF_VMST_INTERP;
  }
}
