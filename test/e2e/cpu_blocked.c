/* A daemon's signal pattern: main blocks every signal before it starts its
   workers, which inherit the mask (`cpu_blocked SECONDS`); with "exec"
   first, it blocks every signal and execs itself, so that the mask comes
   inherited through exec (`cpu_blocked exec SECONDS`). Each of two workers
   spins SECONDS of its own CPU time. Prints "usr1 blocked" when a worker's
   mask still holds SIGUSR1 (the program's own blocking stands). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "thread_cpu.h"

static double seconds;
static volatile unsigned long sink;
static volatile int usr1_blocked = 1;

static void *worker(void *arg) {
  (void)arg;
  sigset_t now;
  pthread_sigmask(SIG_SETMASK, NULL, &now);
  if (sigismember(&now, SIGUSR1) != 1) usr1_blocked = 0;
  const double t0 = thread_cpu();
  while (thread_cpu() - t0 < seconds)
    for (int i = 0; i < 20000; i++) sink += (unsigned long)i * 7;
  return NULL;
}

int main(int argc, char **argv) {
  sigset_t all;
  sigfillset(&all);
  if (argc == 3 && strcmp(argv[1], "exec") == 0) {
    sigprocmask(SIG_BLOCK, &all, NULL);
    execl("/proc/self/exe", argv[0], argv[2], (char *)NULL);
    return 127;
  }
  seconds = atof(argv[1]);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  if (usr1_blocked) puts("usr1 blocked");
  return 0;
}
