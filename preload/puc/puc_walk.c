#include "puc_walk.h"

#include <string.h>

#include <lua.h>

#include "puc_layout.h"

#define LAY puc_layout

/* Bumped whenever a block of a prototype's size is freed; cached lines carry
** the value they were computed under (PucWalk.epoch). */
static uint32_t g_proto_epoch;

void puc_walk_protos_freed(void) { __atomic_add_fetch(&g_proto_epoch, 1, __ATOMIC_RELAXED); }

uint32_t puc_walk_epoch(void) { return __atomic_load_n(&g_proto_epoch, __ATOMIC_RELAXED); }

bool puc_walk_can_remember(void) { return LAY.cist_walked != 0; }

static inline bool read_bytes(bool safe, void *dst, const void *src, size_t n) {
  if (!safe) {
    memcpy(dst, src, n);
    return true;
  }
  return safe_read(dst, src, n);
}

const void *puc_global(const void *L) { return puc_ptr(L, LAY.state_l_G); }

/* XXX: a full collection (collectgarbage()) runs its atomic phase and first
** sweep outside any step: that work shows as its caller's. */
bool puc_collecting(const void *g) {
  if (LAY.global_gcstopem == PUC_NONE) return false;
  return puc_byte(g, LAY.global_gcstopem) ||
         (puc_byte(g, LAY.global_gckind) == LAY.gen_kind &&
          puc_byte(g, LAY.global_gcstate) != LAY.rest_state);
}

static inline bool status_lua(unsigned status) {
  return LAY.cist_lua ? (status & LAY.cist_lua) != 0 : !(status & LAY.cist_c);
}

/* Whether a Lua frame of this status began a run of luaV_execute. */
static inline bool status_fresh(unsigned status) {
  return LAY.cist_fresh ? (status & LAY.cist_fresh) != 0
                        : LAY.cist_reentry && !(status & LAY.cist_reentry);
}

/* A stack slot's tag and value. */
struct Slot {
  int tt;
  const void *value;
};

static bool read_slot(bool safe, const void *slot, struct Slot *out) {
  unsigned char copy[32];
  const void *tv = slot;
  if (safe) {
    if (LAY.tvalue_size > sizeof copy || !safe_read(copy, slot, LAY.tvalue_size)) return false;
    tv = copy;
  }
  out->value = puc_ptr(tv, 0);
  out->tt = LAY.tt_bytes == 1 ? puc_byte(tv, LAY.tvalue_tt) : puc_int(tv, LAY.tvalue_tt);
  return true;
}

/* A closure's object tag and, in 5.1, its isC flag (-1 elsewhere). Read
** in place unless safe (then copied first). */
static bool read_closure(bool safe, const void *cl, const void **fp, int *tt, int *isc) {
  unsigned char copy[64];
  const void *head = cl;
  if (safe) {
    const uint16_t end = LAY.lclosure_proto + sizeof(void *);
    if (end > sizeof copy || !safe_read(copy, cl, end)) return false;
    head = copy;
  }
  *tt = puc_byte(head, LAY.gc_tt);
  *isc = LAY.closure_isc == PUC_NONE ? -1 : puc_byte(head, LAY.closure_isc);
  *fp = puc_ptr(head, LAY.lclosure_proto); /* f and p share the place */
  return true;
}

/* 5.4: the last absolute line entry at or before pc of the prototype p (a
** copy), starting from Lua's own estimate; false when the table is not
** what Lua writes. */
struct AbsLineInfo {
  int pc, line;
};
static bool abs_base(const void *p, int pc, bool safe, int *basepc, int *line) {
  const struct AbsLineInfo *abs = puc_ptr(p, LAY.proto_abslineinfo);
  const int size = puc_int(p, LAY.proto_sizeabslineinfo);
  struct AbsLineInfo a, next;
  int i = pc / LAY.maxiwthabs - 1;
  if (i < 0) i = 0;
  if (i >= size) i = size - 1;
  if (!read_bytes(safe, &a, abs + i, sizeof a)) return false;
  for (int guard = 0; a.pc > pc; guard++) {
    if (i == 0) {
      *basepc = -1;
      *line = puc_int(p, LAY.proto_linedefined);
      return true;
    }
    if (guard == 64 || !read_bytes(safe, &a, abs + --i, sizeof a)) return false;
  }
  for (int guard = 0; i + 1 < size; guard++) {
    if (guard == 64 || !read_bytes(safe, &next, abs + i + 1, sizeof next)) return false;
    if (next.pc > pc) break;
    a = next;
    i++;
  }
  *basepc = a.pc;
  *line = a.line;
  return true;
}

