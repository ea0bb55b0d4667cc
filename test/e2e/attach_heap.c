/* A program to attach to while it is inside the allocator (test/attach_e2e.cpp):
** its main thread mallocs, reallocs and frees blocks of 2 to 36 KiB in
** heap_churn without pause, most of its time inside the C library's
** allocator, holding the arena's lock (blocks past the thread cache's
** sizes; a second thread, asleep, makes glibc take the lock at all): a
** call gdb made there that allocates would wait for that thread, itself,
** forever. It says "ready", and at the line "q" on stdin prints a
** checksum, equal in every run, and exits 0. */
#include <poll.h>
#include <pthread.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mix64.h"

__attribute__((noinline)) uint64_t heap_churn(uint64_t x) {
  void *blocks[64];
  for (int i = 0; i < 64; i++) blocks[i] = malloc(2048 + (size_t)(x = mix(x)) % 32768);
  for (int i = 0; i < 64; i += 2) blocks[i] = realloc(blocks[i], 2048 + (size_t)(x = mix(x)) % 36864);
  for (int i = 0; i < 64; i++) free(blocks[i]);
  return x;
}

static int line_waiting(void) {
  struct pollfd p = {0, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

static void *sleeper(void *arg) {
  for (;;) pause();
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, sleeper, NULL);
  printf("ready\n");
  fflush(stdout);
  uint64_t x = 1;
  char line[64];
  for (;;) {
    for (int i = 0; i < 1000; i++) x = heap_churn(x);
    if (!line_waiting()) continue;
    if (!fgets(line, sizeof line, stdin) || strcmp(line, "q\n") == 0) break;
  }
  uint64_t sum = 7;
  for (int i = 0; i < 1000; i++) sum = mix(sum + (uint64_t)i);
  printf("checksum %llu\n", (unsigned long long)sum);
  (void)x;
  return 0;
}
