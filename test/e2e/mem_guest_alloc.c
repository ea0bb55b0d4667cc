/* A guest VM with an allocator of its own (blocks carved from one mapping,
   as LuaJIT's), reporting its calls with prof_guest_alloc as an embedder
   would: 1000 blocks of 48 B made at prototype 0x1000 line 3, the first 400
   freed by its collector; 100 blocks of 64 KiB, one at a time, each asked
   to grow to 1 MiB (the call fails, reported as such) and then freed;
   last, the 1000th small block grown to 4096 B. The C library's heap is
   left alone. */
#define PROF_WEAK_API
#include "libprof.h"

#include <stddef.h>
#include <sys/mman.h>

static char *arena;
static size_t used;

static void *carve(size_t n) {
  void *p = arena + used;
  used += (n + 15) & ~(size_t)15;
  return p;
}

int main(void) {
  if (!prof_guest_alloc) return 3; /* the agent is not loaded */
  arena = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (arena == MAP_FAILED) return 4;
  const struct prof_guest_site at_line = {PROF_SITE_LFUNC, 0x1000, 3};
  const struct prof_guest_site collector = {PROF_SITE_INTERNAL, 0, 0};
  static void *small[1000];
  for (int i = 0; i < 1000; i++) {
    small[i] = carve(48);
    prof_guest_alloc(NULL, 0, small[i], 48, &at_line, NULL, 0);
  }
  for (int i = 0; i < 400; i++) prof_guest_alloc(small[i], 48, NULL, 0, &collector, NULL, 0);
  for (int i = 0; i < 100; i++) {
    void *big = carve(65536);
    prof_guest_alloc(NULL, 0, big, 65536, &at_line, NULL, 0);
    prof_guest_alloc(big, 65536, NULL, 1 << 20, &at_line, NULL, 0);
    prof_guest_alloc(big, 65536, NULL, 0, &collector, NULL, 0);
  }
  prof_guest_alloc(small[999], 48, carve(4096), 4096, &at_line, NULL, 0);
  return 0;
}
