/*
** puc_compat.h: the few Lua C API calls the adapter's shared files use that
** Lua 5.1 or 5.2 spells differently or lacks, given their 5.3/5.4 meaning.
** Force-included (-include) into every file of each adapter (5.1 to 5.4);
** in a 5.3/5.4 build it adds nothing but puc_resume.
*/
#ifndef PROF_PUC_COMPAT_H
#define PROF_PUC_COMPAT_H

/* XXX: force-included before the files' own first lines: the feature
** macro some of them define must hold for the system headers pulled in here. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <lauxlib.h>
#include <lua.h>

#if LUA_VERSION_NUM < 502
#define LUA_OK 0
#define lua_pushglobaltable(L) lua_pushvalue((L), LUA_GLOBALSINDEX)
#define luaL_loadbufferx(L, buf, size, name, mode) luaL_loadbuffer((L), (buf), (size), (name))
static inline int lua_absindex(lua_State *L, int idx) {
  return idx > 0 || idx <= LUA_REGISTRYINDEX ? idx : lua_gettop(L) + idx + 1;
}
static inline int luaL_getsubtable(lua_State *L, int idx, const char *name) {
  idx = lua_absindex(L, idx);
  lua_getfield(L, idx, name);
  if (lua_istable(L, -1)) return 1;
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, idx, name);
  return 0;
}
#endif

#if LUA_VERSION_NUM < 503
#define LUA_LOADED_TABLE "_LOADED"
/* From 5.3 on these return the type of the value they push. */
static inline int puc_rawget(lua_State *L, int idx) {
  lua_rawget(L, idx);
  return lua_type(L, -1);
}
static inline int puc_getfield(lua_State *L, int idx, const char *k) {
  lua_getfield(L, idx, k);
  return lua_type(L, -1);
}
#define lua_rawget puc_rawget
#define lua_getfield puc_getfield
/* Only the rotations by one place that the shared files make. */
static inline void lua_rotate(lua_State *L, int idx, int n) {
  if (n == 1) {
    lua_insert(L, idx);
  } else {
    idx = lua_absindex(L, idx);
    lua_pushvalue(L, idx);
    lua_remove(L, idx);
  }
}
#endif

/* lua_resume with 5.4's arguments: *nres gets the results' count. */
static inline int puc_resume(lua_State *co, lua_State *from, int narg, int *nres) {
#if LUA_VERSION_NUM >= 504
  return lua_resume(co, from, narg, nres);
#else
#if LUA_VERSION_NUM == 501
  (void)from;
  const int status = lua_resume(co, narg);
#else
  const int status = lua_resume(co, from, narg);
#endif
  *nres = lua_gettop(co);
  return status;
#endif
}

#endif /* PROF_PUC_COMPAT_H */
