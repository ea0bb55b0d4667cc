// The CPU sampler's life: the sampling signal's handler installed, each
// thread's clock armed and disarmed, the ".sysprof" stream (stream.h)
// opened at start and in a forked child, and finished with the stats.
#include "cpu/sampler.h"

#include <cerrno>
#include <cstdio>
#include <dlfcn.h>
#include <link.h>
#include <cstring>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "cpu/stream.h"
#include "module_map.h"
#include "program_signals.h"
#include "signal_unwind.h"
#include "thread_state.h"

namespace prof {

CpuSampler g_cpu;

namespace {

// Arming and disarming clocks of other threads (never in the handler).
pthread_mutex_t g_clocks_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_key_t g_thread_key;

uint64_t gettid_now() { return uint64_t(syscall(SYS_gettid)); }

// [*lo, *hi): the code of the function at `fn`, by its symbol's size.
void function_extent(void *fn, uint64_t *lo, uint64_t *hi) {
  Dl_info info;
  void *entry = nullptr;
  if (!fn || !dladdr1(fn, &info, &entry, RTLD_DL_SYMENT) || !entry) return;
  *lo = uint64_t(fn), *hi = uint64_t(fn) + static_cast<const ElfW(Sym) *>(entry)->st_size;
}

// Blocks the sampling signal on the calling thread for a scope.
class SignalBlock {
 public:
  SignalBlock() {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, g_cpu.sig);
    real_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~SignalBlock() { real_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

void disarm_all() {
  pthread_mutex_lock(&g_clocks_mutex);
  sample_slots::for_each([](SampleSlot &s) {
    if (s.state.load(std::memory_order_acquire) == SampleSlot::Live) disarm_thread(g_cpu.backend, &s);
  });
  disarm_process(g_cpu.backend);
  pthread_mutex_unlock(&g_clocks_mutex);
}

void unregister_thread(void *p) {
  auto *slot = static_cast<SampleSlot *>(p);
  SignalBlock block;
  t_sample_slot = nullptr;
  pthread_mutex_lock(&g_clocks_mutex);
  disarm_thread(g_cpu.backend, slot);
  pthread_mutex_unlock(&g_clocks_mutex);
  if (cpu_sampler_on()) weigh_thread_tail(*slot);
  sysprof_stream::flush_slot(*slot);
  sample_slots::release(slot);
}

// Gives the calling thread a slot and arms its clock; with `pick`, chooses
// the backend on the way (the process's first thread).
bool register_thread(const CpuBackend *pick) {
  SampleSlot *slot = sample_slots::claim(gettid_now());
  if (!slot) return false;
  SignalUnwind::set_stack(&slot->walk);
  t_sample_slot = slot;
  pthread_mutex_lock(&g_clocks_mutex);
  const bool armed = pick ? pick_backend(*pick, g_cpu.sig, g_cpu.interval_ns, slot, &g_cpu.backend)
                          : arm_thread(g_cpu.backend, g_cpu.sig, g_cpu.interval_ns, slot);
  pthread_mutex_unlock(&g_clocks_mutex);
  if (!armed) {
    t_sample_slot = nullptr;
    sample_slots::release(slot);
    return false;
  }
  pthread_setspecific(g_thread_key, slot);
  return true;
}

// Arms `first`'s thread's clock, choosing the backend on the way.
bool arm_first(CpuBackend wanted, SampleSlot *first) {
  pthread_mutex_lock(&g_clocks_mutex);
  const bool armed = pick_backend(wanted, g_cpu.sig, g_cpu.interval_ns, first, &g_cpu.backend);
  pthread_mutex_unlock(&g_clocks_mutex);
  return armed;
}

// Starts sampling on the calling thread, the process's first (or, attached,
// on `first`: a slot claimed for one of its threads, not through TLS).
bool begin(CpuBackend wanted, pid_t ppid, SampleSlot *first = nullptr) {
  if (first ? !arm_first(wanted, first) : !register_thread(&wanted)) {
    say("no CPU clock could be armed (", errno_text(errno), "); CPU profiling disabled");
    return false;
  }
  if (!sysprof_stream::open(ppid)) {
    disarm_all();
    return false;
  }
  g_cpu.on.store(true, std::memory_order_release);
  return true;
}

// An ignored signal stays ignored through exec (nohup): the program's view
// goes back, the sampler being done in this process. (Not SIG_DFL: a
// sample's signal still pending would kill; exec resets a handler to it.)
bool restore_ignored_signal() {
  return g_cpu.holds_signal.load() && g_cpu.view.sa_handler == SIG_IGN &&
         !(g_cpu.view.sa_flags & SA_SIGINFO) && real_sigaction(g_cpu.sig, &g_cpu.view, nullptr) == 0;
}

void reset_counts() {
  g_cpu.samples = 0, g_cpu.unregistered = 0, g_cpu.in_agent = 0, g_cpu.stacks_cut = 0;
  g_cpu.guest_stacks_cut = 0;
  g_cpu.unwind_fallbacks = 0;
  g_cpu.foreign_signals = 0, g_cpu.arm_failures = 0, g_cpu.clocks_closed = 0;
  g_cpu.on_small_stack = 0;
}

}  // namespace

bool start_cpu_sampler() { return start_cpu_sampler(on_sample_signal, nullptr); }

bool start_cpu_sampler(void (*handler)(int, siginfo_t *, void *), SampleSlot *first) {
  const Config &cfg = g_agent.cfg;
  g_cpu.sig = cfg.cpu_signal ? cfg.cpu_signal : SIGPROF;
  g_cpu.mode = cfg.cpu;
  g_cpu.interval_ns = cfg.interval_ns;
  g_cpu.max_depth = int(cfg.max_depth);
  struct sigaction old {};
  real_sigaction(g_cpu.sig, nullptr, &old);
  if ((old.sa_flags & SA_SIGINFO) || (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
    char num[8];
    snprintf(num, sizeof num, "%d", g_cpu.sig);
    say("signal ", num, " already has a handler in this program; CPU profiling disabled "
        "(PROF_CPU_SIGNAL picks another)");
    return false;
  }
  SignalUnwind::init();
  ModuleMap::extent_of(reinterpret_cast<const void *>(&on_sample_signal), &g_cpu.agent_lo, &g_cpu.agent_hi);
  function_extent(dlsym(RTLD_NEXT, "malloc_usable_size"), &g_cpu.size_query_lo, &g_cpu.size_query_hi);
  static bool keyed = false;  // (attached again: the key is made once)
  if (!keyed) keyed = pthread_key_create(&g_thread_key, unregister_thread) == 0;
  reset_counts();
  g_cpu.handler = handler;
  struct sigaction sa {};
  sa.sa_sigaction = handler;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&sa.sa_mask);
  if (real_sigaction(g_cpu.sig, &sa, nullptr) != 0) {
    say("cannot catch PROF_CPU_SIGNAL (", errno_text(errno), "); CPU profiling disabled");
    return false;
  }
  // A mask inherited blocking it (a parent's, posix_spawn's) would hold
  // back every sample: threads made from here on inherit this one's.
  sigset_t sampling;
  sigemptyset(&sampling);
  sigaddset(&sampling, g_cpu.sig);
  real_sigmask(SIG_UNBLOCK, &sampling, nullptr);
  if (!begin(cfg.cpu_backend, getppid(), first)) {
    real_sigaction(g_cpu.sig, &old, nullptr);
    return false;
  }
  g_cpu.view = old;
  g_cpu.holds_signal.store(true, std::memory_order_release);
  return true;
}

void register_sampled_thread() {
  if (!cpu_sampler_on()) return;
  GuardScope guard;
  if (!register_thread(nullptr)) g_cpu.arm_failures.fetch_add(1, std::memory_order_relaxed);
}

void restart_cpu_sampler_in_child() {
  g_cpu.on.store(false);
  if (!sysprof_stream::is_open()) return;
  sysprof_stream::forget_in_child();
  // The parent's clocks: perf fds were inherited (close ours), POSIX timers
  // and the itimer were not.
  sample_slots::for_each([](SampleSlot &s) {
    if (s.perf_fd >= 0) close_perf_event(&s);
  });
  sample_slots::reset_in_child();
  t_sample_slot = nullptr;
  pthread_mutex_init(&g_clocks_mutex, nullptr);
  if (!g_agent.cfg.follow_children) {
    if (restore_ignored_signal()) g_cpu.holds_signal.store(false);
    return;
  }
  disarm_process(g_cpu.backend);
  reset_counts();
  begin(CpuBackend(uint8_t(g_cpu.backend)), getppid());  // the parent's choice
}

void finish_cpu_stream() {
  // A vfork child shares our memory and must leave the parent's stream be
  // (its signal dispositions are its own).
  if (getpid() != sysprof_stream::owner_pid()) {
    restore_ignored_signal();
    return;
  }
  if (!sysprof_stream::is_open()) return;
  GuardScope guard;
  if (g_cpu.on.exchange(false)) {
    disarm_all();
    if (SampleSlot *own = t_sample_slot) weigh_thread_tail(*own);
  }
  if (restore_ignored_signal()) g_cpu.holds_signal.store(false);
  uint64_t dropped = 0;
  sample_slots::for_each([&](SampleSlot &s) { dropped += s.dropped.load(); });
  const ext::StatView stats[] = {
      {"cpu_samples", g_cpu.samples.load()},
      {"cpu_samples_dropped", dropped},
      {"cpu_samples_unregistered_thread", g_cpu.unregistered.load()},
      {"cpu_samples_in_agent", g_cpu.in_agent.load()},
      {"cpu_stacks_cut", g_cpu.stacks_cut.load()},
      {"cpu_guest_stacks_cut", g_cpu.guest_stacks_cut.load()},
      {"cpu_unwind_fallbacks", g_cpu.unwind_fallbacks.load()},
      {"cpu_foreign_signals", g_cpu.foreign_signals.load()},
      {"cpu_samples_on_small_alt_stack", g_cpu.on_small_stack.load()},
      {"cpu_thread_arm_failures", g_cpu.arm_failures.load()},
      {"cpu_thread_clocks_closed", g_cpu.clocks_closed.load()},
      {"unwind_unregistered_objects", SignalUnwind::unregistered_objects()},
  };
  sysprof_stream::finish(stats);
}

void stop_cpu_sampler() {
  struct sigaction now {};
  real_sigaction(g_cpu.sig, nullptr, &now);
  finish_cpu_stream();
  g_cpu.on.store(false);
  disarm_all();  // (finish_cpu_stream() leaves them when a write failure stopped it)
  if (g_cpu.holds_signal.exchange(false) && now.sa_sigaction == g_cpu.handler) {
    // XXX: a sample's signal may still wait on a thread (raised as its
    // clock closed, or blocked there): ignoring the signal discards it
    // wherever it waits, before the program's disposition comes back.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    real_sigaction(g_cpu.sig, &ignore, nullptr);
    real_sigaction(g_cpu.sig, &g_cpu.view, nullptr);
  }
  sample_slots::for_each([](SampleSlot &s) {
    if (s.state.load(std::memory_order_acquire) == SampleSlot::Live) sample_slots::release(&s);
  });
}

void yield_sampling_signal(const char *what) {
  g_cpu.holds_signal.store(false, std::memory_order_release);
  if (!g_cpu.on.exchange(false)) return;
  disarm_all();
  char num[8];
  snprintf(num, sizeof num, "%d", g_cpu.sig);
  say("the program ", what, " signal ", num, "; CPU profiling stopped "
      "(PROF_CPU_SIGNAL picks another signal)");
}

void cpu_modules_changed() {
  if (!cpu_sampler_on()) return;
  SignalBlock block;
  SignalUnwind::sync_tables();
  sysprof_stream::flush_all(true);
}

}  // namespace prof
