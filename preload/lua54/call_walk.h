/*
** call_walk.h: reads a lua_State's call frames (CallInfo chain) into guest
** frames, without the Lua API, so that it can run in a signal handler or
** inside an allocation hook.
**
** Invariants callers rely on:
** - No allocation, lock, stdio or Lua API call; every loop is bounded. The
**   one write is call_walk_remembered's mark, a callstatus bit no Lua 5.4
**   release uses (layout_check.c checks that a push clears it).
** - A frame is dereferenced directly only where Lua guarantees it is whole:
**   frames below the innermost one never change while it runs, their
**   function slots hold live closures (the collector clears dead stack
**   slices before sweeping), and a function slot is read only if it lies in
**   the state's current stack. The running state's innermost frame may be
**   half-written by a call or return; unless the VM is known to be at an
**   allocation call, its closure and prototype are read through safe_read(),
**   which reports a fault instead of taking it; a light C function caught
**   returning (its slot holding its first result's value under its own tag)
**   is left out.
** - A Lua frame that began a run of the interpreter (CIST_FRESH) below
**   another Lua frame is followed by a C frame at `reentry`, the boundary
**   native code makes between the two runs (when reentry is set).
** - Lines are Lua's own current lines (luaG_getfuncline's rule); 0 means
**   unknown. A tail-called frame stands in for its vanished caller, as in
**   lua_getstack.
*/
#ifndef PROF_LUA54_CALL_WALK_H
#define PROF_LUA54_CALL_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "libprof.h"
#include "safe_read.h"
#include "lua54_layout.h"

/* Lines of recently seen (prototype, pc) pairs; one per OS thread. */
#define LINE_CACHE_SLOTS 1024
struct LineCacheEntry {
  const uint32_t *savedpc;
  const L54Proto *proto;
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
  const L54CallInfo *ci;
  const void *key;       /* a Lua frame's saved pc, a C frame's function; NULL: no frame */
  unsigned short status; /* callstatus without L54_CIST_WALKED */
  int frame_end;         /* root-first frames [0, frame_end): this frame and those below */
};
struct TrailState {
  const L54State *L;
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

struct CallWalk {
  bool all_safe;           /* read everything through safe_read (layout check) */
  bool clean_point;        /* the VM is inside its allocator: no half-written frame */
  struct LineCache *cache; /* NULL: compute every line */
  uint64_t reentry;        /* 0, or a return address into luaV_execute (boundary frames) */
  uint32_t epoch;          /* call_walk_epoch() when the walk began */
  struct prof_guest_frame *frames;
  int max, n;
  bool cut;                /* the walk stopped at max with frames left */
  int steps_left;          /* bounds the walk even over a corrupt chain */
  /* Optional, for the layout check: each frame's closure and tail flag. */
  const void **closures;
  bool *tails;
};

/* Appends the frames of L, innermost first. `running` marks the state whose
** innermost frame may be in the middle of a call or return. Frames beyond
** max are left out and set `cut`. */
void call_walk_state(struct CallWalk *w, const L54State *L, bool running);

/* The frames of states[0..nstates) (innermost first, the first one
** running), where no frame is half-written (an allocation call), in
** proportion to what changed since the walk t remembered: each CallInfo it
** walks gets L54_CIST_WALKED, which Lua clears when it pushes a frame
** (callstatus is assigned whole), so a CallInfo still marked, found in t's
** segment of its state, holds the frame it held then, above the same
** frames; with the same status and saved pc (or C function) its frame and
** those below are t's, kept without reading them (the innermost too: at
** an allocation its saved pc is current). w holds no frames yet; w->frames
** is scratch for the frames walked now. Returns where the w->n frames lie:
** in t (unchanged until t's next walk), or in w->frames when the walk could
** not be remembered (then a plain walk, which may be cut). *unchanged:
** how many outer frames are provably those of the walk t remembered (0 if
** t was empty or another); t then remembers this walk. */
const struct prof_guest_frame *call_walk_remembered(struct CallWalk *w,
                                                    const L54State *const *states, int nstates,
                                                    struct WalkTrail *t, const void *main,
                                                    int *unchanged);

/* call_walk_remembered's commonest cases, answered without its bookkeeping:
** nothing was pushed since t's walk, of the one state L, whose innermost
** CallInfo is a Lua frame that walk read, still marked, with the same
** status and saved pc (a second allocation at the same point, a table and
** then its parts; or one made after returning, a table grown once its
** elements' calls are done). Then that frame and those below are t's (the
** full walk would stop at that CallInfo and keep them), and they are
** returned, *n of them, all unchanged; t then remembers them alone. Else
** NULL, and t is as it was. max, epoch, reentry and main as
** call_walk_remembered's walk has them. */
const struct prof_guest_frame *call_walk_nothing_pushed(struct WalkTrail *t, const L54State *L,
                                                        int max, uint32_t epoch, uint64_t reentry,
                                                        const void *main, int *n);


/* Invalidates cached lines: called whenever a prototype may have been freed. */
void call_walk_protos_freed(void);
uint32_t call_walk_epoch(void);

#endif /* PROF_LUA54_CALL_WALK_H */
