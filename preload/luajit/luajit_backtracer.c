#define _GNU_SOURCE
#include "luajit_backtracer.h"

#include <ucontext.h>

#include "symbols.h"
#include "universe.h"
#include "vm_capture.h"

int luajit_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate) {
  (void)ctx;
  const struct Universe *u = lj_thread_universe;
  const char *g = u ? __atomic_load_n(&u->g, __ATOMIC_ACQUIRE) : NULL;
  if (!g) {
    *vmstate = -1;
    return 0;
  }
  struct VmCapture c;
  const int want = max < 1 ? 1 : max > VM_CAPTURE_MAX_FRAMES ? VM_CAPTURE_MAX_FRAMES : max;
  const ucontext_t *uc = prof_guest_signal_context ? prof_guest_signal_context() : NULL;
  struct VmRegs regs;
  if (uc) {
    const greg_t *r = uc->uc_mcontext.gregs;
    regs = (struct VmRegs){(uint64_t)r[REG_RIP], (uint64_t)r[LJ_REG_BASE], (uint64_t)r[LJ_REG_PC],
                           (uint64_t)r[LJ_REG_DISPATCH]};
  }
  vm_capture(g, u->main, true, want, &u->code, uc ? &regs : NULL, NULL, &c);
  *vmstate = vm_capture_prof_state(&c);
  if (max <= 0) return 0;
  symbols_note_frames(c.frames, c.kinds, c.n);
  int n = 0;
  if (uc && c.vmstate >= 0 && max >= 2)
    frames[n++] = (struct prof_guest_frame){PROF_FRAME_TRACE, (uint64_t)c.vmstate, 0};
  const int left_out = c.n - (max - n);
  for (int i = 0; i < c.n && n < max; i++) frames[n++] = c.frames[i];
  /* A stack deeper than the walk or the room: its outermost frame says so
  ** (libprof.h), and the analyzer lines the rest up from the inside; never
  ** in place of a trace's number or start. */
  const int named = uc && c.vmstate >= 0 ? 2 : 1;
  if ((c.cut || left_out > 0) && n > named)
    frames[n - 1] = (struct prof_guest_frame){PROF_FRAME_CFUNC, PROF_GUEST_CUT_ADDR, 0};
  return n;
}
