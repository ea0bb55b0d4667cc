// -ln(u) for u in (0, 1], without libm: the sampler's one use of it would
// otherwise load libm into every program (about 0.15 ms of each process's
// start on this VM, for its relocations and IFUNCs).
//
// u = m * 2^e with m in [sqrt(1/2), sqrt(2)), so ln(u) = e ln 2 + ln m, and
// ln m = 2 atanh(s) with s = (m - 1) / (m + 1), |s| < 0.1716, summed to
// s^21: the error is below 1e-15 of the result (test/memory_negative_log.cpp).
#pragma once

#include <cstdint>
#include <cstring>

namespace prof {

inline double negative_log(double u) {
  uint64_t bits;
  std::memcpy(&bits, &u, sizeof bits);
  // A normal u: the biased exponent, and the mantissa put in [1, 2).
  int e = int(bits >> 52) - 1023;
  bits = (bits & ((uint64_t(1) << 52) - 1)) | (uint64_t(1023) << 52);
  double m;
  std::memcpy(&m, &bits, sizeof m);
  if (m >= 1.4142135623730951) m *= 0.5, e += 1;
  const double s = (m - 1) / (m + 1), s2 = s * s;
  double series = 1.0 / 21;
  for (int k = 19; k >= 1; k -= 2) series = series * s2 + 1.0 / k;
  return -(e * 0.6931471805599453 + 2 * s * series);
}

}  // namespace prof
