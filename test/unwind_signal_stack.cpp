// SignalUnwind's rule walk against libunwind, in a real signal handler: a
// thread interrupts a spinning one thousands of times at arbitrary
// instructions (prologues, epilogues, libc, realigned and alloca frames),
// and each time the handler unwinds the interrupted stack both ways. Every
// stack the rule walk takes must be libunwind's, frame by frame.
#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <string>
#include <unistd.h>

#include "signal_unwind.h"
#include "unwind_shapes.h"

using prof::SignalUnwind;
using prof::SignalWalkCache;

namespace {

constexpr int kMax = 128;

struct Tally {
  std::atomic<int> samples{0}, walked{0}, mismatches{0};
  // The first mismatch, for the report.
  uint64_t walk[kMax], reference[kMax];
  int walk_n = 0, reference_n = 0;
};

Tally g_tally;
SignalWalkCache g_cache;  // the spinning thread's (only its handler uses it)
std::atomic<bool> g_spinning{true};
volatile uint64_t g_sink;

void on_signal(int, siginfo_t *, void *ucontext) {
  uint64_t walk[kMax], reference[kMax];
  bool stopped, fell_back, unused;
  const int n = SignalUnwind::capture(ucontext, walk, kMax, &g_cache, true, &stopped, &fell_back);
  const int m = SignalUnwind::capture(ucontext, reference, kMax, nullptr, false, &stopped, &unused);
  g_tally.samples++;
  // A walk that fell back is libunwind's own: nothing to compare.
  if (fell_back) return;
  g_tally.walked++;
  if (n == m && memcmp(walk, reference, sizeof(uint64_t) * size_t(n)) == 0) return;
  if (g_tally.mismatches++ == 0) {
    memcpy(g_tally.walk, walk, sizeof walk);
    memcpy(g_tally.reference, reference, sizeof reference);
    g_tally.walk_n = n, g_tally.reference_n = m;
  }
}

__attribute__((noinline)) int spin() {
  for (int i = 0; i < 200; i++) g_sink = g_sink * 31 + uint64_t(i);
  return int(g_sink & 1);
}

int compare_spinning(const void *a, const void *b) {
  spin();
  return *static_cast<const int *>(a) - *static_cast<const int *>(b);
}

__attribute__((noinline)) int through_libc() {
  int values[32];
  for (int i = 0; i < 32; i++) values[i] = (i * 7) % 32;
  qsort(values, 32, sizeof(int), compare_spinning);
  return values[0];
}

__attribute__((noinline)) int recurse(int depth) {
  if (depth == 0) return spin() + through_libc();
  const int r = recurse(depth - 1) + spin();
  g_sink = g_sink + 1;
  return r;
}

void run_shapes() {
  for (int depth : {0, 3, 9, 30}) {
    recurse(depth);
    fp_recurse(depth, spin);
    alloca_recurse(depth, 16 + size_t(depth) * 8, spin);
    fp_recurse(depth % 4, [] { return alloca_recurse(2, 40, through_libc); });
    realigned_call(spin);
    realigned_call(through_libc);
  }
}

void *interrupter(void *target) {
  while (g_spinning.load()) {
    pthread_kill(*static_cast<pthread_t *>(target), SIGUSR2);
    usleep(50);
  }
  return nullptr;
}

}  // namespace

TEST_CASE("in a signal handler, the rule walk finds libunwind's frames wherever it interrupts") {
  SignalUnwind::init();
  SignalUnwind::set_stack(&g_cache);
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  REQUIRE(sigaction(SIGUSR2, &sa, nullptr) == 0);
  pthread_t self = pthread_self(), other;
  REQUIRE(pthread_create(&other, nullptr, interrupter, &self) == 0);
  while (g_tally.samples.load() < 5000) run_shapes();
  g_spinning = false;
  pthread_join(other, nullptr);
  signal(SIGUSR2, SIG_DFL);

  INFO(g_tally.samples << " samples, " << g_tally.walked << " taken by the rule walk");
  // The shapes' code all has rules the walk applies; only the odd sample
  // (a PLT stub, the signal-delivery instant) is left to libunwind.
  CHECK(g_tally.walked >= g_tally.samples * 95 / 100);
  if (g_tally.mismatches) {
    std::string walk, reference;
    for (int i = 0; i < g_tally.walk_n; i++) walk += " " + std::to_string(g_tally.walk[i]);
    for (int i = 0; i < g_tally.reference_n; i++) reference += " " + std::to_string(g_tally.reference[i]);
    INFO("first mismatch: walk" << walk << " / libunwind" << reference);
    CHECK(g_tally.mismatches == 0);
  }
}
