/*
** live_states.h: the LuaJIT states of a process the agent was attached to
** (prof-run --pid), made before the adapter came. A CPU sample interrupted
** in the VM's code (the interpreter, a trace's machine code: both keep the
** dispatch table's address in the DISPATCH register, r14) gives the state's
** GG_State, hence its global_State; it is taken when the main thread there
** and the global_State point at each other (safe reads through the verified
** build, lj_build.h), and becomes a universe without the allocator wrapper
** (universe_adopt), walked as any other: the running thread, then the main
** thread. Prototypes on its stacks are named from the sample
** (symbols_name_from_signal). Where the agent records memory, the
** allocator wrapper goes into it then (live_alloc.h).
**
** Invariants callers rely on:
** - The backtracer is async-signal-safe and lock-free; every read of the
**   VM is a safe read, and a universe bound to a thread is checked again at
**   each sample (a closed VM is dropped once its freed block no longer
**   holds a main thread pointing at it; until then its walk, all safe
**   reads, gives stale frames or none).
** - Nothing of the program's VM is written but, where the agent records
**   memory, its global_State's allocf (the wrapper): no hook; the stop
**   gives each wrapped VM its allocator back and frees every adopted
**   universe.
*/
#ifndef PROF_LUAJIT_LIVE_STATES_H
#define PROF_LUAJIT_LIVE_STATES_H

#include <stdbool.h>
#include <stdint.h>

#include "vm_capture.h"

/* Registers the backtracer; code: the VM's code range (vm_code_find on a
** scratch state of the same library) and re-entry mark; memory: the VMs
** found get the allocator wrapper. */
void live_states_start(const struct VmCode *code, bool memory);
/* Unregisters it and frees the adopted universes (no handler runs). */
void live_states_stop(void);

#endif /* PROF_LUAJIT_LIVE_STATES_H */
