#include "frame_walk.h"

#include <string.h>

#include "line_cache.h"
#include "lj_build.h"
#include "safe_read.h"

static inline bool read_vm(bool safe, void *dst, const void *src, size_t n) {
  if (!safe) {
    memcpy(dst, src, n);
    return true;
  }
  return lj_safe_read(dst, src, n);
}

/* The object at src: itself when reads are direct, else a checked copy in
** copy (NULL if unreadable). */
static inline const void *view(bool safe, void *copy, const void *src, size_t n) {
  if (!safe) return src;
  return lj_safe_read(copy, src, n) ? copy : NULL;
}

uint32_t frame_walk_line(const LJProto *at, const uint32_t *pc, bool safe,
                         const struct LjLayout *o) {
  char copy[LJ_COPY_MAX];
  const void *pt = pc ? view(safe, copy, at, o->pt_size) : NULL;
  if (!pt || lj_gct(pt, o) != LJ_GCT_PROTO) return 0;
  const uint32_t *bc = lj_proto_bc(at, o);
  const uint32_t sizebc = lj_u32(pt, o->pt_sizebc), numline = lj_u32(pt, o->pt_numline);
  const uint32_t firstline = lj_u32(pt, o->pt_firstline);
  if (pc <= bc || pc > bc + sizebc + 1) return 0;
  /* lj_debug_frameline: the PC points after the running instruction. */
  const uint32_t pos = (uint32_t)(pc - bc) - 1;
  if (pos > sizebc) return 0; /* a JLOOP's trace exit: not undone here */
  if (pos == sizebc) return firstline + numline;
  if (pos == 0) return firstline;
  const void *lineinfo = (const void *)(uintptr_t)lj_ref(pt, o->pt_lineinfo, o);
  if (!lineinfo) return 0; /* stripped bytecode */
  const uint32_t i = pos - 1;
  uint32_t delta = 0;
  if (numline < 256) {
    uint8_t d;
    if (!read_vm(safe, &d, (const uint8_t *)lineinfo + i, sizeof d)) return 0;
    delta = d;
  } else if (numline < 65536) {
    uint16_t d;
    if (!read_vm(safe, &d, (const uint16_t *)lineinfo + i, sizeof d)) return 0;
    delta = d;
  } else if (!read_vm(safe, &delta, (const uint32_t *)lineinfo + i, sizeof delta)) {
    return 0;
  }
  return firstline + delta;
}

const uint32_t *frame_walk_saved_pc(const LJState *L, bool safe, const struct LjLayout *o) {
  void *cframe;
  if (!read_vm(safe, &cframe, (const char *)L + o->L_cframe, sizeof cframe)) return NULL;
  const char *cf = (const char *)((uintptr_t)cframe & LJ_CFRAME_RAWMASK);
  if (!cf) return NULL;
  uint64_t pc = 0, owner = 0; /* (little-endian: a narrower reference fills the low bytes) */
  if (!read_vm(safe, &pc, cf + o->cf_pc, o->ref) || !read_vm(safe, &owner, cf + o->cf_L, o->ref))
    return NULL;
  /* The VM stores its lua_State there when it has no PC to save. */
  if (pc == owner) return NULL;
  return (const uint32_t *)(uintptr_t)pc;
}

static void emit(struct FrameWalk *w, uint8_t type, uint8_t kind, uint64_t addr, uint64_t line) {
  w->frames[w->n] = (struct prof_guest_frame){type, addr, line};
  if (w->kinds) w->kinds[w->n] = kind;
  w->n++;
}

