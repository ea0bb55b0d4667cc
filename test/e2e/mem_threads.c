/* Two threads hand blocks back and forth: thread A allocates N blocks of
   1111 B that thread B frees, B allocates N blocks of 2222 B that A frees,
   so freed addresses are reused across threads all the time. No leak.
   N is argv[1], 2000 by default. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SLOTS 8
static void *_Atomic to_b[SLOTS], *_Atomic to_a[SLOTS];
static int n_blocks = 2000;

static void pass(void *_Atomic *q, void *p) {
  for (;;)
    for (int i = 0; i < SLOTS; i++) {
      void *expected = NULL;
      if (atomic_compare_exchange_weak(&q[i], &expected, p)) return;
    }
}
static void *take(void *_Atomic *q) {
  for (;;)
    for (int i = 0; i < SLOTS; i++) {
      void *p = atomic_exchange(&q[i], NULL);
      if (p) return p;
    }
}
static void *run(void *arg) {
  const int is_a = arg != NULL;
  for (int i = 0; i < n_blocks; i++) {
    pass(is_a ? to_b : to_a, malloc(is_a ? 1111 : 2222));
    free(take(is_a ? to_a : to_b));
  }
  return NULL;
}
int main(int argc, char **argv) {
  if (argc > 1) n_blocks = atoi(argv[1]);
  pthread_t a, b;
  pthread_create(&a, NULL, run, (void *)1);
  pthread_create(&b, NULL, run, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}
