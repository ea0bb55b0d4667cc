/*
** live_states.h: the Lua states of a process the agent was attached to
** (prof-run --pid), made before the adapter came: nothing saw them made,
** so CPU samples find them. The backtracer registered here looks, on a
** thread that runs no known universe, among the interrupted registers and
** the top of the interrupted stack for a pointer to a lua_State; one is
** taken when its structure holds: a thread object (its tag) whose
** global_State lies right after its main thread, as a state the library
** makes does (LG: the offset measured on a scratch state of the same
** library), that main thread a thread object pointing back at it. That
** main thread becomes the universe the sampled OS thread runs (puc_threads.h),
** walked with every read checked (puc_backtrace_read_safely), its
** prototypes named from the sample (prof_guest_symbol_from_signal).
**
** Invariants callers rely on:
** - The backtracer is async-signal-safe and lock-free: safe_read() alone
**   reads the process, the universes and the named set are claimed by
**   compare-and-swap, the symbol table only tried.
** - Nothing of the program's state is written but, where the agent records
**   memory, the global_State's frealloc (live_alloc.h: the allocator
**   wrapper, put in from a sample on the thread running it, a register of
**   that sample pointing at one of the universe's threads: a stack word
**   may be stale, the scratch state's say) and, in allocation calls through
**   it, the remembered walk's marks (puc_walk.h): no hook, no registry
**   field. live_states_stop() gives every wrapped universe its
**   allocator back and forgets every universe found, so that no walk reads
**   them after the detach.
** - In an allocation call through the wrapper (the thread's slot marked)
**   the universe lives: its walk and the naming of its prototypes read it
**   directly, without a system call.
** - A thread searched in vain (it runs no Lua, or ran C code then) is
**   searched again at every 16th sample only: a search costs a safe read
**   for each of some 140 candidates.
** - A thread that runs a coroutine has its main thread's frames walked (the
**   coroutine resumes since the attach are not followed).
*/
#ifndef PROF_PUC_LIVE_STATES_H
#define PROF_PUC_LIVE_STATES_H

#include <stdbool.h>

#include <lua.h>

/* Measures where a main thread's global_State lies on scratch (a main
** thread of the library, layout checked) and registers the backtracer;
** memory: the states found get the allocator wrapper. */
void live_states_start(lua_State *scratch, bool memory);
/* Unregisters it and forgets the universes found (no handler runs). */
void live_states_stop(void);

#endif /* PROF_PUC_LIVE_STATES_H */
