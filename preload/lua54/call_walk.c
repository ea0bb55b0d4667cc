#include "call_walk.h"

#include <string.h>

/* Bumped whenever a block of a prototype's size is freed; cached lines carry
** the value they were computed under (CallWalk.epoch). */
static uint32_t g_proto_epoch;

void call_walk_protos_freed(void) { __atomic_add_fetch(&g_proto_epoch, 1, __ATOMIC_RELAXED); }

uint32_t call_walk_epoch(void) { return __atomic_load_n(&g_proto_epoch, __ATOMIC_RELAXED); }

static inline bool read_bytes(bool safe, void *dst, const void *src, size_t n) {
  if (!safe) {
    memcpy(dst, src, n);
    return true;
  }
  return safe_read(dst, src, n);
}

/* Finds the last absolute line entry at or before pc, starting from Lua's
** own estimate; false when the table is not what Lua writes. */
static bool abs_base(const L54Proto *p, int pc, bool safe, int *basepc, int *line) {
  L54AbsLineInfo a, next;
  int i = pc / L54_MAXIWTHABS - 1;
  if (i < 0) i = 0;
  if (i >= p->sizeabslineinfo) i = p->sizeabslineinfo - 1;
  if (!read_bytes(safe, &a, p->abslineinfo + i, sizeof a)) return false;
  for (int guard = 0; a.pc > pc; guard++) {
    if (i == 0) {
      *basepc = -1;
      *line = p->linedefined;
      return true;
    }
    if (guard == 64 || !read_bytes(safe, &a, p->abslineinfo + --i, sizeof a)) return false;
  }
  for (int guard = 0; i + 1 < p->sizeabslineinfo; guard++) {
    if (guard == 64 || !read_bytes(safe, &next, p->abslineinfo + i + 1, sizeof next)) return false;
    if (next.pc > pc) break;
    a = next;
    i++;
  }
  *basepc = a.pc;
  *line = a.line;
  return true;
}

/* The line of instruction pc in p (a copy of the prototype), 0 if unknown. */
static uint32_t line_at(const L54Proto *p, int pc, bool safe) {
  if (!p->lineinfo || pc >= p->sizelineinfo) return 0; /* stripped */
  if (pc < 0) return (uint32_t)p->linedefined;        /* not started yet */
  int basepc = -1, line = p->linedefined;
  if (p->sizeabslineinfo > 0 && !abs_base(p, pc, safe, &basepc, &line)) return 0;
  const int n = pc - basepc; /* deltas lineinfo[basepc + 1 .. pc] */
  const signed char *delta = p->lineinfo + basepc + 1;
  signed char copy[2 * L54_MAXIWTHABS];
  if (safe) {
    if (n > (int)sizeof copy || !safe_read(copy, delta, (size_t)n)) return 0;
    delta = copy;
  }
  for (int k = 0; k < n; k++) line += delta[k];
  return line > 0 ? (uint32_t)line : 0;
}

static struct LineCacheEntry *cache_entry(const struct CallWalk *w, const uint32_t *savedpc) {
  return w->cache ? &w->cache->e[((uintptr_t)savedpc >> 2) % LINE_CACHE_SLOTS] : NULL;
}

/* The current line of a Lua frame running proto, or false if proto is not a
** prototype. */
static bool frame_line(struct CallWalk *w, const L54Proto *proto, const uint32_t *savedpc,
                       bool safe, uint32_t *line) {
  struct LineCacheEntry *e = cache_entry(w, savedpc);
  if (e && e->savedpc == savedpc && e->proto == proto && e->epoch == w->epoch) {
    *line = e->line;
    return true;
  }
  L54Proto p;
  if (!read_bytes(safe, &p, proto, sizeof p) || p.tt != L54_VPROTO) return false;
  if (savedpc < p.code || savedpc > p.code + p.sizecode) {
    *line = 0; /* a tail call is replacing this frame's function */
    return true;
  }
  *line = line_at(&p, (int)(savedpc - p.code) - 1, safe);
  if (e) *e = (struct LineCacheEntry){savedpc, proto, *line, w->epoch};
  return true;
}

