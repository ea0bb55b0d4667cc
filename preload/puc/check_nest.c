#include "check_nest.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

static const char kNest[] =
    "local probe, cocreate, coresume, pcall = ...\n"  /* 1 */
    "local function leaf()\n"                          /* 2 */
    "  return probe() + 0\n"                           /* 3 */
    "end\n"                                            /* 4 */
    "local function tail()\n"                          /* 5 */
    "  return leaf()\n"                                /* 6 */
    "end\n"                                            /* 7 */
    "local function mid()\n"                           /* 8 */
    "  local n = tail()\n"                             /* 9 */
    "  return n\n"                                     /* 10 */
    "end\n"                                            /* 11 */
    "local co = cocreate(function() return mid() end)\n"
    "local ok, n = coresume(co)\n"
    "local ok2, m = pcall(mid)\n"
    "return ok and ok2 and n + m + mid()\n";

static bool fail(char *why, size_t why_len, const char *fmt, ...) {
  if (why[0]) return false;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, why_len, fmt, ap);
  va_end(ap);
  return false;
}

bool check_nest_load(lua_State *L, char *why, size_t why_len) {
  if (luaL_loadbufferx(L, kNest, sizeof kNest - 1, "=prof_lua layout check", "t") == LUA_OK)
    return true;
  return fail(why, why_len, "cannot load the check: %s", lua_tostring(L, -1));
}

bool check_nest_call(lua_State *L, lua_CFunction probe, void *ud, bool *result, char *why,
                     size_t why_len) {
  *result = false;
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, -1, "coroutine");
  lua_getfield(L, -2, "_G");
  lua_remove(L, -3); /* the nest, coroutine, _G */
  if (!lua_istable(L, -1) || !lua_istable(L, -2)) {
    lua_pop(L, 2);
    return fail(why, why_len, "needs the base and coroutine libraries");
  }
  lua_pushlightuserdata(L, ud);
  lua_pushcclosure(L, probe, 1);
  lua_getfield(L, -3, "create");
  lua_getfield(L, -4, "resume");
  lua_getfield(L, -4, "pcall");
  lua_remove(L, -5);
  lua_remove(L, -5); /* the nest, probe, create, resume, pcall */
  if (!lua_isfunction(L, -1) || !lua_isfunction(L, -2) || !lua_isfunction(L, -3)) {
    lua_pop(L, 4);
    return fail(why, why_len, "needs the base and coroutine libraries");
  }
  if (lua_pcall(L, 4, 1, 0) != LUA_OK)
    return fail(why, why_len, "the nest raised: %s", lua_tostring(L, -1));
  *result = lua_toboolean(L, -1);
  return true;
}

bool check_nest_compare(lua_State *L, const struct NestWalk *w,
                        bool (*proto_matches)(const void *ctx, const void *proto,
                                              const lua_Debug *ar),
                        const void *ctx, const char *release, int *tails, char *why,
                        size_t why_len) {
#define DIFFERS(fmt, ...) fail(why, why_len, "internals differ from %s: " fmt, release, ##__VA_ARGS__)
  lua_Debug ar;
  int at = 0; /* the walk's frame for the level */
  for (int level = 0; lua_getstack(L, level, &ar); level++) {
#if LUA_VERSION_NUM >= 502
    lua_getinfo(L, "Sltf", &ar);
    const bool tail = ar.istailcall != 0;
#else
    lua_getinfo(L, "Slf", &ar);
    if (strcmp(ar.what, "tail") == 0) { /* a call lost to a tail call */
      lua_pop(L, 1);
      continue;
    }
    const bool tail = at < w->n && w->tails[at];
#endif
    const void *fn = lua_topointer(L, -1);
    const lua_CFunction cf = lua_tocfunction(L, -1);
    lua_pop(L, 1);
    if (at >= w->n) return DIFFERS("the walk found %d frames, lua_getstack more", w->n);
    const struct prof_guest_frame *f = &w->frames[at];
    if (ar.what[0] == 'C') {
      if (f->type != PROF_FRAME_CFUNC || f->addr != (uint64_t)(uintptr_t)cf)
        return DIFFERS("C function at level %d", level);
      at++;
      continue;
    }
    const uint64_t line = ar.currentline > 0 ? (uint64_t)ar.currentline : 0;
    if (f->type != PROF_FRAME_LFUNC || w->closures[at] != fn || f->line != line ||
        w->tails[at] != tail)
      return DIFFERS("Lua frame at level %d (%s:%d)", level, ar.short_src, ar.currentline);
    if (!proto_matches(ctx, (const void *)(uintptr_t)f->addr, &ar))
      return DIFFERS("prototype at level %d (%s:%d)", level, ar.short_src, ar.linedefined);
    *tails += w->tails[at];
    at++;
  }
  if (at != w->n) return DIFFERS("the walk found %d frames, lua_getstack %d", w->n, at);
  return true;
#undef DIFFERS
}
