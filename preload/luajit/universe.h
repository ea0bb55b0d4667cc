/*
** universe.h: the one LuaJIT VM (universe) the module profiles, and its
** allocator wrapper, which turns every allocator call of the VM into a
** memory event (prof_guest_alloc_walked) charged where memprof charges it.
**
** Invariants callers rely on:
** - One universe per process: the first state that loads the module.
** - The wrapper captures the VM (vm_capture, direct reads, over the
**   universe's frame trail) before calling the real allocator: a realloc
**   may move the very stack the capture reads. A free of a block whose
**   header says function or prototype makes the trail forget
**   (frame_trail.h). It records a free before the real free, anything else after the
**   real call returned, and nothing for a failed call.
** - The wrapper stays installed after lua_close (the state's last frees go
**   through it), so the module must never be unloaded.
** - The slot `bound` is initial-exec TLS: set on the thread that runs the
**   VM, read by the backtracer in signal context; cleared when the VM frees
**   its last block (lua_close), so that no sample reads a closed VM.
*/
#ifndef PROF_LUAJIT_UNIVERSE_H
#define PROF_LUAJIT_UNIVERSE_H

#include <lua.h>

#include "frame_trail.h"
#include "lj_layout.h"
#include "vm_capture.h"

struct Universe {
  const char *g;        /* its global_State */
  const LJState *main;  /* its main thread */
  lua_Alloc orig;
  void *orig_ud;
  uint64_t bytes_before;  /* what the VM held when the wrapper went in */
  struct VmCode code;
  struct FrameTrail trail;  /* the wrapper's last walk (the VM runs one thread at a time) */
  uint64_t captures;        /* the wrapper's walks so far (prof_guest_walk's seq) */
  int last_n;               /* the frames the last one passed */
};

extern struct Universe lj_universe;
extern __thread int lj_thread_bound __attribute__((tls_model("initial-exec")));

/* Makes L's VM the universe and puts the wrapper between it and its
** allocator (once per process: the caller makes sure). */
void universe_start(lua_State *L);

#endif /* PROF_LUAJIT_UNIVERSE_H */
