// sigaction, signal and their System V and BSD variants, interposed: a
// program that takes the CPU sampler's signal for itself (its own profiler,
// a reset of every signal to its default) gets it, the sampler stepping
// aside first; and every handler the program installs runs behind the
// trampoline of program_signals.h, which holds signals back while the
// thread is inside the agent.
#include <atomic>
#include <csignal>

#include "cpu/sampler.h"
#include "next_symbol.h"
#include "program_signals.h"

namespace {

using SignalFn = sighandler_t (*)(int, sighandler_t);
std::atomic<SignalFn> g_signal{nullptr}, g_sysv_signal{nullptr}, g_bsd_signal{nullptr},
    g_sigset{nullptr};

void before_change(int sig) {
  if (prof::cpu_sampler_on() && sig == prof::g_cpu.sig) prof::yield_sampling_signal();
}

// signal() and the like set the handler with libc's own sigaction: the one
// installed goes behind the trampoline after the call, and the one replaced
// is reported as the program installed it.
sighandler_t replace_handler(SignalFn real, int sig, sighandler_t handler) {
  before_change(sig);
  const sighandler_t known = prof::program_handler(sig);
  sighandler_t old = real(sig, handler);
  if (old == SIG_ERR) return old;
  prof::adopt_handler(sig);
  return prof::is_trampoline(old) ? known : old;
}

}  // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (act) before_change(sig);
  return prof::program_sigaction(sig, act, old);
}

EXPORT sighandler_t signal(int sig, sighandler_t handler) {
  return replace_handler(prof::next_symbol("signal", g_signal), sig, handler);
}

EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler) {
  return replace_handler(prof::next_symbol("sysv_signal", g_sysv_signal), sig, handler);
}

// What signal() becomes in strict ISO C programs.
EXPORT sighandler_t __sysv_signal(int sig, sighandler_t handler) { return sysv_signal(sig, handler); }

EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler) {
  return replace_handler(prof::next_symbol("bsd_signal", g_bsd_signal), sig, handler);
}

EXPORT sighandler_t sigset(int sig, sighandler_t disposition) {
  return replace_handler(prof::next_symbol("sigset", g_sigset), sig, disposition);
}
