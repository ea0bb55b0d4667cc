/* A toy VM that embeds the agent's guest API: its interpreter keeps a call
   stack of (prototype, line) frames, its backtracer reports that stack and
   the VM state, and it publishes its prototypes' and C functions' symbols.
     main.toy (prototype 0x100, defined at line 1) calls, at line 3,
     work.toy (0x200, defined at line 10), which at line 12 spins for
     SECONDS of CPU time (LFUNC) and at line 14 calls the C function
     toy.alloc (0x300), which makes 1000 blocks of 777 bytes (CFUNC).
   Without the agent it runs the same and says "no agent". */
#define PROF_WEAK_API
#include "libprof.h"

#include <stdio.h>
#include <stdlib.h>

#include "thread_cpu.h"

struct toy_frame {
  int type;
  uint64_t addr, line;
};
static struct toy_frame stack[16];
static volatile int depth;
static volatile int state = PROF_VMST_INTERP;
static void *volatile sink;

/* Called in signal context: reads the toy's stack, nothing else. */
static int toy_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate) {
  (void)ctx;
  *vmstate = state;
  int n = 0;
  for (int i = depth - 1; i >= 0 && n < max; i--, n++) {
    frames[n].type = (uint8_t)stack[i].type;
    frames[n].addr = stack[i].addr;
    frames[n].line = stack[i].line;
  }
  return n;
}

static void push(int type, uint64_t addr, uint64_t line, int vmstate) {
  stack[depth] = (struct toy_frame){type, addr, line};
  depth = depth + 1;
  state = vmstate;
}
static void pop(int vmstate) {
  depth = depth - 1;
  state = vmstate;
}

int main(int argc, char **argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 0.5;
  if (prof_register_guest) {
    prof_guest_symbol(0x100, "@toy/main.toy", 1);
    prof_guest_symbol(0x200, "@toy/work.toy", 10);
    prof_guest_cfunc_symbol(0x300, "toy.alloc");
    prof_register_guest(toy_backtrace, NULL);
  } else {
    puts("no agent");
  }
  push(PROF_FRAME_LFUNC, 0x100, 3, PROF_VMST_LFUNC);
  push(PROF_FRAME_LFUNC, 0x200, 12, PROF_VMST_LFUNC);
  const double t0 = thread_cpu();
  volatile unsigned long spin = 0;
  while (thread_cpu() - t0 < seconds)
    for (int i = 0; i < 10000; i++) spin += (unsigned long)i;
  stack[depth - 1].line = 14;
  push(PROF_FRAME_CFUNC, 0x300, 0, PROF_VMST_CFUNC);
  for (int i = 0; i < 1000; i++) sink = malloc(777);
  pop(PROF_VMST_LFUNC);
  pop(PROF_VMST_LFUNC);
  pop(PROF_VMST_INTERP);
  return 0;
}
