/* Threads that allocate while being sampled: `cpu_alloc SECONDS THREADS`.
   Each thread, until its CPU clock has advanced SECONDS, mallocs and frees
   blocks of 40 + thread bytes, then leaks 3 blocks of 5000 + thread bytes.
   Prints "allocs <thread> <n>": how many 40 + thread byte blocks it made. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "thread_cpu.h"

static double seconds;
static void *volatile sink;

struct job {
  int index;
  unsigned long allocs;
};

static void *churn(void *arg) {
  struct job *j = arg;
  const double t0 = thread_cpu();
  while (thread_cpu() - t0 < seconds)
    for (int i = 0; i < 1000; i++, j->allocs++) {
      void *p = malloc(40 + (size_t)j->index);
      sink = p;
      free(p);
    }
  for (int i = 0; i < 3; i++) sink = malloc(5000 + (size_t)j->index);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  seconds = atof(argv[1]);
  const int threads = atoi(argv[2]);
  pthread_t t[64];
  struct job jobs[64];
  for (int i = 0; i < threads && i < 64; i++) {
    jobs[i].index = i;
    jobs[i].allocs = 0;
    pthread_create(&t[i], NULL, churn, &jobs[i]);
  }
  for (int i = 0; i < threads && i < 64; i++) {
    pthread_join(t[i], NULL);
    printf("allocs %d %lu\n", i, jobs[i].allocs);
  }
  return 0;
}
