/*
** proto_publisher.h: publishes every Lua function prototype of a universe
** to the agent (prof_guest_symbol: address, chunk name, first line) before
** it can run, by standing between the universe and its allocator.
**
** Why the allocator: every Proto is allocated through lua_Alloc with the tag
** LUA_TPROTO, whether it comes from the parser or from a binary chunk, and
** whether the chunk is loaded from Lua (load, require) or from C
** (luaL_loadfile in lua.c). A prototype is complete enough to name once its
** code array exists (its source and first line are set before any code), and
** the parser or undumper always allocates again after that, so the next
** allocator call publishes it, before the chunk returns to its loader. The
** symbol thus reaches the agent before any event or sample that uses it.
**
** The same wrapper tells the agent each new block's object type
** (object_types.h) when asked: one call per allocation does both.
**
** Invariants callers rely on:
** - The allocator wrapper adds a counter, a few compares, the two object
**   type calls into the agent (no syscall) and an indirect call per
**   allocation; it marks the thread's slot (in_alloc) while the real
**   allocator runs, telling call_walk.c that no frame is half-written.
** - Publishing runs in normal context (inside the allocator, before the real
**   call), never in a signal handler.
** - A pending prototype that is freed before it was named is forgotten; any
**   free of a block of a prototype's size invalidates the cached lines.
*/
#ifndef PROF_LUA54_PROTO_PUBLISHER_H
#define PROF_LUA54_PROTO_PUBLISHER_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#define PROTO_PENDING_MAX 1024

struct ProtoPublisher {
  lua_Alloc orig;
  void *orig_ud;
  lua_State *main;                   /* the universe's main thread */
  size_t proto_size;                 /* the VM's sizeof(Proto) */
  int typing;                        /* tell the agent each new block's object type */
  unsigned npending;
  const void *pending[PROTO_PENDING_MAX];
  uint64_t dropped;                  /* prototypes left unnamed: pending list full */
};

/* Puts pp between L's universe (whose main thread is main) and its
** allocator, then names the prototypes that already exist (after a full
** collection, so that none of them is dead). typing: whether it also sets
** each new block's object type. Each call makes the universe the one
** running on the calling thread (running_state.h). */
void proto_publisher_start(struct ProtoPublisher *pp, lua_State *L, lua_State *main,
                           size_t proto_size, int typing);
/* Gives the universe its own allocator back; false if another wrapper now
** sits on top of pp, which must then stay allocated forever. */
int proto_publisher_stop(struct ProtoPublisher *pp, lua_State *L);

#endif /* PROF_LUA54_PROTO_PUBLISHER_H */
