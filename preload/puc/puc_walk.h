/*
** puc_walk.h: reads a lua_State's call frames into guest frames through the
** release's layout table (puc_layout.h), without the Lua API, so that it
** can run in a signal handler or inside the allocator.
**
** Invariants callers rely on:
** - No allocation, lock, stdio or Lua API call; every loop is bounded;
**   nothing is written to the VM.
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
** - Lines are Lua's current lines (lineinfo[pc]); 0 means unknown. In 5.1
**   the running Lua frame's pc is the one it saved last: its line is that of
**   the last call or operation that can raise an error.
** - A Lua frame that began a run of the interpreter below another Lua frame
**   is followed by a C frame at `reentry` (when set and the release marks
**   such frames: 5.2 and 5.3).
*/
#ifndef PROF_PUC_WALK_H
#define PROF_PUC_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libprof.h"
#include "safe_read.h"

struct PucWalk {
  bool all_safe;     /* read everything through safe_read (the layout check) */
  bool clean_point;  /* the VM is inside its allocator: no half-written frame */
  uint64_t reentry;  /* 0, or a return address into luaV_execute (boundary frames) */
  struct prof_guest_frame *frames;
  int max, n;
  bool cut;          /* the walk stopped at max with frames left */
  int steps_left;    /* bounds the walk even over a corrupt chain */
  /* Optional, for the layout check: each frame's closure and tail flag. */
  const void **closures;
  bool *tails;
};

/* Appends the frames of the lua_State L, innermost first. `running` marks
** the state whose innermost frame may be in the middle of a call or return. */
void puc_walk_state(struct PucWalk *w, const void *L, bool running);

/* The global_State of L. */
const void *puc_global(const void *L);


#endif /* PROF_PUC_WALK_H */
