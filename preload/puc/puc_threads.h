/*
** puc_threads.h: which lua_State runs on this OS thread. Lua 5.1-5.4 have
** no "current thread" pointer, so the adapter keeps one per OS thread: the
** main thread of the universe that ran last here (its allocator marks it:
** several universes on one thread are each walked as themselves), plus a
** stack of the coroutines resumed through the adapter's coroutine.resume
** and coroutine.wrap (and 5.4's coroutine.close), innermost on top; and the
** thread's line cache and remembered walk (puc_walk.h).
**
** Invariants callers rely on:
** - The slot is initial-exec TLS: reading it is a plain load, safe in a
**   signal handler. Only the owning thread writes its slot.
** - A ResumeLink lives in the C frame of the resume call that pushed it and
**   is popped before that frame returns, so the links name live coroutines
**   in resume order; a walk follows only the links of the slot's universe.
** - A universe is walked only while it is live (universes.h): one closed
**   on another thread is never read through a stale slot.
*/
#ifndef PROF_PUC_THREADS_H
#define PROF_PUC_THREADS_H

#include <stdbool.h>

#include <lua.h>

#include "resume_links.h"

/* The registry field holding the universe's main thread. */
#define PUC_MAIN_KEY "prof_lua.main"


struct LineCache;
struct WalkTrail;

struct PucSlot {
  lua_State *main;         /* the universe that ran last on this thread, or NULL */
  struct ResumeLink *top;  /* innermost coroutine resumed through the adapter */
  int in_alloc;            /* > 0 while a universe's allocator runs */
  int walking;             /* > 0 while a walk runs on this thread */
  struct LineCache *cache; /* this thread's line cache (mmap'ed), or NULL */
  struct WalkTrail *trail; /* this thread's last allocation-side walk (mmap'ed), or NULL */
};

extern __thread struct PucSlot puc_slot __attribute__((tls_model("initial-exec")));

/* Makes main the universe running on this thread (NULL: none). No Lua
** API: it runs in the allocator too. */
void puc_thread_runs(lua_State *main);

/* A coroutine the program resumes itself, with lua_resume from C: the
** agent reports the call (prof_adapter_resume_enter and _leave,
** resume_links.h); co's universe then runs on this thread. */
void puc_resume_enter(lua_State *co);
void puc_resume_leave(lua_State *co);


#endif /* PROF_PUC_THREADS_H */
