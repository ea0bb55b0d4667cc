#include "frame_trail.h"

const struct TrailThread *frame_trail_thread(const struct FrameTrail *t, const LJState *L) {
  if (t->n == 0) return NULL;
  for (int i = 0; i < t->nth; i++)
    if (t->th[i].L == L) return &t->th[i];
  return NULL;
}

/* The highest entry of [lo, hi) whose slots are not as they were, or -1. */
static int entries_differ(const struct TrailEntry *e, int lo, int hi) {
  for (int i = hi - 1; i >= lo; i--) {
    const uint64_t *f = e[i].frame;
    if (f[-1] != e[i].fn || f[0] != e[i].link) return i;
    if ((e[i].link & LJ_FRAME_TYPEP) == LJ_FRAME_CONT &&
        (f[-3] != e[i].cont[0] || f[-2] != e[i].cont[1]))
      return i;
  }
  return -1;
}

/* Whether th's stack is where it was (its entries' slots lie in it). */
static bool stack_holds(const struct TrailThread *th) {
  return th->L->stack == th->stack && th->L->stacksize == th->stacksize;
}

int frame_trail_check(const struct FrameTrail *t, const struct TrailThread *th, int k,
                      const uint32_t *pc, bool reentered) {
  const struct TrailEntry *e = &t->e[k];
  if (e->pc_in != pc || e->reentered_in != reentered) return k;
  if (!stack_holds(th)) return th->lo;
  const int differs = entries_differ(t->e, th->lo, k + 1);
  if (differs >= 0 || th == &t->th[0]) return differs;
  /* Under a coroutine the main thread's walk starts at its base. */
  const struct TrailThread *main = &t->th[0];
  const struct TrailEntry *top = &t->e[main->hi - 1];
  return main->hi > main->lo && top->frame == main->L->base - 1 && !top->pc_in &&
                 !top->reentered_in && stack_holds(main) &&
                 entries_differ(t->e, main->lo, main->hi) < 0
             ? -1
             : th->lo;
}

void frame_trail_remember(struct FrameTrail *t, int keep, int nfresh, const int *fresh_of_thread,
                          const struct prof_guest_frame *frames, const uint8_t *kinds,
                          int nframes, const LJState *const *threads, int nthreads) {
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
                                                   threads[i]->stack, threads[i]->stacksize};
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
