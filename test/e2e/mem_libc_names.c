/* Calls glibc's own names for its allocator, which pass any interposed
   malloc by, mixed with the ordinary ones: 100 blocks of 4004 bytes from
   __libc_malloc freed by free, 100 of 4005 from malloc freed by
   __libc_free, 50 of 4006 (2 x 2003) from
   __libc_calloc grown by __libc_realloc to 4007 and freed by free, 20 of
   4008 from __libc_memalign freed by __libc_free: 340 such calls. */
#include <stdio.h>
#include <stdlib.h>

void *__libc_malloc(size_t);
void __libc_free(void *);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);

int main(void) {
  static void *blocks[100];
  for (int i = 0; i < 100; i++) blocks[i] = __libc_malloc(4004);
  for (int i = 0; i < 100; i++) free(blocks[i]);
  for (int i = 0; i < 100; i++) blocks[i] = malloc(4005);
  for (int i = 0; i < 100; i++) __libc_free(blocks[i]);
  for (int i = 0; i < 50; i++) blocks[i] = __libc_calloc(2, 2003);
  for (int i = 0; i < 50; i++) blocks[i] = __libc_realloc(blocks[i], 4007);
  for (int i = 0; i < 50; i++) free(blocks[i]);
  for (int i = 0; i < 20; i++) blocks[i] = __libc_memalign(64, 4008);
  for (int i = 0; i < 20; i++) __libc_free(blocks[i]);
  puts("ok");
  return 0;
}
