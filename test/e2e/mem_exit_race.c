/* Nine threads each leak 1000 x 3030 B, meet at a barrier and call exit(7)
   at once; main waits for them (exit() ends the process first). */
#include <pthread.h>
#include <stdlib.h>

enum { kThreads = 9, kBlocks = 1000 };

void *volatile sink;
static pthread_barrier_t together;

static void *leak_then_exit(void *arg) {
  (void)arg;
  for (int i = 0; i < kBlocks; i++) sink = malloc(3030);
  pthread_barrier_wait(&together);
  exit(7);
}

int main(void) {
  pthread_t t[kThreads];
  pthread_barrier_init(&together, NULL, kThreads);
  for (int i = 0; i < kThreads; i++)
    if (pthread_create(&t[i], NULL, leak_then_exit, NULL) != 0) return 1;
  for (int i = 0; i < kThreads; i++) pthread_join(t[i], NULL);
  return 1;
}
