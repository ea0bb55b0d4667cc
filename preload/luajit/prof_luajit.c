/*
** prof_luajit.c: the LuaJIT 2.1 module `prof_luajit` (`luajit -l
** prof_luajit script.lua`, or require): checks the VM's layouts, then wraps
** its allocator (every allocation, reallocation and free becomes a memory
** event charged as memprof charges it), names built-in and C functions, and
** registers the guest backtracer with the libprof agent. Without the agent
** (or on a layout mismatch, reported in one line on stderr) it does
** nothing; the program runs unchanged.
**
** The module returns a table: enabled (boolean); when enabled, bytes_before
** (what the VM held before its allocator was wrapped: the memory stream
** saw none of it allocated), else reason (string).
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>
#include <lualib.h>

#include "layout_check.h"
#include "live_states.h"
#include "safe_read.h"
#include "agent_api.h"
#include "lj_build.h"
#include "luajit_backtracer.h"
#include "proto_events.h"
#include "symbols.h"
#include "trace_step.h"
#include "universe.h"
#include "walk_check.h"

int luaopen_prof_luajit(lua_State *L);

/* XXX: the allocator wrapper serves the state's last frees inside
** lua_close, after the package library unloaded its C modules, and the
** backtracer stays registered: keep this module mapped for good. */
static void pin_module(void) {
  Dl_info info;
  if (dladdr((void *)pin_module, &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static int result(lua_State *L, const struct Universe *u, const char *reason) {
  lua_newtable(L);
  lua_pushboolean(L, reason == NULL);
  lua_setfield(L, -2, "enabled");
  if (reason) {
    lua_pushstring(L, reason);
    lua_setfield(L, -2, "reason");
  } else {
    lua_pushnumber(L, (lua_Number)u->bytes_before);
    lua_setfield(L, -2, "bytes_before");
  }
  return 1;
}

/* The VM's code, which every state of the build shares: the agent learns
** that it runs Lua (one unwind entry covers all of it), so that guest frames
** are merged right above its host frames, and native code re-entering it is
** marked there (frame_walk.h). Its address, or 0 if the agent does not take it. */
static uint64_t publish_vm_code(uint64_t vm) {
  if (!prof_guest_vm_function || !prof_guest_vm_function(vm, "lj_vm")) return 0;
  symbols_name_cfunc(vm, "lj_vm");
  return vm;
}

/* Publishes the protos signal handlers saw, while the states still live. */
static void drain_at_exit(void) { symbols_drain_pending(); }

/* What the process needs once, after the first layout check passed on L's
** VM (L has its libraries open). */
static uint64_t g_reentry;
static struct VmCode g_vm_code;
/* Started for an agent attached to the process (prof_adapter_attach_live):
** its environment is not read, and nothing is left to run at its exit. */
static bool g_live;
static bool start_process(lua_State *L, const char **why) {
  if (!symbols_init()) {
    *why = "no memory for the symbol tables";
    return false;
  }
  pin_module();
  symbols_name_cfunc(PROF_GUEST_CUT_ADDR, "[… more frames]"); /* a cut stack's end (libprof.h) */
  symbols_publish_libraries(L);
  prof_guest_cfunc_symbol((uint64_t)(uintptr_t)luaopen_prof_luajit, "luaopen_prof_luajit");
  if (!g_live) walk_check_start();
  vm_code_find(lj_state_g(L), &g_vm_code);
  g_reentry = publish_vm_code(g_vm_code.lo);
  g_vm_code.reentry = g_reentry;
  if (!g_live) atexit(drain_at_exit);
  prof_register_guest(luajit_backtrace, NULL);
  if (prof_register_guest_jit_step) prof_register_guest_jit_step(trace_step);
  return true;
}

/* Profiles L's VM once its build is verified: a universe of its own. */
static const char *start_universe(lua_State *L, struct Universe **out, char *why, size_t size) {
  const char *g = lj_state_g(L);
  if ((*out = universe_of(g))) return NULL;
  if (!layout_check_state(L, why, size)) return why;
  if (!(*out = universe_start(L, g_reentry)))
    return "every slot for a LuaJIT state is taken";
  return NULL;
}

static void say_refused(const char *why) {
  fprintf(stderr, "prof_luajit: nothing will be recorded: %s\n", why);
}

/* XXX: states of several threads may load it at once (one per worker);
** the layout check, the symbol tables and the universes are the
** process's, one at a time. */
static pthread_mutex_t starting = PTHREAD_MUTEX_INITIALIZER;

/* require's path: L runs luaopen with its libraries open. */
static const char *start_profiling(lua_State *L, struct Universe **u, char *why, size_t size) {
  if (!lj_build && !layout_check(L, luaopen_prof_luajit, why, size)) return why;
  const char *reason = NULL;
  if (!symbols_ready() && !start_process(L, &reason)) return reason;
  if ((reason = start_universe(L, u, why, size))) return reason;
  /* New prototypes named as they come (a state attached at its making had
  ** no jit library to ask then). */
  if (!(*u)->proto_events) (*u)->proto_events = proto_events_attach(L);
  universe_name_stack(*u);
  return NULL;
}

static bool agent_loaded(void) {
  return prof_register_guest && prof_guest_symbol && prof_guest_cfunc_symbol &&
         prof_guest_alloc_walked && prof_guest_trace_symbol && prof_guest_sample;
}

__attribute__((visibility("default"))) int luaopen_prof_luajit(lua_State *L) {
  if (!agent_loaded()) return result(L, NULL, "the libprof agent is not loaded");
  char why[160];
  struct Universe *u = NULL;
  pthread_mutex_lock(&starting);
  const char *reason = start_profiling(L, &u, why, sizeof why);
  pthread_mutex_unlock(&starting);
  if (reason) say_refused(reason);
  return result(L, u, reason);
}

/* The layout check and the process's start, inside a call on a scratch
** state with its libraries open (prof_adapter_attach). */
static const char *g_scratch_reason;
static char g_scratch_why[160];
static int check_in_scratch(lua_State *S) {
  g_scratch_reason = NULL;
  if (!layout_check(S, check_in_scratch, g_scratch_why, sizeof g_scratch_why))
    g_scratch_reason = g_scratch_why;
  else if (!symbols_ready())
    start_process(S, &g_scratch_reason);
  return 0;
}

/* The layout check and the process's start on a scratch state (once);
** the starting mutex held. */
static const char *check_on_scratch(void) {
  if (lj_build && symbols_ready()) return NULL;
  lua_State *S = luaL_newstate();
  if (!S) return "no memory for a scratch state";
  luaL_openlibs(S);
  lua_pushcfunction(S, check_in_scratch);
  g_scratch_reason = "the check did not run";
  if (lua_pcall(S, 0, 0, 0) != 0) g_scratch_reason = "the check raised an error";
  lua_close(S);
  return g_scratch_reason;
}

__attribute__((visibility("default"))) const char *prof_adapter_attach(lua_State *L) {
  if (!agent_loaded()) return "the libprof agent is not loaded";
  static char why[160];
  struct Universe *u = NULL;
  pthread_mutex_lock(&starting);
  /* XXX: L has no library open and runs nothing: the check runs on a
  ** state of the same VM made for it, and closed again. */
  const char *reason = check_on_scratch();
  if (!reason) reason = start_universe(L, &u, why, sizeof why);
  pthread_mutex_unlock(&starting);
  return reason;
}

/* The states the process made before the agent was attached to it: found
** by CPU samples (live_states.h), after the check on a scratch state. */
__attribute__((visibility("default"))) const char *prof_adapter_attach_live(int memory) {
  if (!agent_loaded()) return "the libprof agent is not loaded";
  if (!prof_guest_signal_context || !prof_guest_symbol_from_signal)
    return "the libprof agent cannot sample states it did not see made";
  if (!lj_safe_read_available()) return "process_vm_readv is forbidden here";
  pthread_mutex_lock(&starting);
  if (!symbols_ready()) g_live = true;
  const char *reason = check_on_scratch();
  if (!reason) live_states_start(&g_vm_code, memory != 0);
  pthread_mutex_unlock(&starting);
  return reason;
}

__attribute__((visibility("default"))) void prof_adapter_detach_live(void) { live_states_stop(); }
