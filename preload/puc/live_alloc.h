/*
** live_alloc.h: the allocator wrapper put into a universe found running
** (live_states.h), made before the adapter came. It does what the wrapper
** of a universe the adapter saw made does (puc_alloc.h) that a running
** state allows: it makes its universe the one running on the calling
** thread, marks the thread's slot while the real allocator runs (the walk
** of an allocation then reads the state directly: the state lives while
** its allocator runs, and no frame is half-written), tells the agent each
** new block's object type (5.2 on), and invalidates cached lines when a
** block of a prototype's size is freed. It sees the universe closed (the
** free of the block holding its main thread) and removes it. Prototypes
** are named from the walks (live_states.c), not as they are made.
**
** How it goes in: only the global_State's frealloc changes, by one
** compare-and-swap, on the thread that runs the state (from a CPU sample
** there); its ud stays. The function put in is one of a table of
** trampolines (alloc_trampolines.h), one per slot, so that it knows its
** universe without the ud. A thread that read the old function just before
** calls the allocator directly, as before.
**
** Invariants callers rely on:
** - live_alloc_wrap is async-signal-safe and lock-free: safe reads, the
**   slot claimed by compare-and-swap.
** - live_alloc_unwrap_all runs with no handler running and the process
**   stopped (the detach): each universe still wrapped gets its frealloc
**   back. A slot whose trampoline the program replaced since (lua_setallocf
**   over it) is never used again: whatever the program put in may still
**   call it, and it passes every call on.
** - After the detach the trampolines stay (the adapter is never unloaded)
**   and pass every call on.
*/
#ifndef PROF_PUC_LIVE_ALLOC_H
#define PROF_PUC_LIVE_ALLOC_H

#include <stdbool.h>

/* From now on (yes) universes found running get the wrapper: the agent
** records memory. */
void live_alloc_enable(bool yes);
/* Whether main's universe should get the wrapper: the agent records
** memory, and it has none yet. */
bool live_alloc_wanted(const void *main);
/* Puts the wrapper into the universe of main, running on this thread (the
** caller makes sure: a state closed since holds freed memory), unless it
** has it; false when it cannot (no free slot, the state reads wrong). */
bool live_alloc_wrap(const void *main);
/* Gives every wrapped universe its allocator back (the detach). */
void live_alloc_unwrap_all(void);

#endif /* PROF_PUC_LIVE_ALLOC_H */