static void emit(struct CallWalk *w, uint8_t type, uint64_t addr, uint64_t line,
                 const void *closure, bool tail) {
  w->frames[w->n] = (struct prof_guest_frame){type, addr, line};
  if (w->closures) w->closures[w->n] = closure;
  if (w->tails) w->tails[w->n] = tail;
  w->n++;
}

/* XXX: a C function's return copies its first result over its function
** slot (moveresults: the value, then the tag), so a signal in between sees
** the result's value under a light C function's tag. The results sit at the
** top of the stack: a slot there holding that value under another tag means
** the copy is under way. Scans at most RESULT_SCAN_SLOTS results. */
#define RESULT_SCAN_SLOTS 64
static bool result_half_copied(const struct CallWalk *w, const L54TValue *fn,
                               const L54StackValue *func, const L54StackValue *top) {
  const L54StackValue *from = top - func > RESULT_SCAN_SLOTS ? top - RESULT_SCAN_SLOTS : func + 1;
  for (const L54StackValue *s = from; s < top; s++) {
    L54TValue v;
    if (!read_bytes(w->all_safe, &v, &s->val, sizeof v)) return true;
    if (v.value_.p == fn->value_.p && v.tt_ != fn->tt_) return true;
  }
  return false;
}

/* Appends a Lua frame named by the line cache from its saved pc alone, or
** returns false. Only where no frame is half-written: there a frame's saved
** pc lies in the code of the prototype it runs, so a cached pc names both
** without reading the closure (prototypes freed since bump the epoch). */
static inline bool emit_cached(struct CallWalk *w, const L54CallInfo *ci) {
  const struct LineCacheEntry *e = cache_entry(w, ci->u.l.savedpc);
  if (!e || e->savedpc != ci->u.l.savedpc || e->epoch != w->epoch) return false;
  emit(w, PROF_FRAME_LFUNC, (uint64_t)(uintptr_t)e->proto, e->line, NULL,
       (ci->callstatus & L54_CIST_TAIL) != 0);
  return true;
}

/* Appends one frame (false: the frame is unreadable or in flux, skip it).
** in_flux_top: the state's top if this frame may be half-written, else NULL. */
static bool walk_frame(struct CallWalk *w, const L54CallInfo *ci, const L54StackValue *stack,
                       const L54StackValue *stack_end, const L54StackValue *in_flux_top,
                       bool safe) {
  const bool tail = (ci->callstatus & L54_CIST_TAIL) != 0;
  if (!safe && !(ci->callstatus & L54_CIST_C) && emit_cached(w, ci)) return true;
  /* XXX: a slot outside the current stack means the stack is being moved
  ** (luaD_reallocstack): skip the frame, never read the old block. */
  if (ci->func < stack || ci->func >= stack_end) return false;
  L54TValue fn;
  if (!read_bytes(w->all_safe, &fn, &ci->func->val, sizeof fn)) return false;
  if (ci->callstatus & L54_CIST_C) {
    if (fn.tt_ == L54_VLCF) {
      if (in_flux_top && in_flux_top > ci->func && in_flux_top <= stack_end &&
          result_half_copied(w, &fn, ci->func, in_flux_top))
        return false;
      emit(w, PROF_FRAME_CFUNC, (uint64_t)(uintptr_t)fn.value_.f, 0, NULL, false);
      return true;
    }
    L54CClosure cl;
    if (fn.tt_ != (L54_VCCL | L54_COLLECTABLE) || !read_bytes(safe, &cl, fn.value_.gc, sizeof cl) ||
        cl.tt != L54_VCCL)
      return false;
    emit(w, PROF_FRAME_CFUNC, (uint64_t)(uintptr_t)cl.f, 0, fn.value_.gc, false);
    return true;
  }
  L54LClosure cl;
  uint32_t line;
  if (fn.tt_ != (L54_VLCL | L54_COLLECTABLE) || !read_bytes(safe, &cl, fn.value_.gc, sizeof cl) ||
      cl.tt != L54_VLCL || !frame_line(w, cl.p, ci->u.l.savedpc, safe, &line))
    return false;
  emit(w, PROF_FRAME_LFUNC, (uint64_t)(uintptr_t)cl.p, line, fn.value_.gc, tail);
  return true;
}