/* The line of instruction pc in the prototype p (a copy), 0 if unknown. */
static uint32_t line_at(const void *p, int pc, bool safe) {
  const int linedefined = puc_int(p, LAY.proto_linedefined);
  const void *lineinfo = puc_ptr(p, LAY.proto_lineinfo);
  const int sizelineinfo = puc_int(p, LAY.proto_sizelineinfo);
  if (!LAY.line_deltas) { /* an int per instruction */
    if (pc < 0) return linedefined > 0 ? (uint32_t)linedefined : 0;
    int at = 0;
    if (!lineinfo || pc >= sizelineinfo ||
        !read_bytes(safe, &at, (const int *)lineinfo + pc, sizeof at))
      return 0; /* stripped */
    return at > 0 ? (uint32_t)at : 0;
  }
  if (!lineinfo || pc >= sizelineinfo) return 0; /* stripped */
  if (pc < 0) return (uint32_t)linedefined;      /* not started yet */
  int basepc = -1, line = linedefined;
  if (puc_int(p, LAY.proto_sizeabslineinfo) > 0 && !abs_base(p, pc, safe, &basepc, &line))
    return 0;
  const int n = pc - basepc; /* deltas lineinfo[basepc + 1 .. pc] */
  const signed char *delta = (const signed char *)lineinfo + basepc + 1;
  signed char copy[2 * 128];
  if (safe) {
    if (n > (int)sizeof copy || n > 2 * LAY.maxiwthabs || !safe_read(copy, delta, (size_t)n))
      return 0;
    delta = copy;
  }
  for (int k = 0; k < n; k++) line += delta[k];
  return line > 0 ? (uint32_t)line : 0;
}

static struct LineCacheEntry *cache_entry(const struct PucWalk *w, const uint32_t *savedpc) {
  return w->cache ? &w->cache->e[((uintptr_t)savedpc >> 2) % LINE_CACHE_SLOTS] : NULL;
}

/* The current line of a Lua frame at savedpc running proto; false if proto
** is not a prototype. Read in place unless safe (then copied first). */
static bool frame_line(struct PucWalk *w, const void *proto, const uint32_t *savedpc, bool safe,
                       uint32_t *line) {
  struct LineCacheEntry *e = cache_entry(w, savedpc);
  if (e && e->savedpc == savedpc && e->proto == proto && e->epoch == w->epoch) {
    *line = e->line;
    return true;
  }
  unsigned char copy[256];
  const void *p = proto;
  if (safe) {
    if (LAY.proto_size > sizeof copy || !safe_read(copy, proto, LAY.proto_size)) return false;
    p = copy;
  }
  if (puc_byte(p, LAY.gc_tt) != LAY.proto_tag) return false;
  const uint32_t *code = puc_ptr(p, LAY.proto_code);
  if (savedpc < code || savedpc > code + puc_int(p, LAY.proto_sizecode)) {
    *line = 0; /* a tail call is replacing this frame's function */
    return true;
  }
  *line = line_at(p, (int)(savedpc - code) - 1, safe);
  if (e) *e = (struct LineCacheEntry){savedpc, proto, *line, w->epoch};
  return true;
}

static void emit(struct PucWalk *w, uint8_t type, uint64_t addr, uint64_t line,
                 const void *closure, bool tail) {
  w->frames[w->n] = (struct prof_guest_frame){type, addr, line};
  if (w->closures) w->closures[w->n] = closure;
  if (w->tails) w->tails[w->n] = tail;
  w->n++;
}

/* Appends a Lua frame named by the line cache from its saved pc alone, or
** returns false. Only where no frame is half-written: there a frame's saved
** pc lies in the code of the prototype it runs, so a cached pc names both
** without reading the closure (prototypes freed since bump the epoch). */
static inline bool emit_cached(struct PucWalk *w, const uint32_t *savedpc, bool tail) {
  const struct LineCacheEntry *e = cache_entry(w, savedpc);
  if (!e || e->savedpc != savedpc || e->epoch != w->epoch) return false;
  emit(w, PROF_FRAME_LFUNC, (uint64_t)(uintptr_t)e->proto, e->line, NULL, tail);
  return true;
}

/* XXX: a C function's return copies its first result over its function
** slot (the value, then the tag), so a signal in between sees the result's
** value under a light C function's tag. The results sit at the top of the
** stack: a slot there holding that value under another tag means the copy
** is under way. Scans at most RESULT_SCAN_SLOTS results. */
#define RESULT_SCAN_SLOTS 64
static bool result_half_copied(const struct Slot *fn, const char *func, const char *top) {
  const char *from = func + LAY.tvalue_size;
  if ((top - func) / LAY.tvalue_size > RESULT_SCAN_SLOTS)
    from = top - RESULT_SCAN_SLOTS * LAY.tvalue_size;
  for (const char *s = from; s < top; s += LAY.tvalue_size) {
    struct Slot v;
    if (!read_slot(true, s, &v)) return true;
    if (v.value == fn->value && v.tt != fn->tt) return true;
  }
  return false;
}

