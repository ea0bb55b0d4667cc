/* A fake guest VM: registers a backtracer that reports a Lua frame
   (prototype 0x1000 at line 7) called from a C function (0x2000), publishes
   both symbols, makes 4 blocks of 4321 B, then forks; the child makes 6
   more. Everything is leaked. */
#define PROF_WEAK_API
#include "libprof.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;

static int fake_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate) {
  (void)ctx;
  *vmstate = PROF_VMST_LFUNC;
  if (max < 2) return 0;
  frames[0].type = PROF_FRAME_LFUNC, frames[0].addr = 0x1000, frames[0].line = 7;
  frames[1].type = PROF_FRAME_CFUNC, frames[1].addr = 0x2000, frames[1].line = 0;
  return 2;
}

static void leak(int n) {
  for (int i = 0; i < n; i++) sink = malloc(4321);
}

int main(void) {
  if (!prof_register_guest) return 3;  /* the agent is not loaded */
  prof_register_guest(fake_backtrace, NULL);
  prof_guest_symbol(0x1000, "@fake.lua", 5);
  prof_guest_cfunc_symbol(0x2000, "fake_cfunc");
  leak(4);
  const pid_t pid = fork();
  if (pid == 0) {
    leak(6);
    exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
