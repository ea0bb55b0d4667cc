/*
** live_alloc.h: the allocator wrapper (universe.h) put into a VM found
** running (live_states.h), made before the module came: from then on each
** of its allocator calls is a memory event charged where memprof charges
** it, as for a VM the module saw made; the VM's close is seen (its last
** free) and frees the universe's slot.
**
** How it goes in: only the global_State's allocf changes, by one
** compare-and-swap, on the thread that runs the VM (from a CPU sample
** there); allocd stays, read into the universe's orig_ud. The function put
** in is the trampoline of the universe's slot (alloc_trampolines.h), so
** that it knows its universe without the ud. A thread that read the old
** function just before calls the allocator directly, as before.
**
** Invariants callers rely on:
** - live_alloc_wrap is async-signal-safe and lock-free (safe reads, a
**   compare-and-swap); live_alloc_unwrap_all runs with no handler running
**   and the process stopped (the detach): each VM still wrapped gets its
**   allocf back. A universe whose trampoline the program replaced since
**   (lua_setallocf over it) has its slot retired for good
**   (universe_retire), its trampoline passing every call on.
** - After the detach the trampolines stay (the module is never unloaded).
*/
#ifndef PROF_LUAJIT_LIVE_ALLOC_H
#define PROF_LUAJIT_LIVE_ALLOC_H

#include <stdbool.h>

#include "universe.h"

/* From now on (yes) the VMs found get the wrapper: the agent records memory. */
void live_alloc_enable(bool yes);
/* Puts the wrapper into u's VM (adopted, running on this thread) unless it
** has it; false when it cannot. */
bool live_alloc_wrap(struct Universe *u);
/* Gives every wrapped VM its allocator back (the detach). */
void live_alloc_unwrap_all(void);

#endif /* PROF_LUAJIT_LIVE_ALLOC_H */
