/* A daemon that jails itself (`mem_chroot DIR`, as root): it allocates,
   chroots into DIR (empty: no /proc there), then two threads started in
   the jail each make and free 1000 blocks of 6003 bytes. Prints "jailed"
   and exits 0; exits 4 when chroot is refused (not root). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 1000; i++) {
    void *volatile p = malloc(6003);
    free(p);
  }
  return NULL;
}

int main(int argc, char **argv) {
  void *volatile first = malloc(16); /* the stream opens here, outside the jail */
  free(first);
  if (argc < 2 || chroot(argv[1]) != 0 || chdir("/") != 0) return 4;
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  puts("jailed");
  return 0;
}
