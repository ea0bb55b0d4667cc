/*
** object_types.h: what kind of object each allocation of a universe is
** for, as the agent records it (prof_guest_object_type).
**
** Why the allocator: lua_Alloc's contract gives a new block's object type
** in osize (ptr NULL): the variant tag of a string, table, Lua or C
** closure, userdata, thread, upvalue or prototype, and 0 for memory that is
** no object header (table parts, stacks, prototype arrays, buffers). Only
** such memory is ever resized, so a reallocation is "other" too. The
** adapter's allocator wrapper (proto_publisher.h) sets the thread's hint
** around the real call, whose malloc or realloc the agent's hooks record
** with the type; frees are passed through untouched.
*/
#ifndef PROF_LUA54_OBJECT_TYPES_H
#define PROF_LUA54_OBJECT_TYPES_H

#include <stddef.h>

/* The PROF_OBJECT_* of an allocator call that allocates (nsize > 0): ptr
** and osize as lua_Alloc gets them. */
unsigned object_type_of(const void *ptr, size_t osize);

#endif /* PROF_LUA54_OBJECT_TYPES_H */
