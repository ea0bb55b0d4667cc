#include "puc_walk.h"

#include <string.h>

#include <lua.h>

#include "puc_layout.h"

#define LAY puc_layout

static inline bool read_bytes(bool safe, void *dst, const void *src, size_t n) {
  if (!safe) {
    memcpy(dst, src, n);
    return true;
  }
  return safe_read(dst, src, n);
}

const void *puc_global(const void *L) { return puc_ptr(L, LAY.state_l_G); }

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

/* The current line of a Lua frame at savedpc in proto; false if proto is
** not a prototype. Read in place unless safe (then copied first). */
static bool frame_line(const void *proto, const uint32_t *savedpc, bool safe, uint32_t *line) {
  unsigned char copy[256];
  const void *p = proto;
  if (safe) {
    if (LAY.proto_size > sizeof copy || !safe_read(copy, proto, LAY.proto_size)) return false;
    p = copy;
  }
  if (puc_byte(p, LAY.gc_tt) != LAY.proto_tag) return false;
  const uint32_t *code = puc_ptr(p, LAY.proto_code);
  const int sizecode = puc_int(p, LAY.proto_sizecode);
  const int *lineinfo = puc_ptr(p, LAY.proto_lineinfo);
  const int pc = (int)(savedpc - code) - 1;
  *line = 0;
  if (savedpc < code || savedpc > code + sizecode) return true; /* a tail call in flux */
  if (pc < 0) {
    const int first = puc_int(p, LAY.proto_linedefined);
    *line = first > 0 ? (uint32_t)first : 0;
    return true;
  }
  int at = 0;
  if (!lineinfo || pc >= puc_int(p, LAY.proto_sizelineinfo) ||
      !read_bytes(safe, &at, lineinfo + pc, sizeof at))
    return true; /* stripped */
  *line = at > 0 ? (uint32_t)at : 0;
  return true;
}

static void emit(struct PucWalk *w, uint8_t type, uint64_t addr, uint64_t line,
                 const void *closure, bool tail) {
  w->frames[w->n] = (struct prof_guest_frame){type, addr, line};
  if (w->closures) w->closures[w->n] = closure;
  if (w->tails) w->tails[w->n] = tail;
  w->n++;
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
** savedpc: the frame's pc. */
static bool walk_frame(struct PucWalk *w, const struct Frame *f, const char *stack,
                       const char *stack_end, const char *in_flux_top, const uint32_t *savedpc) {
  const bool safe = w->all_safe || in_flux_top;
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
  if (!frame_line(fp, savedpc, safe, &line)) return false;
  emit(w, PROF_FRAME_LFUNC, (uint64_t)(uintptr_t)fp, line, fn.value, f->tail);
  return true;
}

/* What kind of frame ci holds. 5.1 has no status word: a frame is Lua's
** when its slot holds a closure whose isC is 0. */
static bool classify(struct Frame *f, bool safe) {
  if (LAY.ci_callstatus != PUC_NONE) {
    const unsigned status = LAY.callstatus_bytes == 1
                                ? puc_byte(f->ci, LAY.ci_callstatus)
                                : *(const unsigned short *)(const void *)(f->ci + LAY.ci_callstatus);
    f->lua = (status & LAY.cist_lua) != 0;
    f->tail = (status & LAY.cist_tail) != 0;
    f->fresh = f->lua && (LAY.cist_fresh ? (status & LAY.cist_fresh) != 0
                                         : LAY.cist_reentry && !(status & LAY.cist_reentry));
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
  if (w->n >= w->max) return;
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
      const uint32_t *savedpc = first && LAY.state_savedpc != PUC_NONE
                                    ? puc_ptr(st, LAY.state_savedpc)
                                    : puc_ptr(f.ci, LAY.ci_savedpc);
      if (fresh_above && f.lua && w->reentry && !called_by_vm(savedpc)) {
        emit(w, PROF_FRAME_CFUNC, w->reentry, 0, NULL, false);
        if (w->n == w->max) break;
      }
      fresh_above =
          walk_frame(w, &f, stack, stack_end, in_flux ? top : NULL, savedpc) && f.fresh;
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
