/*
** symbols.h: names what the guest stacks and sites refer to, once each:
** prototypes (chunk name, first line), JIT traces (start prototype and
** line), built-in and C functions (by the library tables that hold them).
**
** Invariants callers rely on:
** - Publishing reads the VM directly: it runs in normal context, inside the
**   VM's allocator or at load (never in a signal handler).
** - symbols_note_frames is async-signal-safe and lock-free: a prototype or
**   C function a signal handler saw unnamed waits in a fixed pending list,
**   published by the next allocator call (before any free, so before a
**   prototype can die).
** - A prototype's free forgets it, so a new prototype at its address is
**   named again.
*/
#ifndef PROF_LUAJIT_SYMBOLS_H
#define PROF_LUAJIT_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "agent_api.h"
#include "lj_layout.h"

/* Maps the tables (false: no memory; nothing is then named). */
bool symbols_init(void);
/* Whether symbols_init succeeded. */
bool symbols_ready(void);
/* Names prototype pt, unless it was already. */
void symbols_name_proto(const LJProto *pt);
/* Names the prototypes nested in pt (its functions' and theirs, depth
** levels down), as symbols_name_proto does: normal context, direct reads. */
void symbols_name_nested(const LJProto *pt, int depth);
/* Names the C frames at addr name (frames never name them otherwise). */
void symbols_name_cfunc(uint64_t addr, const char *name);
/* Names the prototypes and C functions of frames not named yet (kinds:
** frame_walk.h); a C function no library table holds by its exported
** symbol there, else as object+offset. */
void symbols_publish_frames(const struct prof_guest_frame *frames, const uint8_t *kinds, int n);
/* Names trace traceno of the VM of global_State g, unless it was already. */
void symbols_publish_trace(const char *g, uint32_t traceno);
/* Signal context: remembers the unnamed prototypes and C functions among
** frames; or, once symbols_name_from_signals(true) (a process with no
** allocator call of the VM's to drain them: live_states.h), names the
** prototypes at once (prof_guest_symbol_from_signal, every read checked).
** XXX: a prototype freed and another made at its address keeps the old
** name there, as no free is seen. */
void symbols_note_frames(const struct prof_guest_frame *frames, const uint8_t *kinds, int n);
void symbols_name_from_signals(bool yes);
/* Names the prototypes and C functions signal handlers saw since the last
** call. */
void symbols_drain_pending(void);
/* The VM is about to free block p of size bytes: forgets it if it is a
** prototype, and says whether it is. */
bool symbols_block_freed(const void *p, size_t size);
/* Names the functions in the tables of package.loaded (lib.name): C
** functions by address, built-ins by id (ffid: never a code address). */
void symbols_publish_libraries(lua_State *L);

#endif /* PROF_LUAJIT_SYMBOLS_H */
