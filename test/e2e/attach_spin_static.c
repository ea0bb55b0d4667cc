/* A statically linked program to attach to (test/attach_e2e.cpp): no
** dynamic loader to load the agent. Prints "ready", spins until "q" on
** stdin, prints "done" and exits 0. */
#include <stdio.h>
#include <string.h>

int main(void) {
  char line[64];
  printf("ready\n");
  fflush(stdout);
  while (fgets(line, sizeof line, stdin) && strcmp(line, "q\n") != 0) {
  }
  printf("done\n");
  return 0;
}
