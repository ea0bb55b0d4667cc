/*
** prof_lua.c: the Lua 5.4 module `prof_lua` (`lua5.4 -l prof_lua script.lua`,
** or require), and the entry the agent calls on a state it saw made
** (prof_adapter_attach): checks the interpreter's layouts, then names
** prototypes and C
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
#include <lualib.h>

#include "cfunc_names.h"
#include "interpreter_probe.h"
#include "layout_check.h"
#include "libprof.h"
#include "lua54_backtracer.h"
#include "proto_publisher.h"
#include "running_state.h"
#include "universes.h"

int luaopen_prof_lua(lua_State *L);
const char *prof_adapter_attach(lua_State *L);
void prof_adapter_resume_enter(lua_State *co);
void prof_adapter_resume_leave(lua_State *co);

#define UNIVERSE_KEY "prof_lua.universe"
#define LIBS_KEY "prof_lua.libraries"

/* One per universe, anchored in its registry; its __gc runs at lua_close. */
struct Universe {
  struct ProtoPublisher *publisher;
  lua_State *main;
};

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

/* What needs no library: the universe's anchor, the allocator wrapper, the
** thread binding. NULL, or why it could not start. */
static const char *start_core(lua_State *L, size_t proto_size) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State *main = lua_tothread(L, -1);
  lua_pop(L, 1);
  if (!universe_add(main)) return "too many Lua states profiled at once";
  struct Universe *u = lua_newuserdatauv(L, sizeof *u, 0);
  u->publisher = calloc(1, sizeof *u->publisher);
  u->main = main;
  lua_newtable(L);
  lua_pushcfunction(L, universe_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, UNIVERSE_KEY);
  pin_module();
  if (u->publisher)
    proto_publisher_start(u->publisher, L, main, proto_size, prof_guest_object_type != NULL);
  running_state_bind(L);
  return NULL;
}

/* Registers the backtracer, once: from then on every stack recorded is
** walked (after start_libs where it can run first, so that all are named). */
static void register_guest(void) {
  static int registered;
  if (!registered) {
    registered = 1;
    prof_register_guest(lua54_backtrace, NULL);
    if (prof_register_guest_stack_recall) prof_register_guest_stack_recall(lua54_recall, NULL);
  }
}

/* What needs the standard libraries, once per universe: the coroutine
** functions wrapped, the C functions named, the interpreter found. */
static void start_libs(lua_State *L) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, LIBS_KEY) != LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  lua_pushboolean(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, LIBS_KEY);
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
}

static const char *agent_missing(void) {
  return prof_register_guest && prof_guest_symbol && prof_guest_cfunc_symbol
             ? NULL
             : "the libprof agent is not loaded";
}

__attribute__((visibility("default"))) int luaopen_prof_lua(lua_State *L) {
  lua_newtable(L);
  const char *missing = agent_missing();
  if (missing) return disabled(L, missing);
  if (lua_getfield(L, LUA_REGISTRYINDEX, UNIVERSE_KEY) != LUA_TNIL) {
    lua_pop(L, 1);
    start_libs(L); /* an attached universe required before its first Lua call */
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
  const char *failed = start_core(L, proto_size);
  if (failed) return disabled(L, failed);
  start_libs(L);
  register_guest();
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, "enabled");
  return 1;
}

/* Finishes an attached universe at its first Lua call, when the program has
** opened its libraries; each thread made before carries the hook until it
** runs once. */
static void libraries_hook(lua_State *L, lua_Debug *ar) {
  if (ar->event != LUA_HOOKCALL || !lua_getinfo(L, "S", ar) || ar->what[0] == 'C') return;
  lua_sethook(L, NULL, 0, 0);
  start_libs(L);
}

__attribute__((visibility("default"))) const char *prof_adapter_attach(lua_State *L) {
  static char why[200];
  const char *missing = agent_missing();
  if (missing) return missing;
  const int known = lua_getfield(L, LUA_REGISTRYINDEX, UNIVERSE_KEY) != LUA_TNIL;
  lua_pop(L, 1);
  if (known) return NULL;
  /* The check runs Lua code with the libraries: on a scratch state of the
  ** same library, never on the program's own, which has none yet. */
  lua_State *scratch = luaL_newstate();
  if (!scratch) return "cannot make a scratch state for the layout check";
  luaL_openlibs(scratch);
  size_t proto_size = 0;
  const bool ok = layout_check(scratch, &proto_size, why, sizeof why);
  lua_close(scratch);
  if (!ok) return why;
  const char *failed = start_core(L, proto_size);
  if (failed) return failed;
  register_guest();
  lua_sethook(L, libraries_hook, LUA_MASKCALL, 0);
  return NULL;
}

/* Called by the agent around the program's own lua_resume(co, ...): co runs
** on this thread until the matching leave (resume_links.h). */
__attribute__((visibility("default"))) void prof_adapter_resume_enter(lua_State *co) {
  running_state_resume_enter(co);
}
__attribute__((visibility("default"))) void prof_adapter_resume_leave(lua_State *co) {
  running_state_resume_leave(co);
}
