// The sampler's -ln(u) without libm agrees with libm's log over (0, 1]:
// across every binade the sampler draws from, at both ends of each, and at
// the range reduction's boundary.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "memory/negative_log.h"

namespace {
void check_close(double u) {
  const double want = -std::log(u), got = prof::negative_log(u);
  INFO("u = " << u);
  CHECK(std::fabs(got - want) <= 1e-15 * std::fabs(want) + 1e-300);
}
}  // namespace

TEST_CASE("negative_log: -ln(u) to within 1e-15 of libm's over the sampler's range") {
  CHECK(prof::negative_log(1.0) == 0.0);
  // The sampler's smallest u is 2^-53.
  for (int e = 0; e >= -53; e--) {
    const double base = std::ldexp(1.0, e);
    check_close(base);
    check_close(std::nextafter(base, 0.0));
    if (e < 0) check_close(base * 1.4142135623730951);
    if (e < 0) check_close(std::nextafter(base * 1.4142135623730951, 0.0));
    check_close(base * 0.75);
  }
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; i++) check_close(double((rng() >> 11) + 1) / 9007199254740992.0);
}
