/* Allocation sites with figures known by construction, for the analyzer's
   end-to-end test under the agent: leak_site() keeps 7 blocks of 1000 B,
   temporary_site() allocates and at once frees 100 blocks of 24 B,
   inlined_alloc() (inlined into inline_site()) allocates 3 blocks of 555 B
   that main frees. Prints the source line of each allocating call. */
#include <stdio.h>
#include <stdlib.h>

void *volatile sink;
volatile int three = 3;  // a loop the compiler cannot unroll into three call sites
int leak_line, temporary_line, inlined_line, inline_site_line;

__attribute__((noinline)) void leak_site(void) {
  for (int i = 0; i < 7; i++) sink = malloc(1000), leak_line = __LINE__;
}

__attribute__((noinline)) void temporary_site(void) {
  for (int i = 0; i < 100; i++) {
    void *p = malloc(24); temporary_line = __LINE__;
    sink = p;  // else the compiler drops the pair
    free(p);
  }
}

static inline __attribute__((always_inline)) void *inlined_alloc(void) {
  void *p = malloc(555); inlined_line = __LINE__;
  sink = p;
  return p;
}

__attribute__((noinline)) void *inline_site(void) {
  void *p = inlined_alloc(); inline_site_line = __LINE__;
  sink = 0;
  return p;
}

int main(void) {
  leak_site();
  temporary_site();
  void *blocks[3];
  for (int i = 0; i < three; i++) blocks[i] = inline_site();
  for (int i = 0; i < three; i++) free(blocks[i]);
  printf("%d %d %d %d\n", leak_line, temporary_line, inlined_line, inline_site_line);
  return 0;
}