void call_walk_state(struct CallWalk *w, const L54State *L, bool running) {
  if (w->n >= w->max) {
    if (!w->all_safe && L->ci != &L->base_ci) w->cut = true;
    return;
  }
  L54State copy;
  if (w->all_safe) {
    if (!safe_read(&copy, L, sizeof copy)) return;
  }
  const L54State *st = w->all_safe ? &copy : L;
  const L54StackValue *stack = st->stack;
  const L54StackValue *stack_end = st->stack_last + L54_EXTRA_STACK;
  const L54CallInfo *base = &L->base_ci;
  bool innermost = running;
  bool fresh_above = false; /* the frame emitted last began a run of the VM */
  const L54CallInfo *at = st->ci;
  for (; at && at != base && w->n < w->max && w->steps_left > 0; innermost = false) {
    w->steps_left--;
    if ((uintptr_t)at & (sizeof(void *) - 1)) break;
    L54CallInfo ci_copy;
    const L54CallInfo *ci = at;
    if (w->all_safe) {
      if (!safe_read(&ci_copy, at, sizeof ci_copy)) return;
      ci = &ci_copy;
    }
    at = ci->previous;
    const bool lua = !(ci->callstatus & L54_CIST_C);
    /* XXX: a Lua frame that native code inside the VM called (a metamethod,
    ** an iterator, a finalizer) runs in a luaV_execute of its own though its
    ** caller is a Lua frame: a boundary frame says so. */
    if (fresh_above && lua && w->reentry) {
      emit(w, PROF_FRAME_CFUNC, w->reentry, 0, NULL, false);
      if (w->n == w->max) break;
    }
    const bool in_flux = innermost && !w->clean_point;
    fresh_above =
        walk_frame(w, ci, stack, stack_end, in_flux ? st->top : NULL, w->all_safe || in_flux) &&
        lua && (ci->callstatus & L54_CIST_FRESH);
  }
  if (w->n >= w->max && at && at != base) w->cut = true;
}

/* The C function a C frame runs, as walk_frame names it; 0 if unreadable. */
static uint64_t c_function(const L54CallInfo *ci, const L54StackValue *stack,
                           const L54StackValue *stack_end) {
  if (ci->func < stack || ci->func >= stack_end) return 0;
  const L54TValue *fn = &ci->func->val;
  if (fn->tt_ == L54_VLCF) return (uint64_t)(uintptr_t)fn->value_.f;
  if (fn->tt_ != (L54_VCCL | L54_COLLECTABLE)) return 0;
  const L54CClosure *cl = (const L54CClosure *)fn->value_.gc;
  return cl->tt == L54_VCCL ? (uint64_t)(uintptr_t)cl->f : 0;
}

/* One state's part of a remembered walk: its remembered segment's entries
** [eb, reuse_e) and frames [fb, reuse_f) are kept in place, then come the
** CallInfos walked now, tmp[0..ne) with their frames w->frames[0..nf)
** (innermost first). */
struct StatePlan {
  int eb, fb, reuse_e, reuse_f; /* reuse_e == eb: nothing kept */
  int ne, nf;
};

/* The entry of ci in the old segment [eb, ee), searched from its top (the
** frames popped since are the ones passed); -1 if absent. */
static int trail_find(const struct TrailEntry *e, int eb, int ee, const L54CallInfo *ci) {
  for (int p = ee - 1; p >= eb; p--)
    if (e[p].ci == ci) return p;
  return -1;
}

