/*
** trace_step.h: the host unwinder's step through a JIT trace's machine code
** (prof_guest_jit_step, libprof.h). A trace is entered from the interpreter
** by a jump, not a call, and runs in the interpreter's own C frame, that
** frame's stack pointer lowered by the registers the interpreter saves
** before the jump (LJ_TRACE_ENTRY_SAVE) and by the trace's spadjust: so from
** any instruction of a trace (or a return address into one, once its
** callee's frame is unwound) the interpreter's frame is at sp + spadjust +
** LJ_TRACE_ENTRY_SAVE, and the walk goes on from there with the
** interpreter's unwind rule.
**
** Invariants callers rely on: async-signal-safe and lock-free, every read
** checked (safe_read.h); the trace is looked for in the VM of the thread's
** universe: the one running (vmstate) first, then every trace.
*/
#ifndef PROF_LUAJIT_TRACE_STEP_H
#define PROF_LUAJIT_TRACE_STEP_H

#include <stdint.h>

int trace_step(uint64_t pc, uint64_t sp, uint64_t *vm_pc, uint64_t *vm_sp);

#endif /* PROF_LUAJIT_TRACE_STEP_H */
