/*
** puc_alloc.h: the allocator wrapper of a 5.1-5.4 universe. It publishes
** every Lua function prototype to the agent (prof_guest_symbol: address,
** chunk name, first line) before it can run, tells the agent each new
** block's object type, marks the thread's slot while the real allocator
** runs (no frame is half-written then) and makes its universe the one
** running on the calling thread.
**
** How a new prototype is seen: from 5.2 on, lua_Alloc's osize for a new
** block is its object's type (LUA_TPROTO for a Proto). Lua 5.1 passes 0:
** there a new block of sizeof(Proto) bytes is a candidate, and it is a
** prototype when, at the next allocator call, it heads the list of all
** objects with a prototype's tag (luaF_newproto links it right after
** allocating it, before any other allocation). A prototype is named once its
** code array exists, which the parser and the undumper always reach, and
** allocate after, before the chunk returns to its loader.
**
** Invariants callers rely on: publishing runs in normal context, never in a
** signal handler; a pending prototype freed before it was named is
** forgotten, and any free of a block of a prototype's size invalidates
** the cached lines (puc_walk.h). Lua 5.1's allocator is not told object
** types: none is set.
*/
#ifndef PROF_PUC_ALLOC_H
#define PROF_PUC_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#define PUC_PENDING_MAX 1024

struct PucAlloc {
  lua_Alloc orig;
  void *orig_ud;
  lua_State *main;
  const void *global;      /* the universe's global_State */
  int typing;              /* tell the agent each new block's object type */
  const void *candidate;   /* 5.1: a new block of a prototype's size */
  unsigned npending;
  const void *pending[PUC_PENDING_MAX];
  uint64_t dropped;        /* prototypes left unnamed: pending list full */
};

/* Puts pa between L's universe and its allocator, then names the
** prototypes that exist (after a full collection, so that none is dead). */
void puc_alloc_start(struct PucAlloc *pa, lua_State *L, lua_State *main, int typing);
/* Gives the universe its own allocator back; false if another wrapper now
** sits on top of pa, which must then stay allocated forever. */
int puc_alloc_stop(struct PucAlloc *pa, lua_State *L);

/* The PROF_OBJECT_* of a new block's osize (5.2 on), for the layout's tags. */
unsigned puc_object_type(const void *ptr, size_t osize);

#endif /* PROF_PUC_ALLOC_H */
