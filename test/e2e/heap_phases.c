/* The heap in two phases, for the heap chart's bands: site_a() grows the
   heap by 40 blocks of 8,200 B (328,000 B), markers "a held", then all are
   freed ("a freed"); site_b() grows it by 100 blocks of 5,000 B (500,000 B,
   the peak), "b held", then frees them. Nothing else is allocated; sizes
   are 8 more than a multiple of 16, so glibc's usable size is the size
   asked for and the writer's count equals the bytes requested. Short sleeps
   spread the phases over time marks (about every 100 ms). */
#include <stdlib.h>
#include <time.h>

#define PROF_WEAK_API
#include "libprof.h"

enum { kBlocksA = 40, kSizeA = 8200, kBlocksB = 100, kSizeB = 5000 };

static void *blocks_a[kBlocksA], *blocks_b[kBlocksB];

static void pause_ms(long ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, 0);
}

static void marker(const char *label) {
  if (prof_marker) prof_marker(label);
}

__attribute__((noinline)) static void site_a(int i) { blocks_a[i] = malloc(kSizeA); }
__attribute__((noinline)) static void site_b(int i) { blocks_b[i] = malloc(kSizeB); }

int main(void) {
  for (int i = 0; i < kBlocksA; i++) site_a(i), pause_ms(5);
  marker("a held");
  pause_ms(100);
  for (int i = 0; i < kBlocksA; i++) free(blocks_a[i]), pause_ms(2);
  marker("a freed");
  pause_ms(100);
  for (int i = 0; i < kBlocksB; i++) site_b(i), pause_ms(2);
  marker("b held");
  pause_ms(100);
  for (int i = 0; i < kBlocksB; i++) free(blocks_b[i]);
  return 0;
}
