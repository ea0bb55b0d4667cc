/* Allocates one 16 B block (so that it has a memory stream: the agent
   writes none for a process that records nothing), burns 0.5 s of its CPU
   time in burn(), then kills itself with SIGKILL: nothing of the agent runs
   at the end. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "thread_cpu.h"

static volatile unsigned long sink;
static void *volatile block;

__attribute__((noinline)) static void burn(double seconds) {
  const double t0 = thread_cpu();
  while (thread_cpu() - t0 < seconds)
    for (int i = 0; i < 20000; i++) sink += (unsigned long)i * 7;
}

int main(void) {
  block = malloc(16);
  burn(0.5);
  kill(getpid(), SIGKILL);
  return 1;
}
