/* Stops the agent's writer (SIGSTOP, as a pidof-driven stop or a debugger
   would) while it waits for work, then allocates past the ring's size and
   exits: the program must not wait for the stopped writer beyond the
   agent's bound. A helper child, made before the stop, measures from the
   stop to the program's end (the pipe's EOF), prints the milliseconds and
   continues the writer (SIGCONT). Counts by construction: 1000 blocks of
   7007 bytes (400 freed), 300,000 malloc/free pairs of 48 bytes, 1000
   blocks of 8008 bytes. Exits 3 if it finds no writer. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "find_writer.h"

/* The system call task pid is stopped in (/proc/PID/syscall's first
   field), or -1. */
static long stopped_in(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  long nr = -1;
  if (!fgets(line, sizeof line, f) || sscanf(line, "%ld", &nr) != 1) nr = -1;
  fclose(f);
  return nr;
}

static long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000L + t.tv_nsec / 1000000;
}

static void nap_ms(long ms) {
  const struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* The helper: from the parent's "stopped" byte to its end, then SIGCONT;
   "hung" after 20 s (the writer is then continued, and the program ends). */
static void measure(int from_parent, pid_t writer) {
  char b;
  if (read(from_parent, &b, 1) != 1) _exit(1);
  const long stopped = now_ms();
  struct pollfd p = {from_parent, POLLIN, 0};
  while (poll(&p, 1, 20000) == 1 && read(from_parent, &b, 1) > 0) {
  }
  char line[32];
  const long took = now_ms() - stopped;
  const int n = took >= 20000 ? snprintf(line, sizeof line, "hung\n")
                              : snprintf(line, sizeof line, "%ld\n", took);
  (void)!write(1, line, (size_t)n);
  kill(writer, SIGCONT);
  _exit(0);
}

int main(void) {
  static void *blocks[1000];
  for (int i = 0; i < 1000; i++) blocks[i] = malloc(7007);
  for (int i = 0; i < 400; i++) free(blocks[i]);
  nap_ms(300);
  const pid_t writer = find_writer();
  if (!writer) return 3;
  int fds[2];
  if (pipe(fds) != 0) return 1;
  if (fork() == 0) {
    close(fds[1]);
    measure(fds[0], writer);
  }
  close(fds[0]);
  /* Stopped while it waits for work (futex), not inside a write. */
  for (int tries = 0;; tries++) {
    kill(writer, SIGSTOP);
    nap_ms(20);
    if (stopped_in(writer) == 202 /* futex */) break;
    if (tries == 100) return 4;
    kill(writer, SIGCONT);
    nap_ms(7);
  }
  (void)!write(fds[1], "S", 1);
  for (int i = 0; i < 300000; i++) {
    void *volatile p = malloc(48);
    free(p);
  }
  for (int i = 0; i < 1000; i++) blocks[i] = malloc(8008);
  return 0;
}
