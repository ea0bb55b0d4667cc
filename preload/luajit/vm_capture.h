/*
** vm_capture.h: where a LuaJIT VM is, from its global_State: the running
** thread's frames (then the main thread's, under a coroutine), the VM
** state, and the memprof site an allocation made there is charged to.
**
** The site follows LuaJIT's memprof: a JIT trace running charges its trace;
** the interpreter or a C function charges the innermost function, a
** built-in its calling Lua function (memprof charges fast functions to
** their caller); the collector, the trace compiler and the exit handler
** charge INTERNAL.
**
** Invariants callers rely on: the same as frame_walk.h (safe: every read
** checked; else the VM must be inside its allocator). Under a JIT trace the
** frames start at the trace's base (the VM's jit_base): the frames the trace
** inlined are not on the stack and do not appear. Coroutines: the running
** one, then the main thread; coroutines resumed in between are left out.
*/
#ifndef PROF_LUAJIT_VM_CAPTURE_H
#define PROF_LUAJIT_VM_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "frame_walk.h"
#include "agent_api.h"

#define VM_CAPTURE_MAX_FRAMES 128

struct VmCapture {
  int32_t vmstate;  /* as the VM stores it: ~LJ_STATE_* or a trace number */
  struct prof_guest_site site;
  int n;
  struct prof_guest_frame frames[VM_CAPTURE_MAX_FRAMES];
  uint8_t kinds[VM_CAPTURE_MAX_FRAMES];
  int fresh;  /* frames[0..fresh) were walked; the others came from the trail */
  bool cut;   /* the walk stopped at max frames, short of the stack's bottom */
};

/* Where the interpreter's own code lies, and its dispatch table: registers
** interrupted there hold its frame base and PC. reentry: the address that
** marks native code re-entering the VM in the frames (frame_walk.h), 0 while
** the agent does not know the VM's code as the guest's (libprof.h,
** prof_guest_vm_function). */
struct VmCode {
  uint64_t lo, hi;
  uint64_t dispatch;
  uint64_t reentry;
};

/* The interrupted registers of the VM's thread (from a signal's ucontext). */
struct VmRegs {
  uint64_t ip, base, pc, dispatch;
};

/* Reads the VM's code range from its dispatch table (normal context). */
void vm_code_find(const char *g, struct VmCode *code);

/* Fills c for the VM of global_State g (main: its main thread), at most
** max frames (max <= VM_CAPTURE_MAX_FRAMES). code, when not NULL, gives
** the re-entry mark; regs, when not NULL, are
** trusted for the frame base and PC only when they were interrupted in the
** interpreter's code with its dispatch register intact: L->base and the
** saved PC are synced only when the VM calls out to C. trail, when not
** NULL and reads are direct, is the last such capture's walk: its frames
** are taken where it still holds, and it becomes this one's
** (frame_trail.h). */
void vm_capture(const char *g, const LJState *main, bool safe, int max,
                const struct VmCode *code, const struct VmRegs *regs, struct FrameTrail *trail,
                struct VmCapture *c);

/* The sysprof VM state (PROF_VMST_*) of a capture. */
int vm_capture_prof_state(const struct VmCapture *c);

#endif /* PROF_LUAJIT_VM_CAPTURE_H */