/* Appends the function of one frame, after the re-entry mark if the frame
** above it was entered from native code and this one is not a C function;
** false if the slot holds no function. */
static inline __attribute__((always_inline)) bool emit_function(struct FrameWalk *w, uint64_t fnv,
                                                                 const uint32_t *pc,
                                                                 bool reentered_above,
                                                                 const bool safe,
                                                                 const struct LjLayout *o) {
  if (o->fn_tagged && lj_tag(fnv, o) != ~LJ_GCT_FUNC) return false;
  const LJFunc *at = (const LJFunc *)(uintptr_t)lj_gcref(fnv, o);
  char copy[LJ_COPY_MAX];
  const void *fn = view(safe, copy, at, o->fn_size);
  if (!fn || lj_gct(fn, o) != LJ_GCT_FUNC) return false;
  const uint8_t ffid = lj_u8(fn, o->fn_ffid);
  if (reentered_above && w->reentry && ffid != LJ_FF_C && w->n + 1 < w->max)
    emit(w, PROF_FRAME_CFUNC, FRAME_KIND_C, w->reentry, 0);
  if (ffid == LJ_FF_LUA) {
    const LJProto *pt = lj_func_proto(fn, o);
    emit(w, PROF_FRAME_LFUNC, FRAME_KIND_LUA, (uint64_t)(uintptr_t)pt,
         safe ? frame_walk_line(pt, pc, true, o) : line_cache_line(pt, pc, o));
  } else if (ffid == LJ_FF_C) {
    emit(w, PROF_FRAME_CFUNC, FRAME_KIND_C, lj_u64(fn, o->fn_f), 0);
  } else {
    emit(w, PROF_FRAME_FFUNC, FRAME_KIND_BUILTIN, ffid, 0);
  }
  return true;
}

/* Appends the trail's frames from entry k down. */
static int append_trail(const struct FrameTrail *t, int k, struct prof_guest_frame *frames,
                        uint8_t *kinds, int n) {
  const int from = t->e[k].out_at + t->e[k].nout;
  memcpy(frames + n, &t->out[TRAIL_OUT - from], from * sizeof *frames);
  memcpy(kinds + n, &t->kinds[TRAIL_OUT - from], from * sizeof *kinds);
  return n + from;
}

