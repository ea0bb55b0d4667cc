/* Reallocs of every kind, nothing left live at exit: 1000 chains, each a
   malloc of 24 B grown by realloc, doubling, to 24 KiB (10 reallocs), then
   freed, by free() in even chains and by realloc(p, 0) in odd ones; then 100
   blocks of 64 KiB, each reallocated to a size malloc cannot give (the call
   fails and the block lives on), then freed. Prints how many reallocs
   failed, without stdio (whose buffer would stay allocated). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink;
volatile size_t too_large = (size_t)PTRDIFF_MAX + 1;

int main(void) {
  for (int chain = 0; chain < 1000; chain++) {
    char *p = malloc(24);
    p[0] = 1;
    for (size_t size = 48; size <= 24 * 1024; size *= 2) {
      p = realloc(p, size);
      if (!p) return 1;
      p[size - 1] = 1;
    }
    if (chain % 2) {
      sink = realloc(p, 0);  /* glibc frees p */
    } else {
      free(p);
    }
  }
  int failed = 0;
  for (int i = 0; i < 100; i++) {
    char *p = malloc(64 * 1024);
    memset(p, 1, 64 * 1024);
    char *grown = realloc(p, too_large);
    if (grown) {
      free(grown);
    } else {
      failed++;
      free(p);
    }
  }
  char line[32];
  const int n = snprintf(line, sizeof line, "failed reallocs %d\n", failed);
  return write(1, line, (size_t)n) == n ? 0 : 1;
}
