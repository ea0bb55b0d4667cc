// sigaction and signal, interposed so that a program that takes the
// sampling signal for itself (its own profiler, a reset of every signal to
// its default) gets it: the CPU sampler steps aside first.
#include <atomic>
#include <csignal>
#include <dlfcn.h>

#include "sampler.h"
#include "thread_state.h"

namespace {

template <class Fn>
Fn real(const char *name, std::atomic<Fn> &cache) {
  Fn fn = cache.load(std::memory_order_acquire);
  if (!fn) {
    prof::GuardScope guard;  // dlsym may allocate
    fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
    cache.store(fn, std::memory_order_release);
  }
  return fn;
}

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
  return real("sigaction", g_sigaction)(sig, act, old);
}

extern "C" __attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler) {
  before_change(sig);
  return real("signal", g_signal)(sig, handler);
}
