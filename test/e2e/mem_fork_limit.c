/* Forks 20 children under the user's task limit and prints how many forks
   failed: "failed=K". The parent allocates 50 blocks of 5005 bytes first
   (its stream opens), each child 100 blocks of 6006 bytes (its own), says
   so on a pipe (the parent waits for that before its next fork), then
   waits for the parent to close another pipe, frees them and exits; the
   parent then reaps every child. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  static void *blocks[100];
  for (int i = 0; i < 50; i++) blocks[i] = malloc(5005);
  int fds[2], ready[2];
  if (pipe(fds) != 0 || pipe(ready) != 0) return 1;
  int failed = 0;
  for (int i = 0; i < 20; i++) {
    const pid_t pid = fork();
    if (pid < 0) {
      failed++;
      continue;
    }
    if (pid == 0) {
      close(fds[1]);
      for (int j = 0; j < 100; j++) blocks[j] = malloc(6006);
      if (write(ready[1], "r", 1) != 1) exit(1);
      char b;
      while (read(fds[0], &b, 1) > 0) {
      }
      for (int j = 0; j < 100; j++) free(blocks[j]);
      exit(0);
    }
    char b;
    if (read(ready[0], &b, 1) != 1) return 1;
  }
  close(fds[1]);
  while (wait(NULL) > 0) {
  }
  printf("failed=%d\n", failed);
  return 0;
}
