// sigaction, signal and their System V and BSD variants, and the sigwait
// family, interposed:
// - while the CPU sampler holds its signal, the program sees and sets its
//   own view of it (what it found at start, SIG_DFL or SIG_IGN, or set
//   since): a save-all, restore-all of the handlers keeps sampling, and a
//   query never returns the agent's handler. A program that installs a
//   handler of its own, or waits for that signal alone, gets the signal,
//   the sampler stepping aside first;
// - a wait for a set of signals (a signal thread's sigwait on a full set)
//   leaves the sampling signal out, and so does sigpending: the clock's
//   signals, pending on a thread that blocks them, are not the program's;
// - a mask that would block the sampling signal (a daemon's main blocks
//   every signal, and its threads inherit that) leaves it out: blocked, it
//   would hold back every sample. The mask reported is the thread's own;
// - every handler the program installs runs behind the trampoline of
//   program_signals.h, which holds signals back while the thread is inside
//   the agent.
#include <atomic>
#include <csignal>
#include <sys/signalfd.h>

#include "cpu/sampler.h"
#include "next_symbol.h"
#include "program_signals.h"
#include "thread_state.h"

namespace {

using SignalFn = sighandler_t (*)(int, sighandler_t);
std::atomic<SignalFn> g_signal{nullptr}, g_sysv_signal{nullptr}, g_bsd_signal{nullptr},
    g_sigset{nullptr};

bool is_disposition(sighandler_t h) { return h == SIG_DFL || h == SIG_IGN; }

// The sampler's signal, held by the agent, in the process that holds it (a
// vfork child, sharing its parent's memory, changes its own as it asks).
bool held(int sig) { return prof::sampler_holds(sig) && prof::owns_signal_table(); }

// signal() and the like set the handler with libc's own sigaction: the one
// installed goes behind the trampoline after the call, and the one replaced
// is reported as the program installed it (the view, for the sampler's).
sighandler_t replace_handler(SignalFn real, int sig, sighandler_t handler) {
  if (held(sig)) {
    const sighandler_t seen = prof::g_cpu.view.sa_handler;
    if (is_disposition(handler)) {
      prof::g_cpu.view.sa_handler = handler;
      prof::g_cpu.view.sa_flags &= ~SA_SIGINFO;
      return seen;
    }
    if (handler != SIG_HOLD) prof::yield_sampling_signal("sets its own handler for");
    const sighandler_t old = real(sig, handler);
    return old == SIG_ERR ? old : seen;
  }
  const sighandler_t known = prof::program_handler(sig);
  sighandler_t old = real(sig, handler);
  if (old == SIG_ERR) return old;
  prof::adopt_handler(sig);
  return prof::is_trampoline(old) ? known : old;
}

// set without the sampling signal, in *copy, unless the program waits for
// it alone: it then has it.
const sigset_t *waited(const sigset_t *set, sigset_t *copy) {
  if (!set || !held(prof::g_cpu.sig) || sigismember(set, prof::g_cpu.sig) != 1)
    return set;
  *copy = *set;
  sigdelset(copy, prof::g_cpu.sig);
  if (!sigisemptyset(copy)) return copy;
  prof::yield_sampling_signal("waits for");
  return set;
}

// set without the sampling signal, in *copy, when how would block it. Not
// inside the agent: libunwind, which it calls, masks every signal around
// its caches, which a sample must not then enter.
const sigset_t *deliverable(int how, const sigset_t *set, sigset_t *copy) {
  if (!set || (how != SIG_BLOCK && how != SIG_SETMASK) || prof::t_state.guard ||
      !held(prof::g_cpu.sig) || sigismember(set, prof::g_cpu.sig) != 1)
    return set;
  *copy = *set;
  sigdelset(copy, prof::g_cpu.sig);
  return copy;
}

}  // namespace

#define EXPORT extern "C" __attribute__((visibility("default")))

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (held(sig)) {
    const struct sigaction seen = prof::g_cpu.view;
    const bool handler =
        act && ((act->sa_flags & SA_SIGINFO) || !is_disposition(act->sa_handler));
    if (!handler) {
      if (act) prof::g_cpu.view = *act;
      if (old) *old = seen;
      return 0;
    }
    prof::yield_sampling_signal("sets its own handler for");
    const int rc = prof::program_sigaction(sig, act, old);
    if (rc == 0 && old) *old = seen;
    return rc;
  }
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

EXPORT int sigwait(const sigset_t *set, int *sig) {
  static std::atomic<int (*)(const sigset_t *, int *)> real;
  sigset_t copy;
  return prof::next_symbol("sigwait", real)(waited(set, &copy), sig);
}

EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info) {
  static std::atomic<int (*)(const sigset_t *, siginfo_t *)> real;
  sigset_t copy;
  return prof::next_symbol("sigwaitinfo", real)(waited(set, &copy), info);
}

EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout) {
  static std::atomic<int (*)(const sigset_t *, siginfo_t *, const struct timespec *)> real;
  sigset_t copy;
  return prof::next_symbol("sigtimedwait", real)(waited(set, &copy), info, timeout);
}

EXPORT int signalfd(int fd, const sigset_t *mask, int flags) {
  static std::atomic<int (*)(int, const sigset_t *, int)> real;
  sigset_t copy;
  return prof::next_symbol("signalfd", real)(fd, waited(mask, &copy), flags);
}

EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
  sigset_t copy;
  return prof::real_sigmask(how, deliverable(how, set, &copy), old);
}

EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
  static std::atomic<int (*)(int, const sigset_t *, sigset_t *)> real;
  sigset_t copy;
  return prof::next_symbol("sigprocmask", real)(how, deliverable(how, set, &copy), old);
}

EXPORT int sigpending(sigset_t *set) {
  static std::atomic<int (*)(sigset_t *)> real;
  const int rc = prof::next_symbol("sigpending", real)(set);
  if (rc == 0 && held(prof::g_cpu.sig)) sigdelset(set, prof::g_cpu.sig);
  return rc;
}
