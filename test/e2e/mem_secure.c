/* Linked against libprof.so rather than preloaded (a secure-execution loader
   ignores LD_PRELOAD paths, but not a needed library): allocates 5 blocks of
   5050 B and prints "secure ok". Its RUNPATH is ".": run it where a copy of
   libprof.so is (test/agent.cmake). */
#include <stdio.h>
#include <stdlib.h>

void *volatile sink;

int main(void) {
  for (int i = 0; i < 5; i++) sink = malloc(5050);
  printf("secure ok\n");
  return 0;
}
