// sigaction and signal, interposed so that a program that takes the
// sampling signal for itself (its own profiler, a reset of every signal to
// its default) gets it: the CPU sampler steps aside first.
#include <atomic>
#include <csignal>

#include "next_symbol.h"
#include "cpu/sampler.h"

namespace {

using SigactionFn = int (*)(int, const struct sigaction *, struct sigaction *);
using SignalFn = sighandler_t (*)(int, sighandler_t);
std::atomic<SigactionFn> g_sigaction{nullptr};
std::atomic<SignalFn> g_signal{nullptr};

void before_change(int sig) {
  if (prof::cpu_sampler_on() && sig == prof::g_cpu.sig) prof::yield_sampling_signal();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act,
                                                                struct sigaction *old) {
  if (act) before_change(sig);
  return prof::next_symbol("sigaction", g_sigaction)(sig, act, old);
}

extern "C" __attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler) {
  before_change(sig);
  return prof::next_symbol("signal", g_signal)(sig, handler);
}
