/*
** proto_events.h: names each prototype as the parser makes it (LuaJIT's
** "bc" VM event, through jit.attach), as sysprof does, so that its symbol
** precedes the samples that show it: samples alone would name it only at
** the VM's next allocator call, after the analyzer met it unnamed.
**
** Invariants callers rely on: normal context (module load); leaves the Lua
** stack as it found it; without jit.attach (a VM built without VM events)
** nothing changes but the timing of names.
*/
#ifndef PROF_LUAJIT_PROTO_EVENTS_H
#define PROF_LUAJIT_PROTO_EVENTS_H

#include <stdbool.h>

#include <lua.h>

/* Attaches the handler; false when the VM has no jit.attach. */
bool proto_events_attach(lua_State *L);

#endif /* PROF_LUAJIT_PROTO_EVENTS_H */
