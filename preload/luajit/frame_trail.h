/*
** frame_trail.h: the allocator wrapper's last walk (frame_walk.h, direct
** reads), kept root first so that the next walk pays for what changed:
** walking down from the innermost frame, the first frame the trail holds at
** the same slot of the same thread, with the same PC and re-entry flag from
** the frame above, is checked with everything below it (a frame's function
** and link slots, one slot without GC64, and those of a continuation's) and,
** if they all hold, the trail's frames from there down are the walk's. The
** top of the trail is then rewritten, its bottom left in place.
**
** Why that is exact: a frame's guest frame is a function of those slots, of
** the PC and flag the frame above gives it, and of objects that do not
** change while they live (the function object, its prototype's bytecode and
** line table); where the walk goes next is a function of the same slots and
** of the calling instruction in that bytecode; where it ends, of the
** thread's stack bounds (checked too). What equal slots cannot vouch for is
** that the function object they point to is the one the trail saw:
** frame_trail_forget() must run whenever the VM frees a function or a
** prototype, or the re-entry mark changes. Only walks that ended at the
** bottom of their stacks, uncut by the frame limit, are remembered.
**
** Invariants callers rely on: normal context, one thread at a time (the
** VM's allocator); no allocation; bounded by TRAIL_MAX.
*/
#ifndef PROF_LUAJIT_FRAME_TRAIL_H
#define PROF_LUAJIT_FRAME_TRAIL_H

#include <stdbool.h>
#include <stdint.h>

#include "agent_api.h"
#include "lj_layout.h"

#define TRAIL_MAX 256 /* steps of a walk: frames and vararg pseudo-frames */
#define TRAIL_OUT (2 * TRAIL_MAX) /* their frames: up to two a step */

struct TrailEntry {
  const uint64_t *frame;   /* its link slot */
  uint64_t fn, link;       /* its function slot and its link slot, as read (one
                              slot without FR2, its link in the high half) */
  uint64_t cont[2];        /* under a continuation link: the slots of the continuation
                              and of its PC, as read (one slot without FR2) */
  const uint32_t *pc_in;   /* the PC the frame above gave it */
  bool reentered_in;       /* the frame above was entered from native code */
  uint8_t nout;            /* guest frames it gave: 0 to 2 */
  uint16_t out_at;         /* how many frames the entries below it gave */
};

/* One thread's part of the trail: entries [lo, hi) and its stack bounds. */
struct TrailThread {
  const LJState *L;
  int lo, hi;
  const uint64_t *stack;
  uint32_t stacksize;
};

struct FrameTrail {
  int n;                  /* entries, root first; 0: nothing remembered */
  struct TrailThread th[2]; /* main's first when the walk had two threads */
  int nth;
  struct TrailEntry e[TRAIL_MAX];
  int nout;
  /* Its frames innermost first, ending at the arrays' ends (the root last),
  ** so that those of entries [0, k] are the last out_at + nout of entry k,
  ** in walk order: one copy serves a walk. */
  struct prof_guest_frame out[TRAIL_OUT];
  uint8_t kinds[TRAIL_OUT];
  struct TrailEntry fresh[TRAIL_MAX]; /* the walk under way's own steps */
};

static inline void frame_trail_forget(struct FrameTrail *t) { t->n = 0; }

/* The trail's part for thread L, or NULL. */
const struct TrailThread *frame_trail_thread(const struct FrameTrail *t, const LJState *L);

/* -1 if entry k of part th (at the frame the walk is at, which gave it pc
** and reentered) and every entry below it, in this part and the parts
** under it, still hold; else the highest entry of th that does not, so
** that no entry from there up can. o: the VM's layout (lj_layout.h). */
int frame_trail_check(const struct FrameTrail *t, const struct TrailThread *th, int k,
                      const uint32_t *pc, bool reentered, const struct LjLayout *o);

/* Makes t the walk just taken: its steps t->fresh[0..nfresh) (walk order,
** fresh_of_thread[i] of threads[i]) gave frames[0..nframes), over trail
** entries [0, keep] (keep -1: none); threads[0..nthreads): the threads
** walked, innermost first, on layout o. */
void frame_trail_remember(struct FrameTrail *t, int keep, int nfresh, const int *fresh_of_thread,
                          const struct prof_guest_frame *frames, const uint8_t *kinds,
                          int nframes, const LJState *const *threads, int nthreads,
                          const struct LjLayout *o);

#endif /* PROF_LUAJIT_FRAME_TRAIL_H */
