/* main starts two threads and leaves with pthread_exit while they allocate:
   each makes 2000 blocks of 6001 bytes (and frees them), on its own stack,
   after main has gone (a barrier holds them until then). The process exits
   0 when the last thread ends. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static volatile int g_main_gone;

static void *worker(void *arg) {
  (void)arg;
  while (!g_main_gone) usleep(1000);
  usleep(20000); /* main's pthread_exit is done by now */
  for (int i = 0; i < 2000; i++) {
    void *volatile p = malloc(6001);
    free(p);
  }
  return NULL;
}

int main(void) {
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
  g_main_gone = 1;
  pthread_exit(NULL);
}
