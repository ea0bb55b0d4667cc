/* Burns CPU in known functions: `cpu_burn SECONDS THREADS [fork]`. Each of
   THREADS threads (the main one included) spins until its own CPU clock has
   advanced SECONDS, in burn_main() or burn_thread(). With "fork", a child
   then spins SECONDS in burn_child(). Prints the CPU seconds each spinning
   thread used ("cpu <seconds>"), measured by the thread itself. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "thread_cpu.h"

static double seconds;
static volatile unsigned long sink;

/* Spins, returns the CPU seconds it took. */
static double spin(void) {
  const double t0 = thread_cpu();
  double t;
  do {
    for (int i = 0; i < 20000; i++) sink += (unsigned long)i * 7;
    t = thread_cpu();
  } while (t - t0 < seconds);
  return t - t0;
}

__attribute__((noinline)) double burn_main(void) { return spin(); }
__attribute__((noinline)) double burn_thread(void) { return spin(); }
__attribute__((noinline)) double burn_child(void) { return spin(); }

static void *thread_main(void *out) {
  *(double *)out = burn_thread();
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  seconds = atof(argv[1]);
  const int threads = atoi(argv[2]);
  pthread_t t[64];
  double used[64] = {0};
  for (int i = 1; i < threads && i < 64; i++) pthread_create(&t[i], NULL, thread_main, &used[i]);
  used[0] = burn_main();
  for (int i = 1; i < threads && i < 64; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < threads && i < 64; i++) printf("cpu %.6f\n", used[i]);
  fflush(stdout);
  if (argc > 3 && !strcmp(argv[3], "fork")) {
    const pid_t pid = fork();
    if (pid == 0) {
      printf("child cpu %.6f\n", burn_child());
      exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  }
  return 0;
}