/* Walks L from its innermost frame down to the first CallInfo whose
** remembered frames can be kept (plan->reuse_*), the new ones into tmp and
** w->frames. old: the remembered walk, whose entries [plan->eb, ee) are L's
** and in place, or NULL. False when the walk outgrows the trail or w, or
** L's stack is being moved. */
static bool walk_changed(struct CallWalk *w, const L54State *L, const struct WalkTrail *old,
                         int ee, struct TrailEntry *tmp, struct StatePlan *plan) {
  const L54StackValue *stack = L->stack;
  const L54StackValue *stack_end = L->stack_last + L54_EXTRA_STACK;
  /* XXX: a stack being moved (luaD_reallocstack frees the old block after
  ** pointing the frames at the new one) reads as a walk would skip frames:
  ** then a plain walk, never frames kept from before. */
  if (L->ci != &L->base_ci && (L->ci->func < stack || L->ci->func >= stack_end)) return false;
  int ne = 0;
  plan->reuse_e = plan->eb;
  plan->reuse_f = plan->fb;
  bool fresh_above = false; /* the frame emitted last began a run of the VM */
  for (L54CallInfo *ci = (L54CallInfo *)L->ci; ci != &L->base_ci; ci = ci->previous) {
    if (ne == TRAIL_MAX || w->n >= w->max || !ci || ((uintptr_t)ci & (sizeof(void *) - 1)))
      return false;
    const unsigned short status = ci->callstatus & (unsigned short)~L54_CIST_WALKED;
    const bool lua = !(status & L54_CIST_C);
    const void *key = lua ? (const void *)ci->u.l.savedpc
                          : (const void *)(uintptr_t)c_function(ci, stack, stack_end);
    if (fresh_above && lua && w->reentry) {
      w->frames[w->n++] = (struct prof_guest_frame){PROF_FRAME_CFUNC, w->reentry, 0};
      if (w->n == w->max) return false;
    }
    /* XXX: a CallInfo still marked was not pushed again since the
    ** remembered walk read it, nor were those below it popped; with the same
    ** saved pc it is at the same line (the running state's innermost frame
    ** too: at an allocation its saved pc is the VM's own). */
    if (old && (ci->callstatus & L54_CIST_WALKED) && key) {
      const int p = trail_find(old->e, plan->eb, ee, ci);
      if (p >= 0 && old->e[p].status == status && old->e[p].key == key) {
        plan->reuse_e = p + 1;
        plan->reuse_f = old->e[p].frame_end;
        break;
      }
    }
    const int at = w->n;
    const bool emitted =
        (lua && emit_cached(w, ci)) || walk_frame(w, ci, stack, stack_end, NULL, false);
    tmp[ne++] = (struct TrailEntry){ci, emitted ? key : NULL, status, at};
    ci->callstatus |= L54_CIST_WALKED;
    fresh_above = emitted && lua && (status & L54_CIST_FRESH);
  }
  plan->ne = ne;
  plan->nf = w->n;
  return true;
}

/* Where the remembered segment of state j ends (entries). */
static int segment_end(const struct WalkTrail *t, int j) {
  return j + 1 < t->nstates ? t->state[j + 1].entry_begin : t->entries;
}

/* Places the part of a state walked now above what it keeps (plan): root
** first, each entry's frame_end turned from its frame's place in w->frames
** into the count of its frame and those below. Returns the count of frames
** placed so far, this state's included. */
static int place_walked(struct WalkTrail *t, const struct CallWalk *w,
                        const struct TrailEntry *tmp, const struct StatePlan *plan) {
  int e = plan->reuse_e;
  const int end = plan->reuse_f + plan->nf;
  for (int i = plan->ne - 1; i >= 0; i--) {
    t->e[e] = tmp[i];
    t->e[e++].frame_end = end - tmp[i].frame_end;
  }
  /* Innermost first: a few frames as a rule, copied without a call. */
  struct prof_guest_frame *to = t->frames + TRAIL_FRAMES - end;
  for (int k = 0; k < plan->nf; k++) to[k] = w->frames[k];
  return end;
}

