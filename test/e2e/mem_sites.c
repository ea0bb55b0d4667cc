/* Known allocation sites: 100 x 4242 B kept (90 freed later), 50 x 777 B
   calloc'd and freed, 20 x 333 B realloc'd to 3333 B and freed, 5 aligned
   blocks of 5555 B leaked. Prints the address range of site_kept, then
   whether glibc still counts a single thread (the agent's writer must not
   count: glibc's malloc would take its slower multi-threaded paths). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>

void *volatile sink;

__attribute__((noinline)) void *site_kept(void) { return malloc(4242); }
__attribute__((noinline)) void end_of_site_kept(void) {}

int main(void) {
  void *keep[100];
  for (int i = 0; i < 100; i++) keep[i] = site_kept();
  for (int i = 0; i < 50; i++) {
    sink = calloc(1, 777);
    free(sink);
  }
  for (int i = 0; i < 20; i++) {
    char *p = malloc(333);
    memset(p, 1, 333);
    sink = p = realloc(p, 3333);
    free(p);
  }
  for (int i = 0; i < 5; i++) {
    void *p;
    if (posix_memalign(&p, 64, 5555) == 0) sink = p;
  }
  for (int i = 0; i < 90; i++) free(keep[i]);
  printf("site_kept %p %p\n", (void *)site_kept, (void *)end_of_site_kept);
  printf("single_threaded %d\n", (int)__libc_single_threaded);
  return 7;
}
