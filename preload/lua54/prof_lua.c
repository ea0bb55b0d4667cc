/*
** prof_lua.c: the Lua 5.4 module `prof_lua` (`lua5.4 -l prof_lua script.lua`,
** or require): checks the interpreter's layouts, then names prototypes and C
** functions, tells the agent each allocation's object type, tracks
** coroutines and registers the guest backtracer with the
** libprof agent. Without the agent (or on a layout mismatch, reported in one
** line on stderr) it does nothing; the program runs unchanged.
**
** The module returns a table: enabled (boolean) and, when not enabled,
** reason (string).
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>

#include "cfunc_names.h"
#include "interpreter_probe.h"
#include "layout_check.h"
#include "libprof.h"
#include "lua54_backtracer.h"
#include "proto_publisher.h"
#include "running_state.h"

int luaopen_prof_lua(lua_State *L);

#define UNIVERSE_KEY "prof_lua.universe"

/* One per universe, anchored in its registry; its __gc runs at lua_close. */
struct Universe {
  struct ProtoPublisher *publisher;
  lua_State *main;
};

static int universe_gc(lua_State *L) {
  struct Universe *u = lua_touserdata(L, 1);
  running_state_unbind(u->main);
  /* XXX: if another allocator wrapper now sits on top of ours, the
  ** publisher must outlive the state: it is leaked, never freed under it. */
  if (u->publisher && proto_publisher_stop(u->publisher, L)) free(u->publisher);
  u->publisher = NULL;
  return 0;
}

/* XXX: the backtracer stays registered with the agent after lua_close, when
** the interpreter unloads its C modules; keep this one mapped for good. */
static void pin_module(void) {
  Dl_info info;
  if (dladdr((void *)pin_module, &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static int disabled(lua_State *L, const char *reason) {
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "enabled");
  lua_pushstring(L, reason);
  lua_setfield(L, -2, "reason");
  return 1;
}

/* Names what the universe holds and wraps the coroutine functions, then
** binds this thread and registers: every stack recorded is named. */
static void start(lua_State *L, size_t proto_size) {
  struct Universe *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->publisher = calloc(1, sizeof *u->publisher);
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  u->main = lua_tothread(L, -1);
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushcfunction(L, universe_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, UNIVERSE_KEY);
  if (u->publisher)
    proto_publisher_start(u->publisher, L, proto_size, prof_guest_object_type != NULL);

  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "coroutine") == LUA_TTABLE) running_state_wrap_coroutines(L, -1);
  lua_pop(L, 2);
  cfunc_names_start(L);
  prof_guest_cfunc_symbol((uint64_t)(uintptr_t)luaopen_prof_lua, "luaopen_prof_lua");

  /* The interpreter found, host frames in it are guest code's (stripped too). */
  const uint64_t interpreter = interpreter_probe(L);
  if (interpreter && prof_guest_vm_function && prof_guest_vm_function(interpreter, "luaV_execute")) {
    prof_guest_cfunc_symbol(interpreter, "luaV_execute");
    lua54_backtrace_set_reentry(interpreter);
  }

  running_state_bind(L);
  static int registered;
  if (!registered) {
    registered = 1;
    prof_register_guest(lua54_backtrace, NULL);
    if (prof_register_guest_stack_recall) prof_register_guest_stack_recall(lua54_recall, NULL);
  }
}

__attribute__((visibility("default"))) int luaopen_prof_lua(lua_State *L) {
  lua_newtable(L);
  if (!prof_register_guest || !prof_guest_symbol || !prof_guest_cfunc_symbol)
    return disabled(L, "the libprof agent is not loaded");
  if (lua_getfield(L, LUA_REGISTRYINDEX, UNIVERSE_KEY) != LUA_TNIL) {
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "enabled");
    return 1;
  }
  lua_pop(L, 1);
  char why[160];
  size_t proto_size = 0;
  if (!layout_check(L, &proto_size, why, sizeof why)) {
    fprintf(stderr, "prof_lua: no Lua frames will be recorded: %s\n", why);
    return disabled(L, why);
  }
  pin_module();
  start(L, proto_size);
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, "enabled");
  return 1;
}
