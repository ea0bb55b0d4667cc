/*
** layout_check.h: verifies lj_layout.h, and each build's row of lj_build.h
** in turn, against the running LuaJIT before the adapter trusts it: the first
** row that agrees becomes lj_build. Each mirrored field is compared with what the Lua
** API says (the allocator, the stack, the memory count), and the frame walk
** with lua_getstack/lua_getinfo on functions nested at known lines (a plain
** call, a pcall, a coroutine) and, with the JIT on, a trace found by its
** start. Reads go through lj_safe_read: a wrong layout gives a reason,
** never a fault.
*/
#ifndef PROF_LUAJIT_LAYOUT_CHECK_H
#define PROF_LUAJIT_LAYOUT_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <lua.h>

/* Runs in a C function called from Lua (luaopen) with the base, coroutine
** and jit libraries open: self is that function. False with a one-line
** reason in why on a mismatch, naming the build L's VM looks like. */
bool layout_check(lua_State *L, lua_CFunction self, char *why, size_t why_len);

/* After layout_check passed on a state of the same VM: L's own fields (its
** allocator, main thread, collector total), for a state with no library
** open or no Lua function running. */
bool layout_check_state(lua_State *L, char *why, size_t why_len);

#endif /* PROF_LUAJIT_LAYOUT_CHECK_H */