const struct prof_guest_frame *call_walk_nothing_pushed(struct WalkTrail *t, const L54State *L,
                                                        int max, uint32_t epoch, uint64_t reentry,
                                                        const void *main, int *n) {
  if (t->entries == 0 || t->nstates != 1 || t->state[0].L != L || t->epoch != epoch ||
      t->reentry != reentry || t->main != main)
    return NULL;
  const L54CallInfo *ci = L->ci;
  /* walk_changed's tests, in its order: a stack being moved, then the mark. */
  if (ci == &L->base_ci || ci->func < L->stack || ci->func >= L->stack_last + L54_EXTRA_STACK)
    return NULL;
  const unsigned short status = ci->callstatus;
  if (!(status & L54_CIST_WALKED) || (status & L54_CIST_C)) return NULL;
  const int p = trail_find(t->e, 0, t->entries, ci);
  if (p < 0 || t->e[p].status != (unsigned short)(status & ~L54_CIST_WALKED) || !t->e[p].key ||
      t->e[p].key != (const void *)ci->u.l.savedpc || t->e[p].frame_end > max)
    return NULL;
  /* The frames of the CallInfos popped since are forgotten, as a walk would. */
  t->entries = p + 1;
  t->nframes = t->e[p].frame_end;
  *n = t->nframes;
  return t->frames + TRAIL_FRAMES - t->nframes;
}

const struct prof_guest_frame *call_walk_remembered(struct CallWalk *w,
                                                    const L54State *const *states, int nstates,
                                                    struct WalkTrail *t, const void *main,
                                                    int *unchanged) {
  const bool usable = t->entries > 0 && t->epoch == w->epoch && t->reentry == w->reentry &&
                      t->main == main;
  const int old_states = usable ? t->nstates : 0;
  struct TrailEntry *const tmp = t->walked;
  int same = 0; /* frames shared with the remembered walk from the bottom */
  bool counting = usable;
  int e = 0, f = 0; /* where the state placed next begins */
  /* Root first: state j is states[nstates - 1 - j]. Its remembered segment
  ** is kept from where it is only if it begins where the new one does:
  ** every state placed below then left it untouched. */
  for (int j = 0; j < nstates; j++) {
    const L54State *L = states[nstates - 1 - j];
    const bool in_place = j < old_states && t->state[j].L == L && t->state[j].entry_begin == e &&
                          t->state[j].frame_begin == f;
    struct StatePlan plan = {.eb = e, .fb = f};
    const int old_end = in_place ? segment_end(t, j) : e;
    w->n = 0;
    if (j == TRAIL_MAX || !walk_changed(w, L, in_place ? t : NULL, old_end, tmp, &plan) ||
        plan.reuse_e + plan.ne > TRAIL_MAX || plan.reuse_f + plan.nf > TRAIL_FRAMES ||
        plan.reuse_f + plan.nf > w->max) {
      t->entries = 0; /* too deep to remember: a plain walk */
      w->n = 0;
      for (int k = 0; k < nstates; k++) call_walk_state(w, states[k], k == 0);
      *unchanged = 0;
      return w->frames;
    }
    if (counting) same += plan.reuse_f - plan.fb;
    counting = counting && in_place && plan.ne == 0 && plan.reuse_e == old_end;
    t->state[j] = (struct TrailState){L, e, f};
    f = place_walked(t, w, tmp, &plan);
    e = plan.reuse_e + plan.ne;
  }
  t->entries = e;
  t->nframes = f;
  t->nstates = nstates;
  t->epoch = w->epoch;
  t->reentry = w->reentry;
  t->main = main;
  w->n = f;
  *unchanged = same;
  return t->frames + TRAIL_FRAMES - f;
}
