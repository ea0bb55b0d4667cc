/* The run-time control's test program: each mode makes allocations whose
   counts and sizes are known by construction. It calls libprof's API through
   weak symbols, so it runs unchanged without the agent.

     phases           100 x 32 B and one 24 B block; marker "a"; 7 x 48 B,
                      frees 10 of the 32 B blocks, reallocs the 24 B one to
                      80 B; marker "b"; 50 x 64 B; frees everything.
     api              prof_stop(); 6 x 40 B; prof_start(); 3 x 88 B; marker.
     toggle SIG       5 x 40 B; raise(SIG); 9 x 56 B; raise(SIG); 4 x 72 B.
     own-handler SIG  installs its own handler for SIG, raises it twice
                      between 5 x 40 B, 9 x 56 B and 4 x 72 B; prints the
                      count of signals it handled.
     leaks N          leak_one(): 4 x 64 B, leak_two(): 3 x 128 B, and
                      N x 100 B from leak_n(), all leaked; 10 x 200 B freed.
     many N           N x (malloc 16 B, free).
     cpu-phases MS    burns MS ms of CPU time, marker "a", MS ms, marker "b",
                      MS ms.
     cpu-toggle SIG   burns 200 ms of CPU time, raise(SIG), 200 ms,
                      raise(SIG), 200 ms.
     fork             a child allocates 3 x 40 B and exits; the parent 2 x 40 B.
     exit N           one 16 B block (so that it has a memory stream: the
                      agent writes none for a process that records
                      nothing), freed; exits with N.
     signals DIR      writes DIR/ready, then waits; on SIGTERM or SIGINT
                      writes how many it got in 0.3 s to DIR/TERM or
                      DIR/INT and exits with 7.
     sleep            sleeps 30 s (dies of the signals it gets).
     raise SIG        one 16 B block, freed; prints "raising SIG" on stderr
                      and dies of SIG (no core file). */
#define PROF_WEAK_API
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libprof.h"

static void *volatile sink;

static void __attribute__((noinline)) alloc_n(int n, size_t size) {
  for (int i = 0; i < n; i++) sink = malloc(size);
}

static void marker(const char *label) {
  if (prof_marker) prof_marker(label);
}

static int phases(void) {
  void *before[100], *inside[7], *after[50];
  for (int i = 0; i < 100; i++) before[i] = malloc(32);
  void *grown = malloc(24);
  marker("a");
  for (int i = 0; i < 7; i++) inside[i] = malloc(48);
  for (int i = 0; i < 10; i++) free(before[i]);
  grown = realloc(grown, 80);
  marker("b");
  for (int i = 0; i < 50; i++) after[i] = malloc(64);
  for (int i = 0; i < 50; i++) free(after[i]);
  for (int i = 0; i < 7; i++) free(inside[i]);
  for (int i = 10; i < 100; i++) free(before[i]);
  free(grown);
  return 0;
}

static int api(void) {
  if (prof_stop) prof_stop();
  alloc_n(6, 40);
  if (prof_start) prof_start();
  alloc_n(3, 88);
  marker("api");
  puts(prof_start ? "agent" : "no agent");
  return 0;
}

static volatile sig_atomic_t handled;
static void count_signal(int sig) {
  (void)sig;
  handled++;
}

static int toggle(int sig, int own_handler) {
  if (own_handler) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = count_signal;
    sigaction(sig, &sa, NULL);
  }
  alloc_n(5, 40);
  raise(sig);
  alloc_n(9, 56);
  raise(sig);
  alloc_n(4, 72);
  if (own_handler) printf("handled %d\n", (int)handled);
  return 0;
}

static void __attribute__((noinline)) leak_one(void) { alloc_n(4, 64); }
static void __attribute__((noinline)) leak_two(void) { alloc_n(3, 128); }
static void __attribute__((noinline)) leak_n(int n) { alloc_n(n, 100); }

static int leaks(int n) {
  leak_one();
  leak_two();
  leak_n(n);
  for (int i = 0; i < 10; i++) {
    sink = malloc(200);
    free(sink);
  }
  return 0;
}

static int fork_child(void) {
  const pid_t pid = fork();
  if (pid == 0) {
    alloc_n(3, 40);
    exit(0);
  }
  alloc_n(2, 40);
  int status;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static volatile unsigned long g_spin;

static void __attribute__((noinline)) burn(int ms) {
  struct timespec t0, t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  do {
    for (int i = 0; i < 10000; i++) g_spin = g_spin * 31 + 7;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static int cpu_phases(int ms) {
  burn(ms);
  marker("a");
  burn(ms);
  marker("b");
  burn(ms);
  return 0;
}

static int cpu_toggle(int sig) {
  burn(200);
  raise(sig);
  burn(200);
  raise(sig);
  burn(200);
  return 0;
}

static const char *g_dir;
static volatile sig_atomic_t g_got, g_count;
static void on_signal(int sig) {
  g_got = sig;
  g_count++;
}

static void write_file(const char *name, int value) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  FILE *f = fopen(path, "w");
  if (f) {
    fprintf(f, "%d", value);
    fclose(f);
  }
}

static int signals(const char *dir) {
  g_dir = dir;
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  write_file("ready", 0);
  for (int i = 0; i < 3000 && !g_got; i++) usleep(10000);
  if (!g_got) return 1;
  usleep(300000);  // time for a second copy of the signal to come
  write_file(g_got == SIGTERM ? "TERM" : "INT", (int)g_count);
  return 7;
}

static int die_of(int sig) {
  const struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  fprintf(stderr, "raising %d\n", sig);
  signal(sig, SIG_DFL);
  raise(sig);
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const char *mode = argv[1];
  const int arg = argc > 2 ? atoi(argv[2]) : 0;
  if (!strcmp(mode, "phases")) return phases();
  if (!strcmp(mode, "api")) return api();
  if (!strcmp(mode, "toggle")) return toggle(arg, 0);
  if (!strcmp(mode, "own-handler")) return toggle(arg, 1);
  if (!strcmp(mode, "leaks")) return leaks(arg);
  if (!strcmp(mode, "many")) {
    for (int i = 0; i < arg; i++) {
      sink = malloc(16);
      free(sink);
    }
    return 0;
  }
  if (!strcmp(mode, "fork")) return fork_child();
  if (!strcmp(mode, "cpu-phases")) return cpu_phases(arg);
  if (!strcmp(mode, "cpu-toggle")) return cpu_toggle(arg);
  if (!strcmp(mode, "exit") || !strcmp(mode, "raise")) {
    sink = malloc(16);
    free(sink);
  }
  if (!strcmp(mode, "exit")) return arg;
  if (!strcmp(mode, "signals") && argc > 2) return signals(argv[2]);
  if (!strcmp(mode, "sleep")) return sleep(30);
  if (!strcmp(mode, "raise")) return die_of(arg);
  return 2;
}
