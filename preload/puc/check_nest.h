/*
** check_nest.h: the nest of Lua functions the PUC Lua adapters' layout
** checks run (5.1 to 5.4): plain calls, a tail call (so that `tail`
** vanishes and `leaf` is marked), calls under a coroutine and under pcall.
** A C probe, given as a closure over the check's state, is called from
** `leaf` CHECK_NEST_PROBES times: there each check compares its walk with
** lua_getstack.
**
** Invariants callers rely on: normal context; each function leaves the
** stack as it found it but for what it says it leaves; a reason is written
** to why only when why is still empty (the first reason is kept).
*/
#ifndef PROF_PUC_CHECK_NEST_H
#define PROF_PUC_CHECK_NEST_H

#include <stdbool.h>
#include <stddef.h>

#include <lua.h>

/* The probe's calls, and the prototypes loading the nest makes (its chunk,
** leaf, tail, mid and the coroutine's function). */
#define CHECK_NEST_PROBES 3
#define CHECK_NEST_PROTOS 5

/* Loads the nest (the chunk "=prof_lua layout check") and leaves it on
** the stack; false (why set) if it cannot. */
bool check_nest_load(lua_State *L, char *why, size_t why_len);
/* Calls the loaded nest with the probe, a C closure over ud; *result is
** its result (false: its coroutine or pcall failed). False (why set) if it
** could not run or raised. Leaves one value on the stack. */
bool check_nest_call(lua_State *L, lua_CFunction probe, void *ud, bool *result, char *why,
                     size_t why_len);

#endif /* PROF_PUC_CHECK_NEST_H */
