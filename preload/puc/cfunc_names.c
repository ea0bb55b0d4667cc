#include "cfunc_names.h"

#include <stdint.h>

#include <lauxlib.h>

#include "agent_api.h"

/* The scan, in Lua for its table walks and sorting. Its argument is the
** naming function; it names the globals and the loaded modules and returns
** the function that names one newly required module. */
static const char kScanSource[] =
    "local name_cfunc, G, loaded = ...\n"
    "local type, next, rawget, sort = type, next, rawget, table.sort\n"
    "local function scan(prefix, t)\n"
    "  local names, k, v = {}, next(t)\n"
    "  while k ~= nil do\n"
    "    if type(k) == 'string' and type(v) == 'function' then names[#names + 1] = k end\n"
    "    k, v = next(t, k)\n"
    "  end\n"
    "  sort(names)\n"
    "  for i = 1, #names do name_cfunc(rawget(t, names[i]), prefix .. names[i]) end\n"
    "end\n"
    "scan('', G)\n"
    "local mods, name, m = {}, next(loaded)\n"
    "while name ~= nil do\n"
    "  if type(name) == 'string' and type(m) == 'table' and m ~= G then mods[#mods + 1] = name end\n"
    "  name, m = next(loaded, name)\n"
    "end\n"
    "sort(mods)\n"
    "for i = 1, #mods do scan(mods[i] .. '.', loaded[mods[i]]) end\n"
    "return function(name, m)\n"
    "  if type(name) == 'string' and type(m) == 'table' and m ~= G then scan(name .. '.', m) end\n"
    "end\n";

/* name_cfunc(f, name); upvalue 1: the set of addresses already named. */
static int name_cfunc(lua_State *L) {
  lua_CFunction f = lua_tocfunction(L, 1);
  const char *name = lua_tostring(L, 2);
  if (!f || !name) return 0;
  lua_pushlightuserdata(L, (void *)(uintptr_t)f);
  if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 0;
  lua_pushlightuserdata(L, (void *)(uintptr_t)f);
  lua_pushboolean(L, 1);
  lua_rawset(L, lua_upvalueindex(1));
  prof_guest_cfunc_symbol((uint64_t)(uintptr_t)f, name);
  return 0;
}

/* require(name, ...) that names the C functions of a module it loads for
** the first time. Upvalues: the original require, the module scan. */
static int require_naming(lua_State *L) {
  const int nargs = lua_gettop(L);
  int was_loaded = 1;
  if (lua_type(L, 1) == LUA_TSTRING) {
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    was_loaded = lua_getfield(L, -1, lua_tostring(L, 1)) != LUA_TNIL;
    lua_pop(L, 2);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  for (int i = 1; i <= nargs; i++) lua_pushvalue(L, i);
  lua_call(L, nargs, LUA_MULTRET);
  const int nres = lua_gettop(L) - nargs;
  if (!was_loaded && nres > 0 && lua_type(L, nargs + 1) == LUA_TTABLE) {
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, 1);
    lua_pushvalue(L, nargs + 1);
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) lua_pop(L, 1);
  }
  return nres;
}

static void mark_named(lua_State *L, int named, lua_CFunction f) {
  lua_pushlightuserdata(L, (void *)(uintptr_t)f);
  lua_pushboolean(L, 1);
  lua_rawset(L, named);
}

void cfunc_names_start(lua_State *L) {
  /* The frame ending a guest stack cut at its limit (libprof.h). */
  prof_guest_cfunc_symbol(PROF_GUEST_CUT_ADDR, "[… more frames]");
  const int top = lua_gettop(L);
  /* XXX: raw accesses to _G: a strict-mode metatable must not fire here. */
  lua_pushglobaltable(L);
  const int globals = top + 1;
  lua_newtable(L);
  const int named = top + 2; /* addresses named */
  lua_pushliteral(L, "require");
  lua_rawget(L, globals);
  const int original = top + 3;
  const lua_CFunction require = lua_tocfunction(L, original);
  /* The wrapper and the function it wraps are named first, so that the
  ** scan cannot call both "require". */
  if (require) {
    prof_guest_cfunc_symbol((uint64_t)(uintptr_t)require_naming, "prof_lua.require");
    prof_guest_cfunc_symbol((uint64_t)(uintptr_t)require, "require");
    mark_named(L, named, require_naming);
    mark_named(L, named, require);
  }
  if (luaL_loadbufferx(L, kScanSource, sizeof kScanSource - 1, "=prof_lua", "t") != LUA_OK) {
    lua_settop(L, top);
    return;
  }
  lua_pushvalue(L, named);
  lua_pushcclosure(L, name_cfunc, 1);
  lua_pushvalue(L, globals);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_pcall(L, 3, 1, 0) == LUA_OK && lua_isfunction(L, -1) && require) {
    lua_pushliteral(L, "require");
    lua_pushvalue(L, original);
    lua_rotate(L, -3, -1); /* "require", original, scan */
    lua_pushcclosure(L, require_naming, 2);
    lua_rawset(L, globals);
  }
  lua_settop(L, top);
}
