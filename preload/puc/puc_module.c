/*
** puc_module.c: the module `prof_lua` for PUC Lua 5.1, 5.2 and 5.3
** (`lua5.x -l prof_lua script.lua`, or require), and the entry the agent
** calls on a state it saw made (prof_adapter_attach). Each checks the VM's
** layout, then wraps the universe's allocator (names prototypes, object
** types, marks the running universe), tracks coroutines, names C functions
** and registers the guest backtracer with the libprof agent. Without the
** agent (or on a layout mismatch, reported in one line on stderr) it does
** nothing; the program runs unchanged.
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
#include "libprof.h"
#include "puc_alloc.h"
#include "puc_backtracer.h"
#include "puc_check.h"
#include "puc_layout.h"
#include "puc_threads.h"
#include "universes.h"

int luaopen_prof_lua(lua_State *L);
const char *prof_adapter_attach(lua_State *L);
void prof_adapter_resume_enter(lua_State *co);
void prof_adapter_resume_leave(lua_State *co);

#define UNIVERSE_KEY "prof_lua.universe"
#define LIBS_KEY "prof_lua.libraries"

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

/* XXX: the backtracer stays registered with the agent after lua_close, when
** the interpreter unloads its C modules; keep this one mapped for good. */
static void pin_module(void) {
  Dl_info info;
  if (dladdr((void *)pin_module, &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static const char *agent_missing(void) {
  return prof_register_guest && prof_guest_symbol && prof_guest_cfunc_symbol
             ? NULL
             : "the libprof agent is not loaded";
}

/* The universe's main thread, L (5.1 has no registry entry for it: the
** module must be loaded from the main thread there). */
static lua_State *main_thread(lua_State *L) {
#if LUA_VERSION_NUM >= 502
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State *main = lua_tothread(L, -1);
  lua_pop(L, 1);
  return main;
#else
  const int is_main = lua_pushthread(L);
  lua_pop(L, 1);
  return is_main ? L : NULL;
#endif
}

static bool started(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, UNIVERSE_KEY);
  const bool yes = !lua_isnil(L, -1);
  lua_pop(L, 1);
  return yes;
}

/* What needs no library: the allocator wrapper, the universe's anchor, the
** thread binding. NULL, or why it could not start. */
static const char *start_core(lua_State *L, lua_State *main) {
  if (!universe_add(main)) return "too many Lua states profiled at once";
  struct Universe *u = lua_newuserdata(L, sizeof *u);
  u->alloc = calloc(1, sizeof *u->alloc);
  u->main = main;
  lua_newtable(L);
  lua_pushcfunction(L, universe_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, UNIVERSE_KEY);
  lua_pushthread(main);
  lua_xmove(main, L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, PUC_MAIN_KEY);
  pin_module();
  if (u->alloc) puc_alloc_start(u->alloc, L, main, prof_guest_object_type != NULL);
  puc_thread_runs(main);
  return NULL;
}

/* Registers the backtracer, once: from then on every stack recorded is
** walked (after start_libs where it can run first, so that all are named). */
static void register_guest(void) {
  static int registered;
  if (!registered) {
    registered = 1;
    prof_guest_cfunc_symbol(PROF_GUEST_CUT_ADDR, "[… more frames]");
    prof_register_guest(puc_backtrace, NULL);
  }
}

/* What needs the standard libraries, once per universe: the coroutine
** functions wrapped, the C functions named, the interpreter found. */
static void start_libs(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, LIBS_KEY);
  const bool done = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (done) return;
  lua_pushboolean(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, LIBS_KEY);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_getfield(L, -1, "coroutine");
  if (lua_istable(L, -1)) puc_wrap_coroutines(L, -1);
  lua_pop(L, 2);
  cfunc_names_start(L);
  prof_guest_cfunc_symbol((uint64_t)(uintptr_t)luaopen_prof_lua, "luaopen_prof_lua");
  /* The interpreter found, host frames in it are guest code's (stripped too). */
  const uint64_t interpreter = interpreter_probe(L);
  if (interpreter && prof_guest_vm_function && prof_guest_vm_function(interpreter, "luaV_execute")) {
    prof_guest_cfunc_symbol(interpreter, "luaV_execute");
    puc_backtrace_set_reentry(interpreter);
  }
}

static int disabled(lua_State *L, const char *reason) {
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "enabled");
  lua_pushstring(L, reason);
  lua_setfield(L, -2, "reason");
  return 1;
}

__attribute__((visibility("default"))) int luaopen_prof_lua(lua_State *L) {
  lua_newtable(L);
  const char *missing = agent_missing();
  if (missing) return disabled(L, missing);
  if (started(L)) {
    start_libs(L);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "enabled");
    return 1;
  }
  lua_State *main = main_thread(L);
  if (!main) return disabled(L, "load prof_lua from the main thread (Lua 5.1)");
  char why[160];
  if (!puc_check(L, why, sizeof why)) {
    fprintf(stderr, "prof_lua: no Lua frames will be recorded: %s\n", why);
    return disabled(L, why);
  }
  const char *failed = start_core(L, main);
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
  if (started(L)) return NULL;
  /* The check runs Lua code with the libraries: on a scratch state of the
  ** same library, never on the program's own, which has none yet. */
  lua_State *scratch = luaL_newstate();
  if (!scratch) return "cannot make a scratch state for the layout check";
  luaL_openlibs(scratch);
  const bool ok = puc_check(scratch, why, sizeof why);
  lua_close(scratch);
  if (!ok) return why;
  const char *failed = start_core(L, L);
  if (failed) return failed;
  register_guest();
  lua_sethook(L, libraries_hook, LUA_MASKCALL, 0);
  return NULL;
}

/* Called by the agent around the program's own lua_resume(co, ...): co runs
** on this thread until the matching leave (puc_threads.h). */
__attribute__((visibility("default"))) void prof_adapter_resume_enter(lua_State *co) {
  puc_resume_enter(co);
}
__attribute__((visibility("default"))) void prof_adapter_resume_leave(lua_State *co) {
  puc_resume_leave(co);
}
