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

#include "layout_check.h"
#include "libprof.h"
#include "luajit_backtracer.h"
#include "proto_events.h"
#include "symbols.h"
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

static int result(lua_State *L, const char *reason) {
  lua_newtable(L);
  lua_pushboolean(L, reason == NULL);
  lua_setfield(L, -2, "enabled");
  if (reason) {
    lua_pushstring(L, reason);
    lua_setfield(L, -2, "reason");
  } else {
    lua_pushnumber(L, (lua_Number)lj_universe.bytes_before);
    lua_setfield(L, -2, "bytes_before");
  }
  return 1;
}

/* Tells the agent the VM's code (one unwind entry covers all of it) runs
** Lua, so that guest frames are merged right above its host frames, and
** marks native code re-entering it there (frame_walk.h). */
static void publish_vm_code(void) {
  const uint64_t vm = lj_universe.code.lo;
  if (!prof_guest_vm_function || !prof_guest_vm_function(vm, "lj_vm")) return;
  symbols_name_cfunc(vm, "lj_vm");
  lj_universe.code.reentry = vm;
  frame_trail_forget(&lj_universe.trail); /* its frames have no marks */
}

/* Publishes the protos signal handlers saw, while the state still lives. */
static void drain_at_exit(void) { symbols_drain_pending(); }

/* The first state to load the module is the one profiled; the rest of
** luaopen's answer depends on which that is. */
static const char *start_profiling(lua_State *L, char *why, size_t size) {
  if (lj_universe.g) {
    if ((const char *)(uintptr_t)((const LJState *)L)->glref == lj_universe.g) return NULL;
    return "only the first LuaJIT state of a process is profiled";
  }
  if (!layout_check(L, luaopen_prof_luajit, why, size)) {
    fprintf(stderr, "prof_luajit: nothing will be recorded: %s\n", why);
    return why;
  }
  if (!symbols_init()) {
    fprintf(stderr, "prof_luajit: nothing will be recorded: no memory for the symbol tables\n");
    return "no memory for the symbol tables";
  }
  pin_module();
  symbols_name_cfunc(PROF_GUEST_CUT_ADDR, "[… more frames]"); /* a cut stack's end (libprof.h) */
  symbols_publish_libraries(L);
  prof_guest_cfunc_symbol((uint64_t)(uintptr_t)luaopen_prof_luajit, "luaopen_prof_luajit");
  walk_check_start();
  universe_start(L);
  publish_vm_code();
  proto_events_attach(L);
  atexit(drain_at_exit);
  prof_register_guest(luajit_backtrace, NULL);
  return NULL;
}

__attribute__((visibility("default"))) int luaopen_prof_luajit(lua_State *L) {
  if (!prof_register_guest || !prof_guest_symbol || !prof_guest_cfunc_symbol ||
      !prof_guest_alloc_walked || !prof_guest_trace_symbol || !prof_guest_sample)
    return result(L, "the libprof agent is not loaded");
  /* XXX: states of several threads may load it at once (one per worker);
  ** the layout check and the universe are the process's, one at a time. */
  static pthread_mutex_t starting = PTHREAD_MUTEX_INITIALIZER;
  char why[160];
  pthread_mutex_lock(&starting);
  const char *reason = start_profiling(L, why, sizeof why);
  pthread_mutex_unlock(&starting);
  return result(L, reason);
}