/* One frame: which kind it is, and what it runs. */
struct Frame {
  const char *ci;
  bool lua, tail, fresh;
};

/* Appends the frame of ci (false: unreadable or in flux, left out).
** in_flux_top: the state's top if this frame may be half-written, else NULL;
** savedpc: the frame's pc; cacheable: savedpc is the frame's own (in 5.1
** the innermost one's is the state's, which a call may not have moved yet). */
static bool walk_frame(struct PucWalk *w, const struct Frame *f, const char *stack,
                       const char *stack_end, const char *in_flux_top, const uint32_t *savedpc,
                       bool cacheable) {
  const bool safe = w->all_safe || in_flux_top;
  if (!safe && f->lua && cacheable && emit_cached(w, savedpc, f->tail)) return true;
  const char *func = puc_ptr(f->ci, LAY.ci_func);
  /* XXX: a slot outside the current stack means the stack is being moved
  ** (luaD_reallocstack): skip the frame, never read the old block. */
  if (func < stack || func >= stack_end) return false;
  struct Slot fn;
  if (!read_slot(safe, func, &fn)) return false;
  if (!f->lua && LAY.tt_light_cfunc >= 0 && fn.tt == LAY.tt_light_cfunc) {
    if (in_flux_top && in_flux_top > func && in_flux_top <= stack_end &&
        result_half_copied(&fn, func, in_flux_top))
      return false;
    emit(w, PROF_FRAME_CFUNC, (uint64_t)(uintptr_t)fn.value, 0, NULL, false);
    return true;
  }
  const void *fp;
  int tt, isc;
  if (fn.tt != (f->lua ? LAY.tt_lua_closure : LAY.tt_c_closure) ||
      !read_closure(safe, fn.value, &fp, &tt, &isc) ||
      tt != (f->lua ? LAY.obj_lua_closure : LAY.obj_c_closure) || (isc >= 0 && isc != !f->lua))
    return false;
  if (!f->lua) {
    emit(w, PROF_FRAME_CFUNC, (uint64_t)(uintptr_t)fp, 0, fn.value, false);
    return true;
  }
  uint32_t line;
  if (!frame_line(w, fp, savedpc, safe, &line)) return false;
  emit(w, PROF_FRAME_LFUNC, (uint64_t)(uintptr_t)fp, line, fn.value, f->tail);
  return true;
}

/* What kind of frame ci holds. 5.1 has no status word: a frame is Lua's
** when its slot holds a closure whose isC is 0. */
static bool classify(struct Frame *f, bool safe) {
  if (LAY.ci_callstatus != PUC_NONE) {
    const unsigned status = puc_status(f->ci);
    f->lua = status_lua(status);
    f->tail = (status & LAY.cist_tail) != 0;
    f->fresh = f->lua && status_fresh(status);
    return true;
  }
  struct Slot fn;
  const void *fp;
  int tt, isc;
  if (!read_slot(safe, puc_ptr(f->ci, LAY.ci_func), &fn) || fn.tt != LAY.tt_lua_closure ||
      !read_closure(safe, fn.value, &fp, &tt, &isc))
    return false;
  f->lua = isc == 0;
  f->tail = f->lua && puc_int(f->ci, LAY.ci_tailcalls) > 0;
  f->fresh = f->lua; /* until its caller says otherwise (called_by_vm) */
  return true;
}

/* Whether a Lua frame at savedpc called the Lua frame above it from its
** own run of the interpreter: never where the release marks fresh frames
** (the mark was read above), else (5.1) when its instruction before savedpc
** is a call. A frame with one above it does not change: its code is read
** directly. */
static bool called_by_vm(const uint32_t *savedpc) {
  return LAY.vm_call_ops && savedpc && ((LAY.vm_call_ops >> (savedpc[-1] & 0x3f)) & 1);
}

