/*
** coroutine_wraps.h: coroutine.resume and coroutine.wrap (and 5.4's
** coroutine.close) as the standard ones (lcorolib.c's, 5.1 to 5.4), each resume made through the adapter's
** tracked resume, so that a walk knows which coroutine runs on the thread
** (the PUC Lua adapters have no other way to tell).
*/
#ifndef PROF_PUC_COROUTINE_WRAPS_H
#define PROF_PUC_COROUTINE_WRAPS_H

#include <lua.h>

/* Supplied by each adapter: lua_resume (5.4's arguments, puc_compat.h's
** puc_resume) with co on this thread's resume stack meanwhile. Nothing in
** it may raise a Lua error while co is pushed. */
int coroutine_resume_tracked(lua_State *co, lua_State *from, int narg, int *nres);
#if LUA_VERSION_NUM >= 504
/* lua_resetthread (which runs co's pending __close handlers) as co. */
int coroutine_reset_tracked(lua_State *co);
#endif

/* Replaces resume, wrap (and close) in the coroutine table at idx. */
void coroutine_wraps_install(lua_State *L, int idx);

#endif /* PROF_PUC_COROUTINE_WRAPS_H */
