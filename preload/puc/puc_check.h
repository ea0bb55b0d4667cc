/*
** puc_check.h: proves, on the VM the adapter is loaded into, that the
** release's layout table (puc_layout.h) is the VM's. It runs a small nest
** of Lua functions (plain calls, a tail call, a coroutine, a pcall) and
** compares, frame by frame, puc_walk.c's frames (function, current line,
** tail flag, chunk name, first line) with lua_getstack/lua_getinfo; it
** checks the global state's allocator and object list, and that every
** prototype the nest's load made was seen as the allocator wrapper sees
** them, at the layout's sizeof(Proto).
**
** Invariants callers rely on: normal context only; every read through the
** table goes through safe_read() when the system allows it, so a foreign
** layout yields a mismatch, not a crash; the allocator is restored before
** it returns.
*/
#ifndef PROF_PUC_CHECK_H
#define PROF_PUC_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <lua.h>

/* True if the layout matches; else a one-line reason is in why. L needs
** the base and coroutine libraries. */
bool puc_check(lua_State *L, char *why, size_t why_len);

#endif /* PROF_PUC_CHECK_H */
