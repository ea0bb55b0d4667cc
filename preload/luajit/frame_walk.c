#include "frame_walk.h"

#include <string.h>

#include "line_cache.h"
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

uint32_t frame_walk_line(const LJProto *at, const uint32_t *pc, bool safe) {
  LJProto copy;
  const LJProto *pt = pc ? view(safe, &copy, at, sizeof copy) : NULL;
  if (!pt || pt->gct != LJ_GCT_PROTO) return 0;
  const uint32_t *bc = lj_proto_bc(at);
  if (pc <= bc || pc > bc + pt->sizebc + 1) return 0;
  /* lj_debug_frameline: the PC points after the running instruction. */
  const uint32_t pos = (uint32_t)(pc - bc) - 1;
  if (pos > pt->sizebc) return 0; /* a JLOOP's trace exit: not undone here */
  if (pos == pt->sizebc) return (uint32_t)(pt->firstline + pt->numline);
  if (pos == 0) return (uint32_t)pt->firstline;
  if (!pt->lineinfo) return 0; /* stripped bytecode */
  const uint32_t i = pos - 1;
  uint32_t delta = 0;
  if (pt->numline < 256) {
    uint8_t d;
    if (!read_vm(safe, &d, (const uint8_t *)pt->lineinfo + i, sizeof d)) return 0;
    delta = d;
  } else if (pt->numline < 65536) {
    uint16_t d;
    if (!read_vm(safe, &d, (const uint16_t *)pt->lineinfo + i, sizeof d)) return 0;
    delta = d;
  } else if (!read_vm(safe, &delta, (const uint32_t *)pt->lineinfo + i, sizeof delta)) {
    return 0;
  }
  return (uint32_t)pt->firstline + delta;
}

const uint32_t *frame_walk_saved_pc(const LJState *L, bool safe) {
  void *cframe;
  if (!read_vm(safe, &cframe, &L->cframe, sizeof cframe)) return NULL;
  const char *cf = (const char *)((uintptr_t)cframe & LJ_CFRAME_RAWMASK);
  if (!cf) return NULL;
  uint64_t pc, owner;
  if (!read_vm(safe, &pc, cf + LJ_CFRAME_OFS_PC, sizeof pc) ||
      !read_vm(safe, &owner, cf + LJ_CFRAME_OFS_L, sizeof owner))
    return NULL;
  /* The VM stores its lua_State there when it has no PC to save. */
  if (pc == owner) return NULL;
  return (const uint32_t *)(uintptr_t)pc;
}

static void emit(struct FrameWalk *w, uint8_t type, uint8_t kind, uint64_t addr, uint64_t line) {
  w->frames[w->n] = (struct prof_guest_frame){type, addr, line};
  if (w->kinds) w->kinds[w->n] = kind;
  if (w->remembered) w->remembered[w->n] = 0;
  w->n++;
}

/* Appends the function of one frame, after the re-entry mark if the frame
** above it was entered from native code and this one is not a C function;
** false if the slot holds no function. */
static bool emit_function(struct FrameWalk *w, uint64_t fnv, const uint32_t *pc,
                          bool reentered_above) {
  if (lj_tag(fnv) != ~LJ_GCT_FUNC) return false;
  const LJFunc *at = (const LJFunc *)(uintptr_t)lj_gcref(fnv);
  LJFunc copy;
  const LJFunc *fn = view(w->safe, &copy, at, sizeof copy);
  if (!fn || fn->gct != LJ_GCT_FUNC) return false;
  if (reentered_above && w->reentry && fn->ffid != LJ_FF_C && w->n + 1 < w->max)
    emit(w, PROF_FRAME_CFUNC, FRAME_KIND_C, w->reentry, 0);
  if (fn->ffid == LJ_FF_LUA) {
    const LJProto *pt = lj_func_proto(fn);
    emit(w, PROF_FRAME_LFUNC, FRAME_KIND_LUA, (uint64_t)(uintptr_t)pt,
         w->safe ? frame_walk_line(pt, pc, true) : line_cache_line(pt, pc));
  } else if (fn->ffid == LJ_FF_C) {
    emit(w, PROF_FRAME_CFUNC, FRAME_KIND_C, (uint64_t)(uintptr_t)fn->f, 0);
  } else {
    emit(w, PROF_FRAME_FFUNC, FRAME_KIND_BUILTIN, fn->ffid, 0);
  }
  return true;
}

