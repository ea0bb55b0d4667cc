/*
** running_state.h: which lua_State runs on this OS thread. Lua 5.4 has no
** "current thread" pointer, so the adapter keeps one per OS thread: the
** universe's main thread, plus a stack of the coroutines resumed through the
** adapter's coroutine.resume / coroutine.wrap (or closed by its
** coroutine.close), innermost on top.
**
** Invariants callers rely on:
** - The slot is initial-exec TLS: reading it is a plain load, safe in a
**   signal handler (a dlopen'ed module's dynamic TLS would call malloc).
** - Only the owning thread writes its slot. A ResumeLink lives in the C frame
**   of the resume call that pushed it and is popped before that frame
**   returns: lua_resume never unwinds past its caller, so the links always
**   name live, suspended-or-running coroutines in resume order.
** - Every state the links name, except the innermost one, is blocked inside
**   a resume and so does not change while it is walked.
** - A universe is bound to the thread that loaded the module (or that first
**   resumed one of its coroutines); a host that runs one universe on several
**   OS threads, or resumes coroutines with lua_resume from C, gets the
**   resumer's frames for those coroutines.
*/
#ifndef PROF_LUA54_RUNNING_STATE_H
#define PROF_LUA54_RUNNING_STATE_H

#include <lua.h>

#include "resume_links.h"

struct LineCache;
struct WalkTrail;


struct ThreadSlot {
  lua_State *main;          /* the bound universe's main thread, or NULL */
  struct ResumeLink *top;   /* innermost coroutine resumed through the adapter */
  int in_alloc;             /* > 0 while the universe's allocator runs */
  int walking;              /* > 0 while a walk runs on this thread */
  struct LineCache *cache;  /* this thread's line cache (mmap'ed), or NULL */
  struct WalkTrail *trail;  /* this thread's last allocation-side walk (mmap'ed), or NULL */
};

extern __thread struct ThreadSlot lua54_slot __attribute__((tls_model("initial-exec")));

/* Binds this OS thread to the universe of L (its main thread). */
void running_state_bind(lua_State *L);
/* Makes main the universe running on this thread, as its allocator is
** called here (no Lua API: allocator context). */
void running_state_switch(lua_State *main);
/* Unbinds this thread if it is bound to the universe whose main thread is main. */
void running_state_unbind(lua_State *main);

/* A coroutine the program resumes itself, with lua_resume from C: the
** agent reports the call (prof_adapter_resume_enter and _leave,
** resume_links.h); co's universe then runs on this thread. */
void running_state_resume_enter(lua_State *co);
void running_state_resume_leave(lua_State *co);

/* Replaces coroutine.resume, coroutine.wrap and coroutine.close (the table
** is at idx). */
void running_state_wrap_coroutines(lua_State *L, int idx);

#endif /* PROF_LUA54_RUNNING_STATE_H */
