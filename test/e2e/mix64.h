/* mix64.h: a 64-bit mixing step (MurmurHash3's finalizer, halved): work the
** compiler cannot fold away, and sizes that look random, for the test
** programs that the attach tests run. */
#ifndef PROF_TEST_MIX64_H
#define PROF_TEST_MIX64_H

#include <stdint.h>

static inline uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  return x ^ (x >> 29);
}

#endif /* PROF_TEST_MIX64_H */
