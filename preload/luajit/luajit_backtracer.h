/*
** luajit_backtracer.h: the prof_guest_backtracer for LuaJIT 2.1: the
** frames of the thread's universe (universe.h: the VM that last ran there):
** its running thread, then its main thread, and its
** VM state as sysprof names it (LFUNC, FFUNC or CFUNC by the innermost
** frame while the VM runs functions, TRACE under JIT code, GC, EXIT,
** RECORD, OPT, ASM).
**
** Invariants callers rely on: async-signal-safe and lock-free, every read
** of the VM checked (frame_walk.h); 0 frames and *vmstate = -1 on a thread
** that runs no universe. Under JIT code the innermost frame is the
** trace's start function at the trace's start line, after the trace's
** number (PROF_FRAME_TRACE) in a CPU sample.
*/
#ifndef PROF_LUAJIT_BACKTRACER_H
#define PROF_LUAJIT_BACKTRACER_H

#include "agent_api.h"

int luajit_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate);

#endif /* PROF_LUAJIT_BACKTRACER_H */
