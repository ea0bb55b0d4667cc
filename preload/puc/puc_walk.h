/*
** puc_walk.h: reads a lua_State's call frames into guest frames through the
** release's layout table (puc_layout.h), without the Lua API, so that it
** can run in a signal handler or inside the allocator. One walk for Lua
** 5.1 to 5.4.
**
** Invariants callers rely on:
** - No allocation, lock, stdio or Lua API call; every loop is bounded. The
**   one write is puc_walk_remembered's mark, a status bit the release never
**   sets (cist_walked; the layout check proves that a push clears it).
** - A frame below the innermost one is read directly: it does not change
**   while the innermost runs, and its function slot holds a live closure.
**   A function slot is read only inside the state's current stack (a stack
**   being moved is skipped), and in 5.1 a CallInfo only inside the array
**   the state points at now. The running state's innermost frame may be
**   half-written by a call or return: unless the VM is known to be inside
**   its allocator (clean_point), its closure, prototype and line are read
**   through safe_read(), which reports a fault instead of taking it, and a
**   light C function caught returning (its first result's value copied over
**   its slot, not yet the tag) is left out.
** - Lines are Lua's current lines (luaG_getfuncline's rule); 0 means
**   unknown. In 5.1 the running Lua frame's pc is the one it saved last: its
**   line is that of the last call or operation that can raise an error. A
**   tail-called frame stands in for its vanished caller, as in lua_getstack.
** - A Lua frame that began a run of the interpreter below another Lua frame
**   is followed by a C frame at `reentry` (when set).
*/
#ifndef PROF_PUC_WALK_H
#define PROF_PUC_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent_api.h"
#include "safe_read.h"

/* Lines of recently seen (prototype, pc) pairs; one per OS thread. */
#define LINE_CACHE_SLOTS 1024
struct LineCacheEntry {
  const uint32_t *savedpc;
  const void *proto;
  uint32_t line;
  uint32_t epoch;
};
struct LineCache {
  struct LineCacheEntry e[LINE_CACHE_SLOTS];
};

/* One thread's last allocation-side walk (remembered walks), root first:
** each CallInfo it read with what named its frame, where each state's
** CallInfos and frames begin, and the frames: root-first frame r is
** frames[TRAIL_FRAMES - 1 - r], so that they read innermost first from
** their last one, as a walk gives them. walked: the CallInfos a walk reads,
** until they are placed (room kept off the stack of allocating code). */
#define TRAIL_MAX 256
#define TRAIL_FRAMES (2 * TRAIL_MAX)
struct TrailEntry {
  const void *ci;
  const void *key;       /* a Lua frame's saved pc, a C frame's function; NULL: no frame */
  unsigned short status; /* callstatus without the mark */
  int frame_end;         /* root-first frames [0, frame_end): this frame and those below */
};
struct TrailState {
  const void *L;
  int entry_begin, frame_begin;
};
struct WalkTrail {
  int entries; /* 0: nothing remembered */
  int nframes, nstates;
  uint32_t epoch;
  uint64_t reentry;
  const void *main;
  struct TrailState state[TRAIL_MAX];
  struct TrailEntry e[TRAIL_MAX];
  struct prof_guest_frame frames[TRAIL_FRAMES];
  struct TrailEntry walked[TRAIL_MAX];
};

struct PucWalk {
  bool all_safe;           /* read everything through safe_read (the layout check) */
  bool clean_point;        /* the VM is inside its allocator: no half-written frame */
  struct LineCache *cache; /* NULL: compute every line */
  uint64_t reentry;        /* 0, or a return address into luaV_execute (boundary frames) */
  uint32_t epoch;          /* puc_walk_epoch() when the walk began */
  struct prof_guest_frame *frames;
  int max, n;
  bool cut;                /* the walk stopped at max with frames left */
  int steps_left;          /* bounds the walk even over a corrupt chain */
  /* Optional, for the layout check: each frame's closure and tail flag. */
  const void **closures;
  bool *tails;
};

/* Appends the frames of the lua_State L, innermost first. `running` marks
** the state whose innermost frame may be in the middle of a call or return.
** Frames beyond max are left out and set `cut`. */
void puc_walk_state(struct PucWalk *w, const void *L, bool running);

/* Whether the release can remember walks (it has a status bit to mark). */
bool puc_walk_can_remember(void);

/* The frames of states[0..nstates) (innermost first, the first one
** running), where no frame is half-written (an allocation call), in
** proportion to what changed since the walk t remembered: each CallInfo it
** walks gets the mark, which Lua clears when it pushes a frame (the status
** is assigned whole), so a CallInfo still marked, found in t's segment of
** its state, holds the frame it held then, above the same frames; with the
** same status and saved pc (or C function) its frame and those below are
** t's, kept without reading them (the innermost too: at an allocation its
** saved pc is current). w holds no frames yet; w->frames is scratch for
** the frames walked now. Returns where the w->n frames lie: in t
** (unchanged until t's next walk), or in w->frames when the walk could not
** be remembered (then a plain walk, which may be cut). *unchanged: how many
** outer frames are provably those of the walk t remembered (0 if t was
** empty or another); t then remembers this walk. Only where
** puc_walk_can_remember(). */
const struct prof_guest_frame *puc_walk_remembered(struct PucWalk *w, const void *const *states,
                                                   int nstates, struct WalkTrail *t,
                                                   const void *main, int *unchanged);

/* puc_walk_remembered's commonest cases, answered without its bookkeeping:
** nothing was pushed since t's walk, of the one state L, whose innermost
** CallInfo is a Lua frame that walk read, still marked, with the same
** status and saved pc (a second allocation at the same point, a table and
** then its parts; or one made after returning, a table grown once its
** elements' calls are done). Then that frame and those below are t's (the
** full walk would stop at that CallInfo and keep them), and they are
** returned, *n of them, all unchanged; t then remembers them alone. Else
** NULL, and t is as it was. max, epoch, reentry and main as
** puc_walk_remembered's walk has them. */
const struct prof_guest_frame *puc_walk_nothing_pushed(struct WalkTrail *t, const void *L,
                                                       int max, uint32_t epoch, uint64_t reentry,
                                                       const void *main, int *n);

/* The global_State of L. */
const void *puc_global(const void *L);
/* Whether the collector of the global state g runs now (its finalizers
** excepted); false where the release does not tell (5.1-5.3). */
bool puc_collecting(const void *g);

/* Invalidates cached lines: called whenever a prototype may have been freed. */
void puc_walk_protos_freed(void);
uint32_t puc_walk_epoch(void);

#endif /* PROF_PUC_WALK_H */
