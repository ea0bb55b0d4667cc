/*
** trace_step.h: the host unwinder's step through a JIT trace's machine code
** and through the VM code that lowers the interpreter's stack pointer
** (prof_guest_jit_step, libprof.h).
**
** A trace is entered from the interpreter by a jump, not a call, and runs
** in the interpreter's own C frame, that frame's stack pointer lowered by
** the registers the interpreter saves before the jump and by the trace's
** spill slots (and, in an exit stub, by what it pushes). The interpreter's
** table says its frame's stack pointer is its cframe, the C frame the VM
** keeps in lua_State.cframe, chained to the one it was entered from. The
** trace exit handler, which is VM code, saves every register below it
** before it calls into C (lj_trace_exit), as the FFI's call helper saves
** the callee's arguments. So from an instruction of a trace or of such VM
** code (or a return address into one, once its callee's frame is unwound),
** the frame is the running state's innermost cframe above sp, and the walk
** goes on from there with the interpreter's unwind rule.
**
** Invariants callers rely on: async-signal-safe and lock-free, every read
** checked (safe_read.h); the trace is looked for in the VM of the thread's
** universe: the one running (vmstate) first, then every trace. Frames at
** a cframe, and frames outside the VM's code, are left to their table.
** XXX: a sample in the first instructions of a VM entry (lua_pcall's
** lj_vm_pcall before it stores its cframe) is stepped to the cframe it
** was entered from, past the C frames between the two.
*/
#ifndef PROF_LUAJIT_TRACE_STEP_H
#define PROF_LUAJIT_TRACE_STEP_H

#include <stdint.h>

int trace_step(uint64_t pc, uint64_t sp, int covered, uint64_t *vm_pc, uint64_t *vm_sp);

#endif /* PROF_LUAJIT_TRACE_STEP_H */
