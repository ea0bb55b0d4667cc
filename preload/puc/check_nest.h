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

#include "agent_api.h"

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

/* What a walk of the probing state found, innermost first: each frame,
** its closure and its tail flag. */
struct NestWalk {
  const struct prof_guest_frame *frames;
  const void *const *closures;
  const bool *tails;
  int n;
};

/* Compares w with lua_getstack/lua_getinfo on L, level by level: C
** functions, and Lua frames' closure, current line, tail flag and (through
** proto_matches, with ctx) prototype. 5.1's lost tail calls, levels of
** their own there, are the tail flag of the frame that replaced them. True
** if they agree (*tails: the tail-called frames seen); else false, with
** the mismatch in why, naming release. */
bool check_nest_compare(lua_State *L, const struct NestWalk *w,
                        bool (*proto_matches)(const void *ctx, const void *proto,
                                              const lua_Debug *ar),
                        const void *ctx, const char *release, int *tails, char *why,
                        size_t why_len);

#endif /* PROF_PUC_CHECK_NEST_H */
