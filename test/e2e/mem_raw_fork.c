/* A child made without fork() (`mem_raw_fork N`): the parent makes 10
   blocks of 7001 bytes, then a child by the raw fork system call (no fork
   handler runs, as for a sandbox's clone) makes and frees N blocks of 7002
   bytes and exits 3. The parent prints "child 3" and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  const long n = argc > 1 ? atol(argv[1]) : 10;
  void *keep[10];
  for (int i = 0; i < 10; i++) keep[i] = malloc(7001);
  const pid_t child = (pid_t)syscall(SYS_fork);
  if (child == 0) {
    for (long i = 0; i < n; i++) {
      void *volatile p = malloc(7002);
      free(p);
    }
    exit(3);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  for (int i = 0; i < 10; i++) free(keep[i]);
  return 0;
}