void puc_walk_state(struct PucWalk *w, const void *L, bool running) {
  unsigned char copy[512];
  if (w->all_safe && (LAY.state_size > sizeof copy || !safe_read(copy, L, LAY.state_size))) return;
  const void *st = w->all_safe ? (const void *)copy : L;
  const char *stack = puc_ptr(st, LAY.state_stack);
  const char *stack_end =
      (const char *)puc_ptr(st, LAY.state_stack_last) + LAY.extra_stack * LAY.tvalue_size;
  const char *top = puc_ptr(st, LAY.state_top);
  const char *ci = puc_ptr(st, LAY.state_ci);
  const char *base, *array_end = NULL;
  if (LAY.ci_array) {
    base = puc_ptr(st, LAY.state_base_ci);
    array_end = base + (size_t)puc_int(st, LAY.state_size_ci) * LAY.ci_size;
    /* XXX: an array being grown (luaD_reallocCI) is pointed at before the
    ** state's ci is: a ci outside it is read no further. */
    if (ci < base || ci >= array_end || (size_t)(ci - base) % LAY.ci_size) return;
  } else {
    base = (const char *)L + LAY.state_base_ci;
  }
  if (w->n >= w->max) { /* no room left: the state's frames are cut */
    if (!w->all_safe && ci && ci != base) w->cut = true;
    return;
  }
  bool innermost = running, first = true;
  bool fresh_above = false; /* the frame emitted last began a run of the VM */
  unsigned char ci_copy[128];
  for (; ci && ci != base && w->steps_left > 0 && w->n < w->max; w->steps_left--) {
    if (((uintptr_t)ci & (sizeof(void *) - 1)) || LAY.ci_size > sizeof ci_copy) break;
    if (w->all_safe && !safe_read(ci_copy, ci, LAY.ci_size)) break;
    const bool in_flux = innermost && !w->clean_point;
    struct Frame f = {.ci = w->all_safe ? (const char *)ci_copy : ci};
    if (classify(&f, w->all_safe || in_flux)) {
      /* 5.1 keeps the running Lua frame's pc in the state. */
      const bool pc_in_state = first && LAY.state_savedpc != PUC_NONE;
      const uint32_t *savedpc =
          pc_in_state ? puc_ptr(st, LAY.state_savedpc) : puc_ptr(f.ci, LAY.ci_savedpc);
      /* XXX: a Lua frame that native code inside the VM called (a
      ** metamethod, an iterator, a finalizer) runs in a luaV_execute of its
      ** own though its caller is a Lua frame: a boundary frame says so. */
      if (fresh_above && f.lua && w->reentry && !called_by_vm(savedpc)) {
        emit(w, PROF_FRAME_CFUNC, w->reentry, 0, NULL, false);
        if (w->n == w->max) break;
      }
      fresh_above = walk_frame(w, &f, stack, stack_end, in_flux ? top : NULL, savedpc,
                               !pc_in_state) &&
                    f.fresh;
    }
    innermost = first = false;
    if (LAY.ci_array) {
      ci -= LAY.ci_size;
      if (ci < base) break;
    } else {
      ci = puc_ptr(f.ci, LAY.ci_previous);
    }
  }
  if (w->n >= w->max && ci && ci != base) w->cut = true;
}

