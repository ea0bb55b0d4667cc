/*
** puc_backtracer.h: the prof_guest_backtracer for PUC Lua 5.1-5.3: the
** frames of the coroutine running on this OS thread, then those of each
** coroutine that resumed it, the universe's main thread last.
**
** Invariants callers rely on: async-signal-safe and lock-free (see
** puc_walk.h); returns 0 frames with *vmstate = -1 on a thread that runs no
** live universe. vmstate is LFUNC/CFUNC by the innermost frame, INTERP when
** no frame is active (these releases do not tell when their collector runs).
*/
#ifndef PROF_PUC_BACKTRACER_H
#define PROF_PUC_BACKTRACER_H

#include <stdint.h>

#include "libprof.h"

int puc_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate);

/* From now on, Lua frames that began a run of the interpreter below another
** Lua frame are followed by a C frame at pc (puc_walk.h). */
void puc_backtrace_set_reentry(uint64_t pc);

#endif /* PROF_PUC_BACKTRACER_H */