void frame_walk(struct FrameWalk *w, const LJState *at, const uint64_t *base,
                const uint32_t *top_pc) {
  LJState copy;
  const LJState *L = view(w->safe, &copy, at, sizeof copy);
  if (!L) return;
  const uint64_t *bottom = L->stack + 1, *end = L->stack + L->stacksize;
  const uint64_t *frame = base - 1;
  const uint32_t *pc = top_pc;
  bool reentered = false; /* the frame emitted last was entered from native code */
  /* In locals: the stores of frames would otherwise reload them all. */
  struct FrameMemo *const memo = w->memo;
  const uint32_t epoch = memo ? memo->epoch : 0;
  struct prof_guest_frame *const frames = w->frames;
  uint8_t *const kinds = w->kinds, *const remembered = w->remembered;
  const uint64_t reentry = w->reentry;
  const int max = w->max;
  int n = w->n, steps_left = w->steps_left;
  while (frame > bottom && frame < end && n < max && steps_left-- > 0) {
    if ((uintptr_t)frame & 7) break;
    uint64_t slots[2]; /* the function, the link */
    if (!read_vm(w->safe, slots, frame - 1, sizeof slots)) break;
    const uint64_t link = slots[1];
    const uint64_t delta = link & ~(uint64_t)LJ_FRAME_TYPEP;
    if ((link & LJ_FRAME_TYPEP) == LJ_FRAME_VARG) { /* a vararg call's pseudo-frame */
      if (delta == 0) break;
      frame = (const uint64_t *)((const char *)frame - delta);
      continue;
    }
    /* Room for a re-entry mark and the frame: the limit cuts neither. */
    const bool use_memo = memo && n + 2 <= max;
    if (use_memo) {
      const struct FrameMemoEntry *e =
          frame_memo_find(memo, epoch, frame, at, slots[0], link, pc, reentered);
      if (e) {
        const struct FrameMemoEntry hit = *e;
        if (hit.mark) {
          frames[n] = (struct prof_guest_frame){PROF_FRAME_CFUNC, reentry, 0};
          kinds[n] = FRAME_KIND_C;
          remembered[n++] = 1;
        }
        frames[n] = hit.out;
        kinds[n] = hit.kind;
        remembered[n++] = 1;
        if (!hit.next) break;
        frame = hit.next;
        pc = hit.next_pc;
        reentered = hit.next_reentered;
        continue;
      }
    }
    const uint32_t *const pc_in = pc;
    const bool reentered_in = reentered;
    w->n = n;
    /* A dummy frame (lj_err_optype_call) holds the thread itself. */
    const bool walked = lj_gcref(slots[0]) == (uintptr_t)at || emit_function(w, slots[0], pc, reentered);
    const int before = n;
    n = w->n;
    if (!walked) break;
    const uint64_t *next;
    reentered = false;
    if ((link & LJ_FRAME_TYPE) == LJ_FRAME_LUA) { /* called from Lua: the return PC */
      const uint32_t *ret = (const uint32_t *)(uintptr_t)link;
      uint32_t call;
      if (!ret || !read_vm(w->safe, &call, ret - 1, sizeof call)) break;
      next = frame - 2 - ((call >> 8) & 0xff); /* the caller's base is A slots below */
      pc = ret;
    } else {
      pc = NULL; /* called from C or through pcall: the caller's PC is in a cframe */
      reentered = (link & LJ_FRAME_TYPE) == LJ_FRAME_C;
      if ((link & LJ_FRAME_TYPEP) == LJ_FRAME_CONT) { /* a continuation keeps it two below */
        uint64_t cont[2]; /* the continuation, the PC */
        if (!read_vm(w->safe, cont, frame - 3, sizeof cont)) break;
        reentered = cont[0] == LJ_CONT_FFI_CALLBACK;
        if (!reentered) pc = (const uint32_t *)(uintptr_t)cont[1];
      }
      next = delta == 0 ? NULL : (const uint64_t *)((const char *)frame - delta);
    }
    if (use_memo && (link & LJ_FRAME_TYPEP) != LJ_FRAME_CONT && n > before) {
      *frame_memo_slot(memo, frame) = (struct FrameMemoEntry){
          frame, at, slots[0], link, pc_in, epoch, reentered_in, n - before == 2, kinds[n - 1],
          frames[n - 1], next, pc, reentered};
    }
    if (!next) break;
    frame = next;
  }
  w->n = n;
  w->steps_left = steps_left;
}