/* The C function a C frame runs, as walk_frame names it; 0 if unreadable. */
static uint64_t c_function(const char *ci, const char *stack, const char *stack_end) {
  const char *func = puc_ptr(ci, LAY.ci_func);
  if (func < stack || func >= stack_end) return 0;
  struct Slot fn;
  read_slot(false, func, &fn);
  if (LAY.tt_light_cfunc >= 0 && fn.tt == LAY.tt_light_cfunc)
    return (uint64_t)(uintptr_t)fn.value;
  if (fn.tt != LAY.tt_c_closure) return 0;
  return puc_byte(fn.value, LAY.gc_tt) == LAY.obj_c_closure
             ? (uint64_t)(uintptr_t)puc_ptr(fn.value, LAY.cclosure_f)
             : 0;
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
static int trail_find(const struct TrailEntry *e, int eb, int ee, const void *ci) {
  for (int p = ee - 1; p >= eb; p--)
    if (e[p].ci == ci) return p;
  return -1;
}

/* Whether the slot of ci's function lies outside the current stack: the
** stack is being moved (luaD_reallocstack frees the old block after
** pointing the frames at the new one). */
static bool stack_moving(const char *L, const char *ci) {
  const char *stack = puc_ptr(L, LAY.state_stack);
  const char *stack_end =
      (const char *)puc_ptr(L, LAY.state_stack_last) + LAY.extra_stack * LAY.tvalue_size;
  const char *func = puc_ptr(ci, LAY.ci_func);
  return func < stack || func >= stack_end;
}

/* Walks L from its innermost frame down to the first CallInfo whose
** remembered frames can be kept (plan->reuse_*), the new ones into tmp and
** w->frames. old: the remembered walk, whose entries [plan->eb, ee) are L's
** and in place, or NULL. False when the walk outgrows the trail or w, or
** L's stack is being moved. */
static bool walk_changed(struct PucWalk *w, const char *L, const struct WalkTrail *old, int ee,
                         struct TrailEntry *tmp, struct StatePlan *plan) {
  const char *stack = puc_ptr(L, LAY.state_stack);
  const char *stack_end =
      (const char *)puc_ptr(L, LAY.state_stack_last) + LAY.extra_stack * LAY.tvalue_size;
  const char *base = L + LAY.state_base_ci;
  char *ci = (char *)puc_ptr(L, LAY.state_ci);
  /* XXX: a stack being moved reads as a walk would skip frames: then a
  ** plain walk, never frames kept from before. */
  if (ci != base && stack_moving(L, ci)) return false;
  int ne = 0;
  plan->reuse_e = plan->eb;
  plan->reuse_f = plan->fb;
  bool fresh_above = false; /* the frame emitted last began a run of the VM */
  for (; ci != base; ci = (char *)puc_ptr(ci, LAY.ci_previous)) {
    if (ne == TRAIL_MAX || w->n >= w->max || !ci || ((uintptr_t)ci & (sizeof(void *) - 1)))
      return false;
    const unsigned marked = puc_status(ci);
    const unsigned short status = (unsigned short)(marked & ~(unsigned)LAY.cist_walked);
    const struct Frame f = {.ci = ci, .lua = status_lua(status),
                            .tail = (status & LAY.cist_tail) != 0};
    const uint32_t *savedpc = puc_ptr(ci, LAY.ci_savedpc);
    const void *key = f.lua ? (const void *)savedpc
                            : (const void *)(uintptr_t)c_function(ci, stack, stack_end);
    if (fresh_above && f.lua && w->reentry) {
      w->frames[w->n++] = (struct prof_guest_frame){PROF_FRAME_CFUNC, w->reentry, 0};
      if (w->n == w->max) return false;
    }
    /* XXX: a CallInfo still marked was not pushed again since the
    ** remembered walk read it, nor were those below it popped; with the same
    ** saved pc it is at the same line (the running state's innermost frame
    ** too: at an allocation its saved pc is the VM's own). */
    if (old && (marked & LAY.cist_walked) && key) {
      const int p = trail_find(old->e, plan->eb, ee, ci);
      if (p >= 0 && old->e[p].status == status && old->e[p].key == key) {
        plan->reuse_e = p + 1;
        plan->reuse_f = old->e[p].frame_end;
        break;
      }
    }
    const int at = w->n;
    const bool emitted = walk_frame(w, &f, stack, stack_end, NULL, savedpc, true);
    tmp[ne++] = (struct TrailEntry){ci, emitted ? key : NULL, status, at};
    puc_set_status(ci, marked | LAY.cist_walked);
    fresh_above = emitted && f.lua && status_fresh(status);
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
static int place_walked(struct WalkTrail *t, const struct PucWalk *w,
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

const struct prof_guest_frame *puc_walk_nothing_pushed(struct WalkTrail *t, const void *L,
                                                       int max, uint32_t epoch, uint64_t reentry,
                                                       const void *main, int *n) {
  if (t->entries == 0 || t->nstates != 1 || t->state[0].L != L || t->epoch != epoch ||
      t->reentry != reentry || t->main != main)
    return NULL;
  const char *ci = puc_ptr(L, LAY.state_ci);
  /* walk_changed's tests, in its order: a stack being moved, then the mark. */
  if (ci == (const char *)L + LAY.state_base_ci || stack_moving(L, ci)) return NULL;
  const unsigned status = puc_status(ci);
  if (!(status & LAY.cist_walked) || !status_lua(status)) return NULL;
  const int p = trail_find(t->e, 0, t->entries, ci);
  if (p < 0 || t->e[p].status != (unsigned short)(status & ~(unsigned)LAY.cist_walked) ||
      !t->e[p].key || t->e[p].key != puc_ptr(ci, LAY.ci_savedpc) || t->e[p].frame_end > max)
    return NULL;
  /* The frames of the CallInfos popped since are forgotten, as a walk would. */
  t->entries = p + 1;
  t->nframes = t->e[p].frame_end;
  *n = t->nframes;
  return t->frames + TRAIL_FRAMES - t->nframes;
}

const struct prof_guest_frame *puc_walk_remembered(struct PucWalk *w, const void *const *states,
                                                   int nstates, struct WalkTrail *t,
                                                   const void *main, int *unchanged) {
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
    const void *L = states[nstates - 1 - j];
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
      for (int k = 0; k < nstates; k++) puc_walk_state(w, states[k], k == 0);
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
