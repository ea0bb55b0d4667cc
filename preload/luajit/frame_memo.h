/*
** frame_memo.h: what the allocator wrapper's walks (frame_walk.h, direct
** reads) found at each stack slot, so that the next walk pays for what
** changed only: a frame whose thread, slot, two slots' values (function,
** link), and the PC and re-entry flag the frame above gave it are those of
** its entry names the entry's frame and steps to the entry's caller,
** reading nothing more.
**
** Why that is exact: a frame's guest frame is a function of those values
** and of objects that do not change while they live (the function object,
** its prototype's bytecode and line table); where the walk goes next is a
** function of the link and of the calling instruction in that bytecode.
** The one thing an equal value cannot vouch for is that the function
** object it points to is the one the entry saw: frame_memo_forget() must
** run whenever the VM frees a function or a prototype (or the re-entry mark
** changes), which makes every entry stale at once. A frame whose link is a
** continuation (its walk reads two more slots) is never remembered; nor is
** one that the frame limit cut.
**
** Invariants callers rely on: normal context, one thread at a time (the
** VM's allocator); no allocation; a lookup is a constant number of loads.
*/
#ifndef PROF_LUAJIT_FRAME_MEMO_H
#define PROF_LUAJIT_FRAME_MEMO_H

#include <stdbool.h>
#include <stdint.h>

#include "libprof.h"
#include "lj_layout.h"

#define FRAME_MEMO_SLOTS 512 /* direct-mapped, by frame slot */

struct FrameMemoEntry {
  /* The key. */
  const uint64_t *frame;   /* the frame's link slot; NULL: empty */
  const LJState *L;
  uint64_t fn, link;
  const uint32_t *pc_in;   /* the PC the frame above gave it */
  uint32_t epoch;
  bool reentered_in;       /* the frame above was entered from native code */
  /* What the walk made of it. */
  bool mark;               /* a re-entry mark precedes its frame */
  uint8_t kind;            /* FRAME_KIND_* */
  struct prof_guest_frame out;
  const uint64_t *next;    /* the caller's link slot; NULL: the walk ends */
  const uint32_t *next_pc;
  bool next_reentered;
};

struct FrameMemo {
  uint32_t epoch;  /* entries of another epoch are stale */
  struct FrameMemoEntry e[FRAME_MEMO_SLOTS];
};

static inline struct FrameMemoEntry *frame_memo_slot(struct FrameMemo *m, const uint64_t *frame) {
  return &m->e[((uintptr_t)frame >> 4) & (FRAME_MEMO_SLOTS - 1)];
}

/* The entry for this frame as the walk meets it, or NULL; epoch: m's. */
static inline const struct FrameMemoEntry *frame_memo_find(struct FrameMemo *m, uint32_t epoch,
                                                           const uint64_t *frame,
                                                           const LJState *L, uint64_t fn,
                                                           uint64_t link, const uint32_t *pc_in,
                                                           bool reentered_in) {
  const struct FrameMemoEntry *e = frame_memo_slot(m, frame);
  return e->frame == frame && e->link == link && e->fn == fn && e->pc_in == pc_in &&
                 e->L == L && e->reentered_in == reentered_in && e->epoch == epoch
             ? e
             : NULL;
}

/* Makes every entry stale: a function or prototype was freed. */
void frame_memo_forget(struct FrameMemo *m);

#endif /* PROF_LUAJIT_FRAME_MEMO_H */
