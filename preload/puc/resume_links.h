/*
** resume_links.h: the per-thread stack of coroutines resumed on an OS
** thread, innermost on top, that the PUC Lua adapters (5.1 to 5.4) walk
** before the main thread. The adapters' coroutine wrappers keep a link in
** their own C frame; a coroutine the program resumes itself with lua_resume
** from C (as HAProxy runs each request) is reported by the agent, which
** sees that call, through the adapter's prof_adapter_resume_enter and
** _leave: its link is kept here.
**
** Invariants callers rely on: only the owning thread writes its stack, with
** compiler barriers (its signal handlers read it); a resume a wrapper
** already pushed (co on top) is not pushed twice; nests deeper than
** RESUME_LINKS_MAX reported resumes are not pushed.
*/
#ifndef PROF_PUC_RESUME_LINKS_H
#define PROF_PUC_RESUME_LINKS_H

#include <lua.h>

struct ResumeLink {
  lua_State *co;
  struct ResumeLink *prev;
};

#define RESUME_LINKS_MAX 64

/* Pushes co on *top for a resume the agent reports; returns whether it was
** pushed (false: already on top, or too deep). */
int resume_links_enter(struct ResumeLink **top, lua_State *co);
/* Pops what the matching enter pushed. */
void resume_links_leave(struct ResumeLink **top);

#endif /* PROF_PUC_RESUME_LINKS_H */
