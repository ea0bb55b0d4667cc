/*
** object_types.h: tells the agent what kind of object each allocation of a
** universe is for, by standing between the universe and its allocator.
**
** Why the allocator: lua_Alloc's contract gives a new block's object type
** in osize (ptr NULL): the variant tag of a string, table, Lua or C
** closure, userdata, thread, upvalue or prototype, and 0 for memory that is
** no object header (table parts, stacks, prototype arrays, buffers). Only
** such memory is ever resized, so a reallocation is "other" too. The
** wrapper sets the thread's hint (prof_guest_object_type) around the real
** call, whose malloc or realloc the agent's hooks record with the type.
**
** Invariants callers rely on: two calls into the agent (no syscall) and an
** indirect call per allocation; frees are passed through untouched.
*/
#ifndef PROF_LUA54_OBJECT_TYPES_H
#define PROF_LUA54_OBJECT_TYPES_H

#include <lua.h>

struct ObjectTyper {
  lua_Alloc orig;
  void *orig_ud;
};

/* Puts ot between L's universe and its current allocator. */
void object_typer_start(struct ObjectTyper *ot, lua_State *L);
/* Gives the universe the allocator ot wrapped back; false if another
** wrapper now sits on top of ot, which must then stay allocated forever. */
int object_typer_stop(struct ObjectTyper *ot, lua_State *L);

#endif /* PROF_LUA54_OBJECT_TYPES_H */
