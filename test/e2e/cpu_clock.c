/* Reads the monotonic clock in a loop (the kernel's vDSO code) until the
   thread's CPU clock has advanced SECONDS: `cpu_clock SECONDS`. */
#include <stdlib.h>
#include <time.h>

#include "thread_cpu.h"

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const double seconds = atof(argv[1]);
  const double t0 = thread_cpu();
  struct timespec now;
  while (thread_cpu() - t0 < seconds)
    for (int i = 0; i < 1000; i++) clock_gettime(CLOCK_MONOTONIC, &now);
  return 0;
}
