/* A handler on a small alternate stack (SIGSTKSZ, 8 KiB, from malloc as
   programs make it): SIGUSR1, raised 3 times, runs there, makes and frees
   1000 blocks of 4444 B each time and burns 0.1 s of CPU (sampled while it
   runs, under PROF_CPU). Prints "handled 3". */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile int handled;

static double thread_cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void on_usr1(int sig) {
  (void)sig;
  const double t0 = thread_cpu();
  for (int i = 0; i < 1000; i++) {
    void *volatile p = malloc(4444);
    free(p);
  }
  volatile unsigned long sink = 0;
  while (thread_cpu() - t0 < 0.1)
    for (int i = 0; i < 10000; i++) sink += (unsigned long)i;
  handled++;
}

int main(void) {
  stack_t alternate = {.ss_sp = malloc(8192), .ss_size = 8192, .ss_flags = 0};
  if (!alternate.ss_sp || sigaltstack(&alternate, NULL) != 0) return 3;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGUSR1, &sa, NULL);
  for (int i = 0; i < 3; i++) raise(SIGUSR1);
  printf("handled %d\n", handled);
  return 0;
}