/* frame_walk, with reads direct or checked as safe says, on layout o (both
** constants once inlined: each kind of walk is compiled without the other's
** tests, with its offsets). */
static inline __attribute__((always_inline)) void walk(struct FrameWalk *w, const LJState *at,
                                                       const uint64_t *base,
                                                       const uint32_t *top_pc, const bool safe,
                                                       const struct LjLayout *o) {
  char copy[LJ_COPY_MAX];
  const void *L = view(safe, copy, at, o->L_size);
  w->clean = false;
  if (!L) return;
  const uint64_t *stack = (const uint64_t *)(uintptr_t)lj_ref(L, o->L_stack, o);
  const uint64_t *bottom = stack + o->fr2, *end = stack + lj_u32(L, o->L_stacksize);
  const uint64_t *frame = base - 1;
  const uint32_t *pc = top_pc;
  bool reentered = false; /* the frame emitted last was entered from native code */
  const struct FrameTrail *const trail = safe ? NULL : w->trail;
  /* The trail's part for this thread, its entries scanned down with frame. */
  const struct TrailThread *th = trail && w->matched < 0 ? frame_trail_thread(trail, at) : NULL;
  int cur = th ? th->hi - 1 : -1, below = th ? th->hi : 0;
  for (;;) {
    if (frame <= bottom) {
      w->clean = true;
      break;
    }
    if (frame >= end || w->n >= w->max || w->steps_left-- <= 0 || ((uintptr_t)frame & 7)) break;
    uint64_t slots[2]; /* the function, the link (one slot without FR2) */
    if (!read_vm(safe, slots, frame - o->fr2, (1u + o->fr2) * sizeof *slots)) break;
    const uint64_t link = slots[o->fr2] >> o->link_shift;
    const uint64_t delta = link & ~(uint64_t)LJ_FRAME_TYPEP;
    if (th) {
      while (cur >= th->lo && trail->e[cur].frame > frame) cur--;
      /* Entries from `below` up were found not to hold. */
      if (cur >= th->lo && cur < below && trail->e[cur].frame == frame) {
        /* The walk would take that many more frames and steps: uncut? */
        const int more = trail->e[cur].out_at + trail->e[cur].nout;
        const int differs = w->n + more <= w->max - 2 && cur <= w->steps_left
                                ? frame_trail_check(trail, th, cur, pc, reentered, o)
                                : th->lo;
        if (differs < 0) {
          w->n = append_trail(trail, cur, w->frames, w->kinds, w->n);
          w->matched = cur;
          w->clean = true;
          break;
        }
        below = differs;
      }
    }
    struct TrailEntry *step = w->fresh && w->nfresh < TRAIL_MAX ? &w->fresh[w->nfresh++] : NULL;
    if (step)
      *step = (struct TrailEntry){frame, slots[0], slots[o->fr2], {0, 0}, pc, reentered, 0, 0};
    if ((link & LJ_FRAME_TYPEP) == LJ_FRAME_VARG) { /* a vararg call's pseudo-frame */
      if (delta == 0) break;
      frame = (const uint64_t *)((const char *)frame - delta);
      continue;
    }
    const int before = w->n;
    /* A dummy frame (lj_err_optype_call) holds the thread itself. */
    if (lj_gcref(slots[0], o) != (uintptr_t)at &&
        !emit_function(w, slots[0], pc, reentered, safe, o))
      break;
    if (step) step->nout = (uint8_t)(w->n - before);
    reentered = false;
    if ((link & LJ_FRAME_TYPE) == LJ_FRAME_LUA) { /* called from Lua: the return PC */
      const uint32_t *ret = (const uint32_t *)(uintptr_t)link;
      uint32_t call;
      if (!ret || !read_vm(safe, &call, ret - 1, sizeof call)) break;
      frame -= 1 + o->fr2 + ((call >> 8) & 0xff); /* the caller's base is A slots below */
      pc = ret;
      continue;
    }
    pc = NULL; /* called from C or through pcall: the caller's PC is in a cframe */
    reentered = (link & LJ_FRAME_TYPE) == LJ_FRAME_C;
    if ((link & LJ_FRAME_TYPEP) == LJ_FRAME_CONT) { /* a continuation keeps it below */
      uint64_t cont[2]; /* the continuation, the PC (one slot without FR2) */
      if (!read_vm(safe, cont, frame - 1 - 2 * o->fr2, (1u + o->fr2) * sizeof *cont)) break;
      if (step) step->cont[0] = cont[0], step->cont[1] = o->fr2 ? cont[1] : slots[0];
      reentered = (cont[0] & (o->fr2 ? UINT64_MAX : UINT32_MAX)) == LJ_CONT_FFI_CALLBACK;
      if (!reentered) pc = (const uint32_t *)(uintptr_t)(cont[o->fr2] >> o->link_shift);
    }
    if (delta == 0) {
      w->clean = true;
      break;
    }
    frame = (const uint64_t *)((const char *)frame - delta);
  }
}

/* The walks the allocator wrapper of a GC64 VM does not take, out of its
** way (as in vm_capture.c). */
static __attribute__((noinline)) void walk_checked(struct FrameWalk *w, const LJState *at,
                                                   const uint64_t *base, const uint32_t *top_pc) {
  walk(w, at, base, top_pc, true, lj_build->layout);
}
static __attribute__((noinline)) void walk_ref32(struct FrameWalk *w, const LJState *at,
                                                 const uint64_t *base, const uint32_t *top_pc) {
  walk(w, at, base, top_pc, false, &lj_layout_ref32);
}

void frame_walk(struct FrameWalk *w, const LJState *at, const uint64_t *base,
                const uint32_t *top_pc) {
  if (w->safe)
    walk_checked(w, at, base, top_pc);
  else if (lj_build->layout->fr2)
    walk(w, at, base, top_pc, false, &lj_layout_gc64);
  else
    walk_ref32(w, at, base, top_pc);
}
