/*
** universe.h: the LuaJIT VMs (universes) the module profiles, and their
** allocator wrapper, which turns every allocator call of a VM into a
** memory event (prof_guest_alloc_walked) charged where memprof charges it.
**
** Invariants callers rely on:
** - A universe per VM (a lua_State and its coroutines), up to
**   UNIVERSES_MAX at once; a slot is free again once its VM closed. All
**   are of one build (lj_build.h).
** - The wrapper captures the VM (vm_capture, direct reads, over the
**   universe's frame trail) before calling the real allocator: a realloc
**   may move the very stack the capture reads. A free of a block whose
**   header says function or prototype makes the trail forget
**   (frame_trail.h). It records a free before the real free, anything else after the
**   real call returned, and nothing for a failed call.
** - The wrapper stays installed after lua_close (the state's last frees go
**   through it), so the module must never be unloaded.
** - lj_thread_universe is initial-exec TLS: the universe that last ran on
**   the thread (set by the wrapper on each call, and at start), read by the
**   backtracer in signal context; cleared when that VM frees its last block
**   (lua_close), so that no sample of the thread reads a closed VM. A thread
**   that runs several VMs in turn is walked in the one that last allocated.
*/
#ifndef PROF_LUAJIT_UNIVERSE_H
#define PROF_LUAJIT_UNIVERSE_H

#include <stdbool.h>
#include <stddef.h>

#include <lua.h>

#include "frame_trail.h"
#include "lj_layout.h"
#include "vm_capture.h"

#define UNIVERSES_MAX 32

struct Universe {
  const char *g;        /* its global_State; NULL: a free slot */
  const LJState *main;  /* its main thread */
  lua_Alloc orig;
  void *orig_ud;
  uint64_t bytes_before;  /* what the VM held when the wrapper went in */
  struct VmCode code;
  struct FrameTrail trail;  /* the wrapper's last walk (the VM runs one thread at a time) */
  uint64_t captures;        /* the wrapper's walks so far (prof_guest_walk's seq) */
  int last_n;               /* the frames the last one passed */
  bool proto_events;        /* new prototypes are named as the VM makes them (proto_events.h) */
  bool adopted;             /* found running, made before the module came (live_states.h) */
  int live_wrap;            /* an adopted one's wrapper (live_alloc.h): LIVE_WRAP_* */
};

enum { LIVE_WRAP_NONE, LIVE_WRAP_ON, LIVE_WRAP_KEPT };

extern __thread struct Universe *lj_thread_universe __attribute__((tls_model("initial-exec")));

/* The universe of the VM whose global_State is g, or NULL. */
struct Universe *universe_of(const char *g);

/* Makes L's VM a universe and puts the wrapper between it and its
** allocator (once per VM: the caller makes sure); NULL when every slot is
** taken. reentry: the VM code's re-entry mark (vm_capture.h), 0 if none. */
struct Universe *universe_start(lua_State *L, uint64_t reentry);

/* Makes the running VM whose global_State is g a universe, without the
** wrapper (a state made before the module came: live_states.h); in a
** signal handler: lock-free, the slot claimed by compare-and-swap. NULL
** when every slot is taken. */
struct Universe *universe_adopt(const char *g, const struct VmCode *code);
/* Frees the slots of every adopted universe (no walk runs). */
void universe_forget_adopted(void);
/* Takes u's slot out of use for good: the program put its own allocator
** over u's wrapper, which may go on passing calls on (live_alloc.h). */
void universe_retire(struct Universe *u);

/* Slot i, and what the wrapper does with a call of u's VM (ud: the
** allocator's own, u's orig_ud). */
struct Universe *universe_at(int i);
void *universe_alloc(struct Universe *u, void *ptr, size_t osize, size_t nsize);

/* Names the functions on u's stack now and those nested in them (normal
** context, the VM at a clean point: a C function it runs): those made before
** the module loaded, such as the chunk that requires it and its functions,
** whose frames CPU samples would otherwise show before any allocator call
** named them (an analyzer names a frame by the symbols before it). */
void universe_name_stack(const struct Universe *u);

#endif /* PROF_LUAJIT_UNIVERSE_H */
