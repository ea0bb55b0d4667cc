/* Sleeps briefly, over and over, between bursts of CPU: `cpu_sleepers
   CALLS BURN_US`. Makes CALLS calls each of poll() with no descriptor and a
   1 ms timeout and of nanosleep() for 100 us, each after spinning about
   BURN_US microseconds in user code (no system call), so that a CPU-time
   sampler's clock expires about as often as the interval allows, and the
   sleeps start right after a burst. Prints how many calls failed with EINTR
   ("poll_eintr N", "nanosleep_eintr N"), and the CPU seconds used ("cpu S");
   the program itself sends no signal. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "thread_cpu.h"

static volatile unsigned long sink;

static void spin(unsigned long iterations) {
  for (unsigned long i = 0; i < iterations; i++) sink += i * 7;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  const long calls = atol(argv[1]);
  const double burn_s = atof(argv[2]) / 1e6;
  /* Iterations per burst, measured once on this thread's CPU clock. */
  unsigned long per_burst = 1000000;
  const double t0 = thread_cpu();
  spin(per_burst);
  per_burst = (unsigned long)((double)per_burst * burn_s / (thread_cpu() - t0));

  long poll_eintr = 0, sleep_eintr = 0;
  const double start = thread_cpu();
  for (long i = 0; i < calls; i++) {
    spin(per_burst);
    if (poll(NULL, 0, 1) < 0 && errno == EINTR) poll_eintr++;
    spin(per_burst);
    const struct timespec nap = {0, 100000};
    if (nanosleep(&nap, NULL) < 0 && errno == EINTR) sleep_eintr++;
  }
  printf("poll_eintr %ld\nnanosleep_eintr %ld\ncpu %.6f\n", poll_eintr, sleep_eintr,
         thread_cpu() - start);
  return 0;
}
