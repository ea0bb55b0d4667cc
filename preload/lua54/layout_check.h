/*
** layout_check.h: proves, on the interpreter the module is loaded into, that
** the mirrored layouts of lua54_layout.h are the VM's: it runs a small nest
** of Lua functions (plain calls, a tail call, a coroutine, a pcall) and
** compares, frame by frame, call_walk.c's frames (function, current line,
** tail flag, chunk name, first line) with lua_getstack/lua_getinfo; it checks
** the global state's allocator, object list and collector flag; and it learns
** the VM's own sizeof(Proto) from its allocator.
**
** Invariants callers rely on: normal context only; every read through a
** mirrored layout goes through safe_read() when the system allows it, so a
** foreign layout yields a mismatch, not a crash; the universe's allocator is
** restored before it returns.
*/
#ifndef PROF_LUA54_LAYOUT_CHECK_H
#define PROF_LUA54_LAYOUT_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <lua.h>

/* True if the layouts match; else a one-line reason is in why. */
bool layout_check(lua_State *L, size_t *proto_size, char *why, size_t why_len);

#endif /* PROF_LUA54_LAYOUT_CHECK_H */
