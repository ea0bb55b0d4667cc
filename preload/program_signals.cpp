#include "program_signals.h"

#include <atomic>
#include <cerrno>
#include <pthread.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpu/sampler.h"
#include "next_symbol.h"
#include "thread_state.h"

namespace prof {
namespace {
// The process whose memory holds g_actions (0 until the agent starts). A
// vfork child shares that memory with its parent while it has signal
// dispositions of its own: its changes (gdb's child resets every handler
// before exec) go to the kernel as they are, or the parent's trampoline
// would find its handlers gone and drop their signals.
std::atomic<pid_t> g_table_owner{0};
}  // namespace

uint64_t alternate_stack_room() {
  stack_t alternate{};
  if (syscall(SYS_sigaltstack, nullptr, &alternate) != 0 || !(alternate.ss_flags & SS_ONSTACK))
    return UINT64_MAX;
  return uint64_t(__builtin_frame_address(0)) - uint64_t(alternate.ss_sp);
}

bool owns_signal_table() {
  const pid_t owner = g_table_owner.load(std::memory_order_relaxed);
  return owner == 0 || owner == getpid();
}

namespace {

// Each signal's handler as the program installed it: its address, with
// whether it takes a siginfo and whether it resets itself in the top bits
// (user addresses leave them clear), or 0 for none. One word, so that the
// trampoline never reads half of a change.
static_assert(sizeof(void *) == 8, "handlers are packed into 64 bits");
constexpr uint64_t kSigInfo = uint64_t(1) << 63, kResetHand = uint64_t(1) << 62;
// The handler runs on the alternate stack (SA_ONSTACK).
constexpr uint64_t kOnStack = uint64_t(1) << 61;
std::atomic<uint64_t> g_actions[NSIG];

std::atomic<uint64_t> g_deferred{0}, g_merged{0}, g_in_agent{0};

// Signals held back on this thread; t_state.deferred counts them.
constexpr uint8_t kMaxHeld = 8;
__thread siginfo_t t_held[kMaxHeld] __attribute__((tls_model("initial-exec")));

uint64_t pack(void *handler, int flags) {
  return uint64_t(uintptr_t(handler)) | (flags & SA_SIGINFO ? kSigInfo : 0) |
         (flags & SA_RESETHAND ? kResetHand : 0) | (flags & SA_ONSTACK ? kOnStack : 0);
}
void *handler_of(uint64_t action) {
  return reinterpret_cast<void *>(uintptr_t(action & ~(kSigInfo | kResetHand | kOnStack)));
}
bool is_handler(void *h) { return h != reinterpret_cast<void *>(SIG_DFL) && h != reinterpret_cast<void *>(SIG_IGN); }

// What the program sees of the trampoline's sigaction: its own handler and flags.
void as_installed(uint64_t action, struct sigaction *sa) {
  sa->sa_sigaction = reinterpret_cast<void (*)(int, siginfo_t *, void *)>(handler_of(action));
  sa->sa_flags &= ~(SA_SIGINFO | SA_RESETHAND);
  sa->sa_flags |= (action & kSigInfo ? SA_SIGINFO : 0) | (action & kResetHand ? SA_RESETHAND : 0);
}

// A signal an instruction raised: its handler must run before the instruction can go on.
bool is_fault(int sig, const siginfo_t *info) {
  const bool fault_signal = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
                            sig == SIGTRAP || sig == SIGSYS;
  return fault_signal && info->si_code > 0;  // si_code <= 0: sent by a process
}

bool hold_back(const siginfo_t *info) {
  // A standard signal already held is merged, as the kernel keeps one of
  // each pending (a timer firing all through a long stay in the agent).
  if (info->si_signo < SIGRTMIN)
    for (uint8_t i = 0; i < t_state.deferred && i < kMaxHeld; i++)
      if (t_held[i].si_signo == info->si_signo) {
        g_merged.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
  // XXX: one instruction takes the place, so a signal interrupting the copy takes the next.
  const uint8_t n = __atomic_fetch_add(&t_state.deferred, 1, __ATOMIC_RELAXED);
  if (n < kMaxHeld) {
    t_held[n] = *info;
    g_deferred.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  __atomic_fetch_sub(&t_state.deferred, 1, __ATOMIC_RELAXED);
  return false;
}

void run_handler(int sig, uint64_t action, siginfo_t *info, void *ucontext) {
  if (action & kResetHand) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    g_actions[sig].store(0, std::memory_order_release);
    real_sigaction(sig, &dfl, nullptr);
  }
  void *h = handler_of(action);
  if (action & kSigInfo)
    reinterpret_cast<void (*)(int, siginfo_t *, void *)>(h)(sig, info, ucontext);
  else
    reinterpret_cast<void (*)(int)>(h)(sig);
}

void on_program_signal(int sig, siginfo_t *info, void *ucontext) {
  const uint64_t action = g_actions[sig].load(std::memory_order_acquire);
  if (!action) return;  // the program removed its handler meanwhile
  if (t_state.guard && !is_fault(sig, info) && !guard_abandoned() && hold_back(info)) return;
  if (t_state.guard) g_in_agent.fetch_add(1, std::memory_order_relaxed);
  // XXX: on a small alternate stack (SIGSTKSZ is 8 KiB) a sample's signal
  // frame and handler need more than the program's handler and the
  // agent's hooks leave: the sample waits until the handler returns.
  constexpr uint64_t kRoomForSamples = 32 << 10;
  if (!(action & kOnStack) || !sampler_holds(g_cpu.sig) ||
      alternate_stack_room() >= kRoomForSamples) {
    run_handler(sig, action, info, ucontext);
    return;
  }
  sigset_t sampling, was;
  sigemptyset(&sampling);
  sigaddset(&sampling, g_cpu.sig);
  real_sigmask(SIG_BLOCK, &sampling, &was);
  run_handler(sig, action, info, ucontext);
  real_sigmask(SIG_SETMASK, &was, nullptr);
}

std::atomic<int (*)(int, const struct sigaction *, struct sigaction *)> g_real_sigaction{nullptr};

// Whether sig's handlers go behind the trampoline: not under secure
// execution, where the agent stays inert.
bool wraps(int sig) { return sig > 0 && sig < NSIG && !getauxval(AT_SECURE); }

}  // namespace

int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  return next_symbol("sigaction", g_real_sigaction)(sig, act, old);
}

std::atomic<int (*)(int, const sigset_t *, sigset_t *)> g_real_sigmask{nullptr};

int real_sigmask(int how, const sigset_t *set, sigset_t *old) {
  return next_symbol("pthread_sigmask", g_real_sigmask)(how, set, old);
}

void claim_signal_table() {
  next_symbol("pthread_sigmask", g_real_sigmask);  // now, not first in a handler
  g_table_owner.store(getpid(), std::memory_order_relaxed);
  // A fork child's stats count its own signals.
  g_deferred.store(0, std::memory_order_relaxed);
  g_merged.store(0, std::memory_order_relaxed);
  g_in_agent.store(0, std::memory_order_relaxed);
}

int program_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (!wraps(sig)) return real_sigaction(sig, act, old);
  const uint64_t known = g_actions[sig].load(std::memory_order_acquire);
  int rc;
  if (!owns_signal_table()) {
    rc = real_sigaction(sig, act, old);
  } else if (act && is_handler(reinterpret_cast<void *>(act->sa_sigaction))) {
    g_actions[sig].store(pack(reinterpret_cast<void *>(act->sa_sigaction), act->sa_flags),
                         std::memory_order_release);
    struct sigaction behind = *act;
    behind.sa_sigaction = on_program_signal;
    behind.sa_flags = (act->sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
    rc = real_sigaction(sig, &behind, old);
    if (rc != 0) g_actions[sig].store(known, std::memory_order_release);
  } else {
    rc = real_sigaction(sig, act, old);
    if (act && rc == 0) g_actions[sig].store(0, std::memory_order_release);
  }
  if (rc == 0 && old && old->sa_sigaction == on_program_signal) as_installed(known, old);
  return rc;
}

sighandler_t program_handler(int sig) {
  if (sig <= 0 || sig >= NSIG) return SIG_DFL;
  return reinterpret_cast<sighandler_t>(handler_of(g_actions[sig].load(std::memory_order_acquire)));
}

bool is_trampoline(sighandler_t handler) {
  return reinterpret_cast<void *>(handler) == reinterpret_cast<void *>(on_program_signal);
}

void adopt_handler(int sig) {
  struct sigaction now {};
  if (!wraps(sig) || !owns_signal_table() || real_sigaction(sig, nullptr, &now) != 0) return;
  void *h = reinterpret_cast<void *>(now.sa_sigaction);
  if (h == reinterpret_cast<void *>(on_program_signal)) return;
  if (!is_handler(h)) {
    g_actions[sig].store(0, std::memory_order_release);
    return;
  }
  g_actions[sig].store(pack(h, now.sa_flags), std::memory_order_release);
  now.sa_sigaction = on_program_signal;
  now.sa_flags = (now.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
  real_sigaction(sig, &now, nullptr);
}

void release_deferred_signals() {
  if (!t_state.deferred) return;
  const ErrnoKept errno_kept;
  // Queued again with every signal blocked (no trampoline can add to the
  // queue meanwhile); the kernel delivers them as the mask comes back.
  sigset_t all, old;
  sigfillset(&all);
  real_sigmask(SIG_BLOCK, &all, &old);
  const pid_t pid = getpid(), tid = pid_t(syscall(SYS_gettid));
  for (uint8_t i = 0; i < t_state.deferred && i < kMaxHeld; i++) {
    siginfo_t &info = t_held[i];
    // XXX: a real-time signal over RLIMIT_SIGPENDING is refused, as the
    // sender's own sigqueue() would have been; tgkill still tries.
    if (syscall(SYS_rt_tgsigqueueinfo, pid, tid, info.si_signo, &info) != 0)
      syscall(SYS_tgkill, pid, tid, info.si_signo);
  }
  t_state.deferred = 0;
  real_sigmask(SIG_SETMASK, &old, nullptr);
}

uint64_t signals_deferred() { return g_deferred.load(std::memory_order_relaxed); }
uint64_t signals_merged() { return g_merged.load(std::memory_order_relaxed); }
uint64_t handlers_in_agent() { return g_in_agent.load(std::memory_order_relaxed); }

}  // namespace prof
