/* A program to attach to for memory (test/attach_e2e.cpp): before it says
** "ready" it allocates kOld blocks in attach_old_block; then, for each
** line "round" on stdin, it makes a known round of allocation calls, each
** kind from a function of its own, and says "done"; "q" ends it with a
** checksum, equal in every run, and exit status 0.
**
** A round: kMallocs malloc in round_malloc, kCallocs calloc in round_calloc,
** kAligned posix_memalign in round_aligned, each malloc block grown by
** realloc in round_realloc, kKept malloc in round_kept (left live), kOldFreed
** of the old blocks freed and kOldGrown grown by realloc in
** round_old_realloc; then every block of the round but the kept ones and the
** grown old ones is freed. A background thread allocates nothing: it only
** spins, so the counts are the main thread's alone.
**
** With the argument "churn", two more threads allocate, grow and free
** blocks in churn_work without pause, from before "ready" to "q". */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mix64.h"

enum { kOld = 600, kMallocs = 1000, kCallocs = 300, kAligned = 200, kKept = 50,
       kOldFreed = 100, kOldGrown = 100 };

static void *g_old[kOld];
static int g_next_old;
static void *g_round[kMallocs], *g_calloced[kCallocs], *g_aligned[kAligned];
static void *g_kept[4][kKept];
static int g_rounds;
static atomic_int g_stop;
static volatile uint64_t g_sink;

/* (noinline and a volatile touch each: a frame of its own, never merged.) */
__attribute__((noinline)) void *attach_old_block(size_t n) {
  void *p = malloc(n);
  memset(p, 1, n);
  return p;
}
__attribute__((noinline)) void round_malloc(void) {
  for (int i = 0; i < kMallocs; i++) g_round[i] = malloc(40);
  g_sink += (uintptr_t)g_round[0];
}
__attribute__((noinline)) void round_calloc(void) {
  for (int i = 0; i < kCallocs; i++) g_calloced[i] = calloc(3, 16);
  g_sink += (uintptr_t)g_calloced[0];
}
__attribute__((noinline)) void round_aligned(void) {
  for (int i = 0; i < kAligned; i++)
    if (posix_memalign(&g_aligned[i], 64, 96) != 0) abort();
  g_sink += (uintptr_t)g_aligned[0];
}
__attribute__((noinline)) void round_realloc(void) {
  for (int i = 0; i < kMallocs; i++) g_round[i] = realloc(g_round[i], 80);
  g_sink += (uintptr_t)g_round[0];
}
__attribute__((noinline)) void round_kept(void) {
  for (int i = 0; i < kKept; i++) g_kept[g_rounds % 4][i] = malloc(24);
  g_sink += (uintptr_t)g_kept[0][0];
}
__attribute__((noinline)) void round_old_free(void) {
  for (int i = 0; i < kOldFreed; i++) free(g_old[g_next_old++]);
}
__attribute__((noinline)) void round_old_realloc(void) {
  for (int i = 0; i < kOldGrown; i++, g_next_old++) g_old[g_next_old] = realloc(g_old[g_next_old], 200);
}
__attribute__((noinline)) void round_free(void) {
  for (int i = 0; i < kMallocs; i++) free(g_round[i]);
  for (int i = 0; i < kCallocs; i++) free(g_calloced[i]);
  for (int i = 0; i < kAligned; i++) free(g_aligned[i]);
}

static void round_of_calls(void) {
  round_malloc();
  round_calloc();
  round_aligned();
  round_realloc();
  round_kept();
  round_old_free();
  round_old_realloc();
  round_free();
  g_rounds++;
}

__attribute__((noinline)) uint64_t attach_alloc_spin(uint64_t x) {
  for (int i = 0; i < 100000; i++) x = mix(x + (uint64_t)i);
  return x;
}

__attribute__((noinline)) uint64_t churn_work(uint64_t x) {
  void *blocks[64];
  for (int i = 0; i < 64; i++) blocks[i] = malloc(16 + (size_t)(x = mix(x)) % 512);
  for (int i = 0; i < 64; i += 2) blocks[i] = realloc(blocks[i], 32 + (size_t)(x = mix(x)) % 1024);
  for (int i = 0; i < 64; i++) free(blocks[i]);
  return x;
}

static void *churner(void *arg) {
  uint64_t x = (uintptr_t)arg;
  while (!atomic_load(&g_stop)) x = churn_work(x);
  g_sink = x;
  return arg;
}

static void *spinner(void *arg) {
  uint64_t x = 1;
  while (!atomic_load(&g_stop)) x = attach_alloc_spin(x);
  g_sink = x;
  return arg;
}

int main(int argc, char **argv) {
  for (int i = 0; i < kOld; i++) g_old[i] = attach_old_block(32);
  pthread_t t, churners[2];
  pthread_create(&t, NULL, spinner, NULL);
  const int churn = argc > 1 && strcmp(argv[1], "churn") == 0;
  for (int i = 0; churn && i < 2; i++) pthread_create(&churners[i], NULL, churner, (void *)(uintptr_t)(i + 1));
  /* (stdout's buffer now, so no round makes it.) */
  printf("ready\n");
  fflush(stdout);
  char line[64];
  while (fgets(line, sizeof line, stdin) && strcmp(line, "q\n") != 0) {
    if (strcmp(line, "round\n") != 0 || g_next_old + kOldFreed + kOldGrown > kOld) continue;
    round_of_calls();
    printf("done %d\n", g_rounds);
    fflush(stdout);
  }
  atomic_store(&g_stop, 1);
  pthread_join(t, NULL);
  for (int i = 0; churn && i < 2; i++) pthread_join(churners[i], NULL);
  printf("checksum %llu rounds %d\n", (unsigned long long)attach_alloc_spin(7), g_rounds);
  return 0;
}
