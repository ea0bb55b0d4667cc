/* A program to attach to (test/attach_e2e.cpp): its main thread runs
** attach_main_work and a thread started at once attach_early_work, each in
** a loop; SIGUSR1 starts a third thread running attach_late_work (a thread
** started after attach). Prints "ready" once the first two run; "q" on
** stdin stops every thread, and it prints a checksum of fixed work, equal
** in every run, and exits 0. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mix64.h"

static atomic_int g_stop;
static volatile uint64_t g_sink;

__attribute__((noinline)) uint64_t attach_main_work(uint64_t x) {
  for (int i = 0; i < 100000; i++) x = mix(x + (uint64_t)i);
  return x;
}
__attribute__((noinline)) uint64_t attach_early_work(uint64_t x) {
  for (int i = 0; i < 100000; i++) x = mix(x ^ (uint64_t)i);
  return x;
}
__attribute__((noinline)) uint64_t attach_late_work(uint64_t x) {
  for (int i = 0; i < 100000; i++) x = mix(x - (uint64_t)i);
  return x;
}

static void *early(void *arg) {
  uint64_t x = 1;
  while (!atomic_load(&g_stop)) x = attach_early_work(x);
  g_sink = x;
  return arg;
}
static void *late(void *arg) {
  uint64_t x = 2;
  while (!atomic_load(&g_stop)) x = attach_late_work(x);
  g_sink = x;
  return arg;
}

/* Waits for SIGUSR1 (blocked in every thread) and starts the late thread. */
static void *starter(void *arg) {
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  int sig;
  static pthread_t t;
  if (sigwait(&usr1, &sig) == 0 && !atomic_load(&g_stop)) pthread_create(&t, NULL, late, NULL);
  *(pthread_t **)arg = &t;
  return NULL;
}

static void *reader(void *arg) {
  char line[64];
  while (fgets(line, sizeof line, stdin) && strcmp(line, "q\n") != 0) {
  }
  atomic_store(&g_stop, 1);
  return arg;
}

int main(void) {
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, NULL);
  pthread_t e, s, r;
  pthread_t *late_thread = NULL;
  pthread_create(&e, NULL, early, NULL);
  pthread_create(&s, NULL, starter, &late_thread);
  pthread_create(&r, NULL, reader, NULL);
  printf("ready\n");
  fflush(stdout);
  uint64_t x = 3;
  while (!atomic_load(&g_stop)) x = attach_main_work(x);
  g_sink = x;
  pthread_join(e, NULL);
  pthread_join(r, NULL);
  pthread_kill(s, SIGUSR1);  /* (the starter ends either way) */
  pthread_join(s, NULL);
  if (late_thread && *late_thread) pthread_join(*late_thread, NULL);
  printf("checksum %llu\n", (unsigned long long)attach_main_work(attach_early_work(attach_late_work(7))));
  return 0;
}
