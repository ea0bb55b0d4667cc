#include "luajit_backtracer.h"

#include "symbols.h"
#include "universe.h"
#include "vm_capture.h"

int luajit_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate) {
  (void)ctx;
  if (!lj_thread_bound || !lj_universe.g) {
    *vmstate = -1;
    return 0;
  }
  struct VmCapture c;
  const int want = max < 1 ? 1 : max > VM_CAPTURE_MAX_FRAMES ? VM_CAPTURE_MAX_FRAMES : max;
  vm_capture(lj_universe.g, lj_universe.main, true, want, &c);
  *vmstate = vm_capture_prof_state(&c);
  if (max <= 0) return 0;
  symbols_note_frames(c.frames, c.kinds, c.n);
  for (int i = 0; i < c.n; i++) frames[i] = c.frames[i];
  return c.n;
}
