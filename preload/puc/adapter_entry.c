#define _GNU_SOURCE
#include "adapter_entry.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include <lauxlib.h>
#include <lualib.h>

#include "agent_api.h"
#include "live_states.h"
#include "safe_read.h"

#define LIBS_KEY "prof_lua.libraries"

int luaopen_prof_lua(lua_State *L);
const char *prof_adapter_attach(lua_State *L);
void prof_adapter_resume_enter(lua_State *co);
void prof_adapter_resume_leave(lua_State *co);
const char *prof_adapter_attach_live(int memory);
void prof_adapter_detach_live(void);

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

static bool started(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, ADAPTER_UNIVERSE_KEY);
  const bool yes = !lua_isnil(L, -1);
  lua_pop(L, 1);
  return yes;
}

/* The main thread of L's universe (5.1 names it nowhere: NULL unless L is it). */
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

/* start_libs, once per universe. */
static void start_libs_once(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, LIBS_KEY);
  const bool done = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (done) return;
  lua_pushboolean(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, LIBS_KEY);
  adapter_ops.start_libs(L);
  prof_guest_cfunc_symbol((uint64_t)(uintptr_t)luaopen_prof_lua, "luaopen_prof_lua");
}

static int answer(lua_State *L, const char *reason) {
  lua_pushboolean(L, reason == NULL);
  lua_setfield(L, -2, "enabled");
  if (!reason) return 1;
  lua_pushstring(L, reason);
  lua_setfield(L, -2, "reason");
  return 1;
}

__attribute__((visibility("default"))) int luaopen_prof_lua(lua_State *L) {
  lua_newtable(L);
  const char *missing = agent_missing();
  if (missing) return answer(L, missing);
  if (started(L)) { /* attached, or required again */
    start_libs_once(L);
    return answer(L, NULL);
  }
  lua_State *main = main_thread(L);
  if (!main) return answer(L, "load prof_lua from the main thread");
  char why[160];
  why[0] = 0;
  if (!adapter_ops.check(L, why, sizeof why)) {
    fprintf(stderr, "prof_lua: no Lua frames will be recorded: %s\n", why);
    return answer(L, why);
  }
  pin_module();
  const char *failed = adapter_ops.start(L, main);
  if (failed) return answer(L, failed);
  start_libs_once(L);
  adapter_ops.register_guest();
  return answer(L, NULL);
}

/* Finishes an attached universe at its first Lua call, when the program has
** opened its libraries; each thread made before carries the hook until it
** runs once. */
static void libraries_hook(lua_State *L, lua_Debug *ar) {
  if (ar->event != LUA_HOOKCALL || !lua_getinfo(L, "S", ar) || ar->what[0] == 'C') return;
  lua_sethook(L, NULL, 0, 0);
  start_libs_once(L);
}

/* A state of the same library, its libraries open and its layout checked
** (the check runs Lua code: never on a program's state that has none, nor
** on one the program runs), for use, then lua_close; NULL with *why. */
static lua_State *checked_scratch(const char **why) {
  static char text[200];
  lua_State *scratch = luaL_newstate();
  if (!scratch) {
    *why = "cannot make a scratch state for the layout check";
    return NULL;
  }
  luaL_openlibs(scratch);
  text[0] = 0;
  if (adapter_ops.check(scratch, text, sizeof text)) return scratch;
  lua_close(scratch);
  *why = text;
  return NULL;
}

__attribute__((visibility("default"))) const char *prof_adapter_attach(lua_State *L) {
  const char *missing = agent_missing();
  if (missing) return missing;
  if (started(L)) return NULL;
  const char *why = NULL;
  lua_State *scratch = checked_scratch(&why);
  if (!scratch) return why;
  lua_close(scratch);
  pin_module();
  const char *failed = adapter_ops.start(L, L);
  if (failed) return failed;
  adapter_ops.register_guest();
  lua_sethook(L, libraries_hook, LUA_MASKCALL, 0);
  return NULL;
}

__attribute__((visibility("default"))) void prof_adapter_resume_enter(lua_State *co) {
  adapter_ops.resume_enter(co);
}

__attribute__((visibility("default"))) void prof_adapter_resume_leave(lua_State *co) {
  adapter_ops.resume_leave(co);
}

__attribute__((visibility("default"))) const char *prof_adapter_attach_live(int memory) {
  const char *missing = agent_missing();
  if (missing) return missing;
  if (!prof_guest_signal_context || !prof_guest_symbol_from_signal)
    return "the libprof agent cannot sample states it did not see made";
  if (!safe_read_available()) return "process_vm_readv is forbidden here";
  const char *why = NULL;
  lua_State *scratch = checked_scratch(&why);
  if (!scratch) return why;
  pin_module();
  adapter_ops.name_code(scratch);
  live_states_start(scratch, memory != 0);
  lua_close(scratch);
  return NULL;
}

__attribute__((visibility("default"))) void prof_adapter_detach_live(void) { live_states_stop(); }
