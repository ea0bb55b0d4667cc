/* Has the agent's writer thread stopped alone, as a debugger stops one
   thread (a helper child seizes it with ptrace and interrupts it while it
   waits for work), then allocates past the ring's size and exits: the
   program must not wait for the stopped writer beyond the agent's bound.
   The helper measures from the stop to the program's end (the pipe's EOF)
   and prints the milliseconds, or "hung" after 20 s (it then lets the
   writer go on). Counts by construction: 1000 blocks of 7007 bytes (400
   freed), 300,000 malloc/free pairs of 48 bytes, 1000 blocks of 8008
   bytes. Exits 3 if it finds no writer, 4 if it cannot stop it. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "find_writer.h"

/* The system call task tid is stopped in (/proc/TID/syscall's first
   field), or -1. (No stdio: the helper allocates nothing, so it opens no
   stream of its own.) */
static long stopped_in(pid_t tid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/syscall", (int)tid);
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  const ssize_t n = read(fd, line, sizeof line - 1);
  close(fd);
  if (n <= 0) return -1;
  line[n] = 0;
  return strtol(line, NULL, 10);
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

/* The helper: stops the writer while it waits for work (futex), not
   inside a write, says so ("S", or "F" if it cannot), then measures. */
static void stop_and_measure(pid_t writer, int to_parent, int from_parent) {
  int status;
  if (ptrace(PTRACE_SEIZE, writer, 0, 0) != 0) {
    (void)!write(to_parent, "F", 1);
    _exit(1);
  }
  for (int tries = 0;; tries++) {
    ptrace(PTRACE_INTERRUPT, writer, 0, 0);
    waitpid(writer, &status, __WALL);
    if (stopped_in(writer) == 202 /* futex */) break;
    if (tries == 100) {
      (void)!write(to_parent, "F", 1);
      _exit(1);
    }
    ptrace(PTRACE_CONT, writer, 0, 0);
    nap_ms(7);
  }
  const long stopped = now_ms();
  (void)!write(to_parent, "S", 1);
  char b;
  struct pollfd p = {from_parent, POLLIN, 0};
  while (poll(&p, 1, 20000) == 1 && read(from_parent, &b, 1) > 0) {
  }
  char line[32];
  const long took = now_ms() - stopped;
  const int n = took >= 20000 ? snprintf(line, sizeof line, "hung\n")
                              : snprintf(line, sizeof line, "%ld\n", took);
  (void)!write(1, line, (size_t)n);
  ptrace(PTRACE_DETACH, writer, 0, 0);
  _exit(0);
}

int main(void) {
  static void *blocks[1000];
  for (int i = 0; i < 1000; i++) blocks[i] = malloc(7007);
  for (int i = 0; i < 400; i++) free(blocks[i]);
  nap_ms(300);
  /* (The writer starts with the first event 100 ms on, then waits.) */
  void *volatile first = malloc(16);
  free(first);
  nap_ms(100);
  const pid_t writer = find_writer();
  if (!writer) return 3;
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) return 1;
  if (fork() == 0) {
    close(down[1]);
    close(up[0]);
    stop_and_measure(writer, up[1], down[0]);
  }
  close(down[0]);
  close(up[1]);
  char said = 0;
  if (read(up[0], &said, 1) != 1 || said != 'S') return 4;
  for (int i = 0; i < 300000; i++) {
    void *volatile p = malloc(48);
    free(p);
  }
  for (int i = 0; i < 1000; i++) blocks[i] = malloc(8008);
  return 0;
}
