/*
** interpreter_probe.h: finds Lua 5.4's interpreter function (luaV_execute)
** in the running VM, whose symbol a stripped binary lacks, and tells the
** agent (prof_guest_vm_function), so that guest frames are merged into host
** stacks right above the host frame that runs them.
**
** How: one C function of the module records its callers twice, called from
** a Lua chunk (through the interpreter's call instruction) and called
** directly with lua_pcall. Compared innermost first, the two stacks share
** the frames of the call machinery (luaD_precall) and differ first at the
** frame that made the call: luaV_execute in the first, the C API's call
** path in the second.
**
** Invariants callers rely on: normal context only (glibc's backtrace());
** never raises a Lua error; leaves the Lua stack as it found it.
*/
#ifndef PROF_LUA54_INTERPRETER_PROBE_H
#define PROF_LUA54_INTERPRETER_PROBE_H

#include <stdint.h>

#include <lua.h>

/* A return address into luaV_execute, or 0 when the probe found none. */
uint64_t interpreter_probe(lua_State *L);

#endif /* PROF_LUA54_INTERPRETER_PROBE_H */
