#include "frame_trail.h"

const struct TrailThread *frame_trail_thread(const struct FrameTrail *t, const LJState *L) {
  if (t->n == 0) return NULL;
  for (int i = 0; i < t->nth; i++)
    if (t->th[i].L == L) return &t->th[i];
  return NULL;
}

/* The highest entry of [lo, hi) whose slots are not as they were, or -1. */
static inline __attribute__((always_inline)) int entries_differ(const struct TrailEntry *e, int lo, int hi, const struct LjLayout *o) {
  const int fr2 = o->fr2, shift = o->link_shift;
  for (int i = hi - 1; i >= lo; i--) {
    const uint64_t *f = e[i].frame;
    if (f[-fr2] != e[i].fn || f[0] != e[i].link) return i;
    if (((e[i].link >> shift) & LJ_FRAME_TYPEP) == LJ_FRAME_CONT &&
        (f[-1 - 2 * fr2] != e[i].cont[0] || f[-2 * fr2] != e[i].cont[1]))
      return i;
  }
  return -1;
}

static const uint64_t *stack_of(const LJState *L, const struct LjLayout *o) {
  return (const uint64_t *)(uintptr_t)lj_ref(L, o->L_stack, o);
}

/* Whether th's stack is where it was (its entries' slots lie in it). */
static bool stack_holds(const struct TrailThread *th, const struct LjLayout *o) {
  return stack_of(th->L, o) == th->stack && lj_u32(th->L, o->L_stacksize) == th->stacksize;
}

/* XXX: inlined (link-time) into the walks, which pass constant layouts:
** the check runs at every walk over the trail. */
__attribute__((always_inline)) inline int frame_trail_check(const struct FrameTrail *t, const struct TrailThread *th, int k,
                      const uint32_t *pc, bool reentered, const struct LjLayout *o) {
  const struct TrailEntry *e = &t->e[k];
  if (e->pc_in != pc || e->reentered_in != reentered) return k;
  if (!stack_holds(th, o)) return th->lo;
  const int differs = entries_differ(t->e, th->lo, k + 1, o);
  if (differs >= 0 || th == &t->th[0]) return differs;
  /* Under a coroutine the main thread's walk starts at its base. */
  const struct TrailThread *main = &t->th[0];
  const struct TrailEntry *top = &t->e[main->hi - 1];
  const uint64_t *main_base = (const uint64_t *)(uintptr_t)lj_u64(main->L, o->L_base);
  return main->hi > main->lo && top->frame == main_base - 1 && !top->pc_in &&
                 !top->reentered_in && stack_holds(main, o) &&
                 entries_differ(t->e, main->lo, main->hi, o) < 0
             ? -1
             : th->lo;
}

__attribute__((always_inline)) inline void frame_trail_remember(struct FrameTrail *t, int keep, int nfresh, const int *fresh_of_thread,
                          const struct prof_guest_frame *frames, const uint8_t *kinds,
                          int nframes, const LJState *const *threads, int nthreads,
                          const struct LjLayout *o) {
  const int kept = keep + 1;
  const int kept_out = keep >= 0 ? t->e[keep].out_at + t->e[keep].nout : 0;
  if (kept + nfresh > TRAIL_MAX || kept_out + nframes > TRAIL_OUT) {
    t->n = 0;
    return;
  }
  /* Each thread's entries: those of the kept bottom, then its fresh ones
  ** (a thread with fresh entries has kept ones only if walked last). One
  ** thread: all of them (the walk matched in its part). */
  int count[2] = {kept + nfresh, 0};
  for (int i = 0; nthreads > 1 && i < nthreads; i++) {
    const struct TrailThread *old = keep >= 0 ? frame_trail_thread(t, threads[i]) : NULL;
    const int kept_top = old && kept < old->hi ? kept : old ? old->hi : 0;
    count[i] = (old && kept_top > old->lo ? kept_top - old->lo : 0) + fresh_of_thread[i];
  }
  /* Root first: the main thread (walked last) at the bottom. */
  for (int i = nthreads - 1, at = 0; i >= 0; i--) {
    t->th[nthreads - 1 - i] = (struct TrailThread){threads[i], at, at + count[i],
                                                   stack_of(threads[i], o),
                                                   lj_u32(threads[i], o->L_stacksize)};
    at += count[i];
  }
  for (int i = 0, at = kept, out = kept_out; i < nfresh; i++, at++) {
    t->e[at] = t->fresh[nfresh - 1 - i];
    t->e[at].out_at = (uint16_t)out;
    out += t->e[at].nout;
  }
  /* (A loop: the walk's own frames are one or two.) */
  struct prof_guest_frame *out = &t->out[TRAIL_OUT - kept_out - nframes];
  uint8_t *out_kinds = &t->kinds[TRAIL_OUT - kept_out - nframes];
  for (int i = 0; i < nframes; i++) {
    out[i] = frames[i];
    out_kinds[i] = kinds[i];
  }
  t->n = kept + nfresh;
  t->nout = kept_out + nframes;
  t->nth = nthreads;
}
