/*
** cfunc_names.h: names the C functions Lua code can call
** (prof_guest_cfunc_symbol: address -> "string.rep"), from the global table
** and package.loaded at load time, and from each module that `require`
** loads afterwards.
**
** Invariants callers rely on: runs only in normal context, through the Lua
** API; each function address is named once per universe, by the first name
** found in sorted order (globals first, then modules by name); errors while
** naming are swallowed, never raised into the program.
*/
#ifndef PROF_LUA54_CFUNC_NAMES_H
#define PROF_LUA54_CFUNC_NAMES_H

#include <lua.h>

/* Names what is loaded now and replaces the global `require` with one that
** names the modules it loads. */
void cfunc_names_start(lua_State *L);

#endif /* PROF_LUA54_CFUNC_NAMES_H */
