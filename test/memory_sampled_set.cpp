// SampledSet, the sampled live blocks whose frees must be recorded: every
// inserted address is found once by remove(), never one that was not
// inserted, also where the filter's 2-bit counts saturate and while two
// threads insert and remove at once; without saturation the filter returns
// to empty.
#include <catch2/catch.hpp>

#include <cstdint>
#include <thread>
#include <vector>

#include "memory/alloc_sampling.h"

namespace prof {
__thread ThreadState t_state __attribute__((tls_model("initial-exec")));
}

using prof::SampledSet;

namespace {

// Heap-like addresses, 16-byte aligned; `odd` ones are never inserted.
uint64_t address(uint64_t i, bool odd = false) { return 0x555555550000ull + i * 48 + (odd ? 16 : 0); }

}  // namespace

TEST_CASE("sampled set: each sampled block is found once, through saturated filter counts") {
  static SampledSet set;
  REQUIRE(set.init());
  constexpr uint64_t kBlocks = 400000;  // some 6 a bucket: most counts saturate
  for (uint64_t i = 0; i < kBlocks; i++) set.insert(address(i));
  uint64_t found = 0, again = 0, strangers = 0;
  for (uint64_t i = 0; i < kBlocks; i++) strangers += set.remove(address(i, true));
  for (uint64_t i = 0; i < kBlocks; i++) found += set.remove(address(i));
  for (uint64_t i = 0; i < kBlocks; i++) again += set.remove(address(i));
  CHECK(found == kBlocks);
  CHECK(again == 0);
  CHECK(strangers == 0);
  CHECK(set.overflow() == 0);
  set.reset();
}

TEST_CASE("sampled set: a few blocks leave the filter empty again") {
  static SampledSet set;
  REQUIRE(set.init());
  for (uint64_t i = 0; i < 100; i++) set.insert(address(i * 7919));
  for (uint64_t i = 0; i < 100; i++) CHECK(set.may_contain(address(i * 7919)));
  for (uint64_t i = 0; i < 100; i++) CHECK(set.remove(address(i * 7919)));
  uint64_t still = 0;
  for (uint64_t i = 0; i < 100; i++) still += set.may_contain(address(i * 7919));
  CHECK(still == 0);
}

TEST_CASE("sampled set: two threads insert and remove at once, every block found once") {
  static SampledSet set;
  REQUIRE(set.init());
  constexpr uint64_t kRounds = 200000;
  uint64_t found[2] = {0, 0};
  auto work = [&](int t) {
    // Interleaved in the same buckets: thread t owns addresses i*2+t.
    for (uint64_t i = 0; i < kRounds; i++) {
      set.insert(address(i * 2 + uint64_t(t)));
      if (i >= 64) found[t] += set.remove(address((i - 64) * 2 + uint64_t(t)));
    }
    for (uint64_t i = kRounds - 64; i < kRounds; i++) found[t] += set.remove(address(i * 2 + uint64_t(t)));
  };
  std::thread other(work, 1);
  work(0);
  other.join();
  CHECK(found[0] == kRounds);
  CHECK(found[1] == kRounds);
  uint64_t still = 0;
  for (uint64_t i = 0; i < 2 * kRounds; i++) still += set.remove(address(i));
  CHECK(still == 0);
}
