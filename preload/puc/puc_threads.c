#include "puc_threads.h"

#include <stdint.h>

#include <lauxlib.h>

#include "libprof.h"
#include "puc_walk.h"

__thread struct PucSlot puc_slot __attribute__((tls_model("initial-exec")));

/* XXX: the slot is read by this thread's own signal handlers, so a compiler
** barrier orders its writes; no other thread ever reads it. */
#define SIGNAL_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* The main thread of the universe of L (PUC_MAIN_KEY, set when it starts). */
static lua_State *main_of(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, PUC_MAIN_KEY);
  lua_State *main = lua_tothread(L, -1);
  lua_pop(L, 1);
  return main;
}

void puc_resume_enter(lua_State *co) {
  lua_State *main = main_of(co);
  if (main && main != puc_slot.main) puc_thread_runs(main);
  resume_links_enter(&puc_slot.top, co);
}

void puc_resume_leave(lua_State *co) {
  (void)co;
  resume_links_leave(&puc_slot.top);
}

/* Moves narg arguments from L into co and resumes it, co on top of this
** thread's resume stack meanwhile; leaves its results (count returned) or
** an error message (-1 returned) on L, as lcorolib.c's auxresume. */
static int resume_moving(lua_State *L, lua_State *co, int narg) {
  if (!lua_checkstack(co, narg)) {
    lua_pushliteral(L, "too many arguments to resume");
    return -1;
  }
  if (lua_status(co) == LUA_OK && lua_gettop(co) == 0) {
    lua_pushliteral(L, "cannot resume dead coroutine");
    return -1;
  }
  lua_xmove(L, co, narg);
#if LUA_VERSION_NUM == 501
  lua_setlevel(L, co);
#endif
  struct PucSlot *s = &puc_slot;
  if (!s->main || puc_global(s->main) != puc_global(L)) puc_thread_runs(main_of(L));
  struct ResumeLink link = {co, s->top};
  SIGNAL_FENCE();
  s->top = &link;
  SIGNAL_FENCE();
  int nres = 0;
  const int status = puc_resume(co, L, narg, &nres);
  SIGNAL_FENCE();
  s->top = link.prev;
  SIGNAL_FENCE();
  if (status != LUA_OK && status != LUA_YIELD) {
    lua_xmove(co, L, 1);
    return -1;
  }
  if (!lua_checkstack(L, nres + 1)) {
    lua_pop(co, nres);
    lua_pushliteral(L, "too many results to resume");
    return -1;
  }
  lua_xmove(co, L, nres);
  return nres;
}

/* coroutine.resume(co, ...): as the standard one, with co tracked. */
static int coroutine_resume(lua_State *L) {
  lua_State *co = lua_tothread(L, 1);
  luaL_argcheck(L, co, 1, "coroutine expected");
  const int r = resume_moving(L, co, lua_gettop(L) - 1);
  if (r < 0) {
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_insert(L, -(r + 1));
  return r + 1;
}

/* The function coroutine.wrap returns; upvalue 1 is the coroutine. */
static int coroutine_wrapped_call(lua_State *L) {
  lua_State *co = lua_tothread(L, lua_upvalueindex(1));
  const int r = resume_moving(L, co, lua_gettop(L));
  if (r >= 0) return r;
  if (lua_type(L, -1) == LUA_TSTRING) { /* where the call was */
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
  }
  return lua_error(L);
}

/* coroutine.wrap(f): as the standard one, with its resumes tracked. */
static int coroutine_wrap(lua_State *L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_State *co = lua_newthread(L);
  lua_pushvalue(L, 1);
  lua_xmove(L, co, 1);
  lua_pushcclosure(L, coroutine_wrapped_call, 1);
  return 1;
}

void puc_wrap_coroutines(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_pushcfunction(L, coroutine_resume);
  lua_setfield(L, idx, "resume");
  lua_pushcfunction(L, coroutine_wrap);
  lua_setfield(L, idx, "wrap");
  /* The others are named by the scan of the loaded modules; this one is
  ** reachable only through the functions coroutine.wrap returns. */
  if (prof_guest_cfunc_symbol)
    prof_guest_cfunc_symbol((uint64_t)(uintptr_t)coroutine_wrapped_call, "coroutine.wrap()");
}
