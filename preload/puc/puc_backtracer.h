/*
** puc_backtracer.h: the prof_guest_backtracer for PUC Lua 5.1-5.4: the
** frames of the coroutine running on this OS thread, then those of each
** coroutine that resumed it, the universe's main thread last.
**
** Invariants callers rely on: async-signal-safe and lock-free (see
** puc_walk.h); returns 0 frames with *vmstate = -1 on a thread that runs no
** live universe. vmstate is PROF_VMST_GC while a collector step runs (5.4;
** the older releases do not tell), else LFUNC/CFUNC by the innermost frame,
** INTERP when no frame is active.
*/
#ifndef PROF_PUC_BACKTRACER_H
#define PROF_PUC_BACKTRACER_H

#include <stdbool.h>
#include <stdint.h>

#include "agent_api.h"

int puc_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate);

/* The prof_guest_stack_recaller (libprof.h), where the release can remember
** walks (puc_walk_can_remember): in an allocation call, a walk that reads
** only the frames pushed or changed since this thread's previous one and
** keeps the rest (puc_walk_remembered), whose frames it returns where they
** lie; *unchanged counts the outer frames shared with the previous result. */
const struct prof_guest_frame *puc_recall(void *ctx, struct prof_guest_frame *room, int max,
                                          int *n, int *vmstate, int *unchanged);

/* From now on, Lua frames that began a run of the interpreter below another
** Lua frame are followed by a C frame at pc (puc_walk.h). */
void puc_backtrace_set_reentry(uint64_t pc);

/* From now on (yes) every read of a walk goes through safe_read but in an
** allocation call (the slot's in_alloc: the universe lives while its
** allocator runs): the universes walked were found in a running process
** (live_states.h), whose close the adapter sees late or not at all. */
void puc_backtrace_read_safely(bool yes);

#endif /* PROF_PUC_BACKTRACER_H */
