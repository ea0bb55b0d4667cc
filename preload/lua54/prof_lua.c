/*
** prof_lua.c: what the Lua 5.4 adapter's entries (adapter_entry.h: the
** module `prof_lua`, `lua5.4 -l prof_lua script.lua` or require, and the
** agent's prof_adapter_attach) do on a Lua 5.4 universe: the layout check,
** then a prototype publisher between the universe and its allocator (names
** prototypes, tells the agent each allocation's object type, marks the
** running universe), tracked coroutines, named C functions, and the guest
** backtracer and its stack recaller.
*/
#include <stdint.h>
#include <stdlib.h>

#include <lauxlib.h>

#include "adapter_entry.h"
#include "cfunc_names.h"
#include "interpreter_probe.h"
#include "layout_check.h"
#include "libprof.h"
#include "lua54_backtracer.h"
#include "proto_publisher.h"
#include "running_state.h"
#include "universes.h"

/* One per universe, anchored in its registry; its __gc runs at lua_close. */
struct Universe {
  struct ProtoPublisher *publisher;
  lua_State *main;
};

/* The VM's sizeof(Proto), as the layout check learnt it. */
static size_t g_proto_size;

static int universe_gc(lua_State *L) {
  struct Universe *u = lua_touserdata(L, 1);
  universe_remove(u->main);
  running_state_unbind(u->main);
  /* XXX: if another allocator wrapper now sits on top of ours, the
  ** publisher must outlive the state: it is leaked, never freed under it. */
  if (u->publisher && proto_publisher_stop(u->publisher, L)) free(u->publisher);
  u->publisher = NULL;
  return 0;
}

static bool check(lua_State *L, char *why, size_t why_len) {
  return layout_check(L, &g_proto_size, why, why_len);
}

/* What needs no library: the universe's anchor, the allocator wrapper, the
** thread binding. */
static const char *start(lua_State *L, lua_State *main) {
  if (!universe_add(main)) return "too many Lua states profiled at once";
  struct Universe *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->publisher = calloc(1, sizeof *u->publisher);
  u->main = main;
  lua_newtable(L);
  lua_pushcfunction(L, universe_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, ADAPTER_UNIVERSE_KEY);
  if (u->publisher)
    proto_publisher_start(u->publisher, L, main, g_proto_size, prof_guest_object_type != NULL);
  running_state_bind(L);
  return NULL;
}

/* The coroutine functions wrapped, the C functions named, the interpreter found. */
static void start_libs(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  if (lua_getfield(L, -1, "coroutine") == LUA_TTABLE) running_state_wrap_coroutines(L, -1);
  lua_pop(L, 2);
  cfunc_names_start(L);
  /* The interpreter found, host frames in it are guest code's (stripped too). */
  const uint64_t interpreter = interpreter_probe(L);
  if (interpreter && prof_guest_vm_function && prof_guest_vm_function(interpreter, "luaV_execute")) {
    prof_guest_cfunc_symbol(interpreter, "luaV_execute");
    lua54_backtrace_set_reentry(interpreter);
  }
}

static void register_guest(void) {
  static int registered;
  if (registered) return;
  registered = 1;
  prof_register_guest(lua54_backtrace, NULL);
  if (prof_register_guest_stack_recall) prof_register_guest_stack_recall(lua54_recall, NULL);
}

const struct AdapterOps adapter_ops = {
    .check = check,
    .start = start,
    .start_libs = start_libs,
    .register_guest = register_guest,
    .resume_enter = running_state_resume_enter,
    .resume_leave = running_state_resume_leave,
};
