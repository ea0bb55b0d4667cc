/* Allocates 1000 blocks of 9009 bytes and waits 300 ms: the agent's writer
   has made them durable by then, as compact events, their addresses kept
   only in its table. Then frees 400 of them, allocates 500 blocks of 9010
   bytes and frees 100 of those, and prints "done": every event since the
   wait is, most likely, only in the ring file. Then, with "self", it
   SIGKILLs itself at once; with "stop", it stops itself (SIGSTOP: a
   debugger then ends it); with "fork", a forked child (whose parent's
   stream was open) does all that and SIGKILLs itself, and the parent exits
   0 once it has; else it waits to be killed (up to 30 s). Counts by
   construction: 9009 bytes 1000 made, 400 freed; 9010 bytes 500 made, 100
   freed. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "fork")) {
    void *volatile opened = malloc(77);  // (the parent's stream opens)
    const pid_t child = fork();
    if (child == 0) {
      mode = "self";
    } else {
      int status = 0;
      const int waited = waitpid(child, &status, 0) == child;
      free(opened);
      return waited && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : 1;
    }
  }
  static void *blocks[1000], *more[500];
  for (int i = 0; i < 1000; i++) blocks[i] = malloc(9009);
  const struct timespec wait = {0, 300 * 1000 * 1000};
  nanosleep(&wait, NULL);
  for (int i = 0; i < 400; i++) free(blocks[i]);
  for (int i = 0; i < 500; i++) more[i] = malloc(9010);
  for (int i = 0; i < 100; i++) free(more[i]);
  printf("done\n");
  fflush(stdout);
  if (!strcmp(mode, "self")) kill(getpid(), SIGKILL);
  if (!strcmp(mode, "stop")) raise(SIGSTOP);
  alarm(30);
  for (;;) pause();
}
