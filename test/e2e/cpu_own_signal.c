/* A program with a CPU profiler of its own: after 0.2 s of CPU under the
   agent's sampler it installs its SIGPROF handler and ITIMER_PROF, spins
   0.3 CPU-seconds more and prints how many of its own signals it got. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

static volatile int hits;
static volatile unsigned long sink;

static void on_prof(int sig) {
  (void)sig;
  hits++;
}

static void spin(double seconds) {
  struct timespec a, b;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  do {
    for (int i = 0; i < 10000; i++) sink += (unsigned long)i;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  } while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

int main(void) {
  spin(0.2);
  signal(SIGPROF, on_prof);
  struct itimerval v = {{0, 10000}, {0, 10000}};
  setitimer(ITIMER_PROF, &v, NULL);
  spin(0.3);
  printf("hits %d\n", hits);
  return 0;
}
