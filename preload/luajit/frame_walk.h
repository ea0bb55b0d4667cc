/*
** frame_walk.h: reads a LuaJIT lua_State's frames (the Lua stack, from a
** base down to the bottom) into guest frames, without the Lua API, so that
** it can run inside the VM's allocator or in a signal handler.
**
** Invariants callers rely on:
** - No allocation, lock, stdio or Lua API call; every loop is bounded.
** - With `safe` set, every read of the VM goes through lj_safe_read and is
**   checked (stack slots must lie in the state's stack, functions must be
**   tagged and typed so, PCs must lie in their prototype's bytecode): a VM caught
**   half-way gives fewer frames or line 0, never a fault. Without it the
**   caller vouches that the VM is at a point where its frames are whole
**   (inside its allocator).
** - A Lua frame's line is its current line as lj_debug_frameline computes
**   it (through line_cache.h when reads are direct); 0 when unknown (the innermost frame without a saved PC, a frame
**   below a C boundary). Built-ins (fast functions) are FFUNC frames named
**   by their id, C functions CFUNC frames by their code's address.
** - Native code re-entering the VM (an FFI callback, a built-in written in
**   C calling back into Lua) shows in the host stack as the VM's own frame:
**   where no C function frame lies between the frame it entered and that
**   frame's caller, a CFUNC frame at `reentry` (the VM's code) marks it,
**   as libprof.h says, so that each run of Lua frames is merged above the
**   VM's host frame that ran it.
** - With a trail, the frames are exactly those of the same walk without it.
*/
#ifndef PROF_LUAJIT_FRAME_WALK_H
#define PROF_LUAJIT_FRAME_WALK_H

#include <stdbool.h>
#include <stdint.h>

#include "frame_trail.h"
#include "agent_api.h"
#include "lj_layout.h"

/* What kind of function a frame runs (kinds[] of the walk). */
enum { FRAME_KIND_LUA, FRAME_KIND_C, FRAME_KIND_BUILTIN };

struct FrameWalk {
  bool safe;
  struct prof_guest_frame *frames;
  uint8_t *kinds;  /* optional: FRAME_KIND_* per frame */
  int max, n;
  int steps_left;  /* bounds the walk even over a corrupt chain */
  uint64_t reentry; /* the address marking a re-entry; 0: not marked */
  /* Direct reads only (frame_trail.h): the last walk, whose frames are
  ** taken from the first frame where it still holds; kinds must be set. */
  const struct FrameTrail *trail;
  struct TrailEntry *fresh; /* with trail: the steps walked, in walk order */
  int nfresh;
  int matched;              /* -1, or the trail entry the frames end with */
  bool clean;               /* the last thread's walk ended at its bottom */
};

/* Appends L's frames from base down, innermost first, on the verified
** build's layout (lj_build.h). top_pc: the PC the VM
** saved for the innermost frame if it is a Lua one, else NULL. */
void frame_walk(struct FrameWalk *w, const LJState *L, const uint64_t *base,
                const uint32_t *top_pc);

/* The line of the instruction before pc in pt (lj_debug_line of the frame
** PC pc names), 0 when pc is outside pt's bytecode. pt is read directly or,
** if safe, checked, as layout o places its fields. */
uint32_t frame_walk_line(const LJProto *pt, const uint32_t *pc, bool safe,
                         const struct LjLayout *o);

/* pc for the innermost frame of L from its innermost cframe, or NULL. */
const uint32_t *frame_walk_saved_pc(const LJState *L, bool safe, const struct LjLayout *o);

#endif /* PROF_LUAJIT_FRAME_WALK_H */
