/* Threads named by the program, each making allocations known by
   construction, one after another (each joined before the next starts):
   - alpha-worker (pthread_setname_np on itself): 100 blocks of 1000 B, kept;
   - beta-worker (named by main with pthread_setname_np before it
     allocates): 50 blocks of 3000 B, then frees 60 of alpha's blocks and 20
     of its own;
   - gamma-worker (pthread_setname_np on itself): 10 blocks of 500 B, then
     renamed delta-worker (prctl(PR_SET_NAME)): 7 blocks of 700 B.
   Main, unnamed, first makes and frees one block of 64 B. Nothing else is
   freed. The heap peaks at beta's 50th block, alpha's
   100000 B and beta's 150000 B live; at the end alpha's 40 blocks (40000 B),
   beta's 30 (90000 B) and the renamed thread's 17 (9900 B) leak. No stdio
   in the threads: their allocations are these alone. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <sys/prctl.h>

static void *alpha_blocks[100];
static void *beta_blocks[50];
static void *volatile sink;
static sem_t beta_named;

__attribute__((noinline)) static void *alpha_main(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "alpha-worker");
  for (int i = 0; i < 100; i++) alpha_blocks[i] = malloc(1000);
  return NULL;
}

__attribute__((noinline)) static void *beta_main(void *arg) {
  (void)arg;
  sem_wait(&beta_named);
  for (int i = 0; i < 50; i++) beta_blocks[i] = malloc(3000);
  for (int i = 0; i < 60; i++) free(alpha_blocks[i]);
  for (int i = 0; i < 20; i++) free(beta_blocks[i]);
  return NULL;
}

__attribute__((noinline)) static void *renamed_main(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "gamma-worker");
  for (int i = 0; i < 10; i++) sink = malloc(500);
  prctl(PR_SET_NAME, "delta-worker", 0, 0, 0);
  for (int i = 0; i < 7; i++) sink = malloc(700);
  return NULL;
}

int main(void) {
  pthread_t t;
  sink = malloc(64);
  free(sink);
  if (sem_init(&beta_named, 0, 0) != 0) return 3;
  if (pthread_create(&t, NULL, alpha_main, NULL) != 0 || pthread_join(t, NULL) != 0) return 3;
  if (pthread_create(&t, NULL, beta_main, NULL) != 0) return 3;
  pthread_setname_np(t, "beta-worker");
  sem_post(&beta_named);
  if (pthread_join(t, NULL) != 0) return 3;
  if (pthread_create(&t, NULL, renamed_main, NULL) != 0 || pthread_join(t, NULL) != 0) return 3;
  return 0;
}
