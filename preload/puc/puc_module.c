/*
** puc_module.c: what the Lua 5.1 to 5.4 adapters' entries
** (adapter_entry.h: the module `prof_lua`, `lua5.x -l prof_lua` or require,
** and the agent's prof_adapter_attach) do on such a universe: the layout
** check, then the allocator wrapper (names prototypes, object types, marks
** the running universe), tracked coroutines, named C functions, and the
** guest backtracer and its stack recaller.
*/
#include <stdint.h>
#include <stdlib.h>

#include <lauxlib.h>

#include "adapter_entry.h"
#include "cfunc_names.h"
#include "coroutine_wraps.h"
#include "interpreter_probe.h"
#include "agent_api.h"
#include "puc_alloc.h"
#include "puc_backtracer.h"
#include "puc_check.h"
#include "puc_threads.h"
#include "puc_walk.h"
#include "universes.h"

/* One per universe, anchored in its registry; its __gc runs at lua_close. */
struct Universe {
  struct PucAlloc *alloc;
  lua_State *main;
};

static int universe_gc(lua_State *L) {
  struct Universe *u = lua_touserdata(L, 1);
  universe_remove(u->main);
  if (puc_slot.main == u->main) puc_thread_runs(NULL);
  /* XXX: if another allocator wrapper now sits on top of ours, the
  ** wrapper must outlive the state: it is leaked, never freed under it. */
  if (u->alloc && puc_alloc_stop(u->alloc, L)) free(u->alloc);
  u->alloc = NULL;
  return 0;
}

/* What needs no library: the universe's anchor, the allocator wrapper, the
** thread binding. */
static const char *start(lua_State *L, lua_State *main) {
  if (!universe_add(main)) return "too many Lua states profiled at once";
  struct Universe *u = lua_newuserdata(L, sizeof *u);
  u->alloc = calloc(1, sizeof *u->alloc);
  u->main = main;
  lua_newtable(L);
  lua_pushcfunction(L, universe_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, ADAPTER_UNIVERSE_KEY);
  lua_pushthread(main);
  lua_xmove(main, L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, PUC_MAIN_KEY);
  if (u->alloc) puc_alloc_start(u->alloc, L, main, prof_guest_object_type != NULL);
  puc_thread_runs(main);
  return NULL;
}

/* The C functions named, the interpreter found: host frames in it are
** guest code's (stripped too). */
static void name_code(lua_State *L) {
  cfunc_names_start(L);
  const uint64_t interpreter = interpreter_probe(L);
  if (interpreter && prof_guest_vm_function && prof_guest_vm_function(interpreter, "luaV_execute")) {
    prof_guest_cfunc_symbol(interpreter, "luaV_execute");
    puc_backtrace_set_reentry(interpreter);
  }
}

/* The coroutine functions wrapped, then name_code. */
static void start_libs(lua_State *L) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, -1, "coroutine");
  if (lua_istable(L, -1)) coroutine_wraps_install(L, -1);
  lua_pop(L, 2);
  name_code(L);
}

static void register_guest(void) {
  static int registered;
  if (registered) return;
  registered = 1;
  prof_register_guest(puc_backtrace, NULL);
  if (puc_walk_can_remember() && prof_register_guest_stack_recall)
    prof_register_guest_stack_recall(puc_recall, NULL);
}

const struct AdapterOps adapter_ops = {
    .check = puc_check,
    .start = start,
    .start_libs = start_libs,
    .name_code = name_code,
    .register_guest = register_guest,
    .resume_enter = puc_resume_enter,
    .resume_leave = puc_resume_leave,
};
