#include "coroutine_wraps.h"

#include <stdint.h>

#include <lauxlib.h>

#include "agent_api.h"

/* Moves narg arguments from L into co and resumes it; leaves its results
** (count returned) or an error message (-1 returned) on L. */
static int resume_moving(lua_State *L, lua_State *co, int narg) {
  if (!lua_checkstack(co, narg)) {
    lua_pushliteral(L, "too many arguments to resume");
    return -1;
  }
#if LUA_VERSION_NUM < 504 /* 5.4's lua_resume says so itself */
  if (lua_status(co) == LUA_OK && lua_gettop(co) == 0) {
    lua_pushliteral(L, "cannot resume dead coroutine");
    return -1;
  }
#endif
  lua_xmove(L, co, narg);
#if LUA_VERSION_NUM == 501
  lua_setlevel(L, co);
#endif
  int nres = 0;
  const int status = coroutine_resume_tracked(co, L, narg, &nres);
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
#if LUA_VERSION_NUM >= 504
  luaL_argexpected(L, co, 1, "thread");
#else
  luaL_argcheck(L, co, 1, "coroutine expected");
#endif
  const int r = resume_moving(L, co, lua_gettop(L) - 1);
  lua_pushboolean(L, r >= 0);
  lua_insert(L, r >= 0 ? -(r + 1) : -2);
  return r >= 0 ? r + 1 : 2;
}

/* The function coroutine.wrap returns; upvalue 1 is the coroutine. */
static int coroutine_wrapped_call(lua_State *L) {
  lua_State *co = lua_tothread(L, lua_upvalueindex(1));
  const int r = resume_moving(L, co, lua_gettop(L));
  if (r >= 0) return r;
  int status = LUA_OK;
#if LUA_VERSION_NUM >= 504
  status = lua_status(co);
  if (status != LUA_OK && status != LUA_YIELD) { /* the coroutine died: close it */
    status = coroutine_reset_tracked(co);
    lua_xmove(co, L, 1);
  }
#endif
  if (status != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) { /* where the call was */
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

#if LUA_VERSION_NUM >= 504
/* coroutine.close(co): as the standard one (lcorolib.c's luaB_close and
** auxstatus), with co tracked while its __close handlers run. */
static int coroutine_close(lua_State *L) {
  lua_State *co = lua_tothread(L, 1);
  luaL_argexpected(L, co, 1, "thread");
  const char *busy = NULL; /* the state that forbids closing it */
  lua_Debug ar;
  if (co == L)
    busy = "running";
  else if (lua_status(co) == LUA_OK && lua_getstack(co, 0, &ar))
    busy = "normal";
  if (busy) return luaL_error(L, "cannot close a %s coroutine", busy);
  if (coroutine_reset_tracked(co) == LUA_OK) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  lua_xmove(co, L, 1); /* the error */
  return 2;
}
#endif

void coroutine_wraps_install(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_pushcfunction(L, coroutine_resume);
  lua_setfield(L, idx, "resume");
  lua_pushcfunction(L, coroutine_wrap);
  lua_setfield(L, idx, "wrap");
#if LUA_VERSION_NUM >= 504
  lua_pushcfunction(L, coroutine_close);
  lua_setfield(L, idx, "close");
#endif
  /* The others are named by the scan of the loaded modules; this one is
  ** reachable only through the functions coroutine.wrap returns. */
  if (prof_guest_cfunc_symbol)
    prof_guest_cfunc_symbol((uint64_t)(uintptr_t)coroutine_wrapped_call, "coroutine.wrap()");
}
