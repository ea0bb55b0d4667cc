/* Leaves as Go programs do, through exit_group() past exit() and _exit():
   4 threads each leak 2500 x 4040 B and are joined, then main calls
   syscall(SYS_exit_group, 5). No destructor or exit hook runs. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { kThreads = 4, kBlocks = 2500 };

void *volatile sink;

static void *leak(void *arg) {
  (void)arg;
  for (int i = 0; i < kBlocks; i++) sink = malloc(4040);
  return NULL;
}

int main(void) {
  pthread_t t[kThreads];
  for (int i = 0; i < kThreads; i++)
    if (pthread_create(&t[i], NULL, leak, NULL) != 0) return 1;
  for (int i = 0; i < kThreads; i++) pthread_join(t[i], NULL);
  syscall(SYS_exit_group, 5);
  return 1;
}
