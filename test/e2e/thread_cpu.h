/* The calling thread's CPU time in seconds, for the CPU sampler's test
   programs, which spin for a known amount of it. */
#ifndef THREAD_CPU_H
#define THREAD_CPU_H

#include <time.h>

static inline double thread_cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#endif
