/* An executable with an allocator of its own (a bump allocator over a
   static arena: malloc, free, calloc and realloc), which takes the calls
   ahead of any preloaded library. Makes 100 blocks, prints "ok". */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static _Alignas(16) unsigned char arena[64 << 20];
static size_t used;

void *malloc(size_t size) {
  const size_t need = ((size + 15) & ~(size_t)15) + 16;
  if (used + need > sizeof arena) return NULL;
  unsigned char *p = arena + used;
  used += need;
  memcpy(p, &size, sizeof size);
  return p + 16;
}

void free(void *p) { (void)p; }

void *calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  return malloc(n * size);  /* the arena is zeroed and never reused */
}

void *realloc(void *old, size_t size) {
  void *p = malloc(size);
  if (p && old) {
    size_t was;
    memcpy(&was, (unsigned char *)old - 16, sizeof was);
    memcpy(p, old, was < size ? was : size);
  }
  return p;
}

int main(void) {
  static void *volatile blocks[100];
  for (int i = 0; i < 100; i++) blocks[i] = malloc(4004);
  for (int i = 0; i < 100; i++) free(blocks[i]);
  puts("ok");
  return 0;
}
