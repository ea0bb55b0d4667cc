#include "proto_events.h"

#include "lj_build.h"
#include "symbols.h"

/* The handler: its argument is the new prototype, a value of a type the
** Lua API does not read. */
static int on_new_proto(lua_State *L) {
  const struct LjLayout *o = lj_build->layout;
  const uint64_t *base = (const uint64_t *)(uintptr_t)lj_u64(L, o->L_base);
  const uint64_t *top = (const uint64_t *)(uintptr_t)lj_u64(L, o->L_top);
  if (top > base && lj_tag(base[0], o) == ~LJ_GCT_PROTO)
    symbols_name_proto((const LJProto *)(uintptr_t)lj_gcref(base[0], o));
  return 0;
}

bool proto_events_attach(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
  if (lua_type(L, -1) == LUA_TTABLE) lua_getfield(L, -1, "jit");
  else lua_pushnil(L);
  if (lua_type(L, -1) == LUA_TTABLE) lua_getfield(L, -1, "attach");
  else lua_pushnil(L);
  if (lua_type(L, -1) != LUA_TFUNCTION) {
    lua_pop(L, 3);
    return false;
  }
  lua_pushcfunction(L, on_new_proto);
  lua_pushliteral(L, "bc");
  const bool attached = lua_pcall(L, 2, 0, 0) == 0;
  lua_pop(L, attached ? 2 : 3);
  return attached;
}
