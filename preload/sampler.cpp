// The CPU sampler's life and its writer thread: the ".sysprof" stream is
// opened at start (and again in a forked child), fed every few milliseconds
// from the threads' slots, and closed with the stats and the epilogue.
#include "sampler.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "ext.h"
#include "guest_registry.h"
#include "module_map.h"
#include "output_file.h"
#include "prologue.h"
#include "signal_unwind.h"
#include "stream_writer.h"
#include "symtab.h"
#include "sysprof.h"
#include "thread_state.h"

namespace prof {

CpuSampler g_cpu;

namespace {

constexpr long kDrainEveryNs = 10000000;

int g_fd = -1;
pid_t g_stream_pid = 0;
std::atomic<bool> g_stream_open{false};  // finish_cpu_stream() has work to do
char g_path[600];
pthread_t g_writer;
std::atomic<bool> g_writer_running{false};
// The writer's state (the writer thread, or finish_cpu_stream() after it).
uint8_t g_out_buf[1 << 16];
StreamWriter *g_out = nullptr;
ModuleMap g_modules;
GuestSymbolCursor g_symbols;
uint64_t g_last_tid = 0;  // the thread of the samples written last
std::atomic<uint64_t> g_modules_generation{0};
uint64_t g_modules_written = UINT64_MAX;
// Unloads wait until the samples taken before them are written.
uint64_t g_unloads[256];
size_t g_unload_count = 0;
// Arming and disarming clocks of other threads (never in the handler).
pthread_mutex_t g_clocks_mutex = PTHREAD_MUTEX_INITIALIZER;
pthread_key_t g_thread_key;

uint64_t gettid_now() { return uint64_t(syscall(SYS_gettid)); }

// Blocks the sampling signal on the calling thread for a scope.
class SignalBlock {
 public:
  SignalBlock() {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, g_cpu.sig);
    pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~SignalBlock() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

void write_module(const ModuleInfo &m, void *) {
  put_module_load(*g_out, m.base, m.size, m.path, strlen(m.path), m.build_id, m.build_id_len);
}
void defer_unload(uint64_t base, void *) {
  if (g_unload_count < sizeof g_unloads / sizeof g_unloads[0]) g_unloads[g_unload_count++] = base;
}

// Guest symbols as sysprof's sample-symtab records.
void write_symbol(const GuestSymbol &g) {
  g_out->put_u8(uint8_t(kSysprofSymLfunc + (g.type == kSymCfunc ? kSymCfunc : kSymLfunc)));
  g_out->put_uleb(g.addr);
  g_out->put_string(g.name, g.name_len);
  if (g.type != kSymCfunc) g_out->put_uleb(g.line);
}

void write_slot(SampleSlot &s) {
  if (s.head.load(std::memory_order_acquire) == s.tail.load(std::memory_order_relaxed)) return;
  if (s.tid != g_last_tid) {
    put_ext_values(*g_out, ExtKind::Thread, s.tid);
    g_last_tid = s.tid;
  }
  s.drain([](const uint8_t *p, size_t n) { g_out->put_bytes(p, n); });
}

// One round: new modules and symbols first (samples may use them), then
// every slot's samples, then the unloads.
void drain_once() {
  const uint64_t generation = g_modules_generation.load(std::memory_order_acquire);
  if (generation != g_modules_written) {
    g_modules_written = generation;
    g_modules.sync(write_module, defer_unload, nullptr);
  }
  g_symbols.drain(write_symbol);
  sample_slots::for_each([](SampleSlot &s) {
    const int state = s.state.load(std::memory_order_acquire);
    if (state == SampleSlot::Free) return;
    write_slot(s);
    int exited = SampleSlot::Exited;
    if (state == SampleSlot::Exited)
      s.state.compare_exchange_strong(exited, SampleSlot::Free, std::memory_order_release);
  });
  for (size_t i = 0; i < g_unload_count; i++) put_ext_values(*g_out, ExtKind::ModuleUnload, g_unloads[i]);
  g_unload_count = 0;
}

void disarm_all() {
  pthread_mutex_lock(&g_clocks_mutex);
  sample_slots::for_each([](SampleSlot &s) {
    if (s.state.load(std::memory_order_acquire) == SampleSlot::Live) disarm_thread(g_cpu.backend, &s);
  });
  disarm_process(g_cpu.backend);
  pthread_mutex_unlock(&g_clocks_mutex);
}

// After a write error: stop sampling; the stream ends where it failed.
void fail_writing() {
  if (!g_cpu.on.exchange(false)) return;
  disarm_all();
  say("cannot write ", g_path, ": ", strerror(g_out->saved_errno()), "; CPU profiling disabled");
}

void *writer_main(void *) {
  t_state.guard = true;  // nothing this thread allocates is the program's
  while (g_writer_running.load(std::memory_order_acquire)) {
    timespec t{0, kDrainEveryNs};
    nanosleep(&t, nullptr);
    drain_once();
    g_out->flush();
    if (g_out->failed()) fail_writing();
  }
  return nullptr;
}

bool start_writer() {
  // The writer inherits a mask that blocks every signal: it is never sampled
  // and never takes the program's signals.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  g_writer_running.store(true);
  const bool ok = pthread_create(&g_writer, nullptr, writer_main, nullptr) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!ok) g_writer_running.store(false);
  return ok;
}

// Creates this process's ".sysprof" file and writes what precedes samples.
bool open_stream(pid_t ppid) {
  g_fd = create_output_file(g_agent.cfg.output, getpid(), "sysprof", g_path, sizeof g_path);
  if (g_fd < 0) {
    say("cannot create ", g_path, ": ", strerror(errno), "; CPU profiling disabled");
    return false;
  }
  g_stream_pid = getpid();
  static StreamWriter out(g_out_buf, sizeof g_out_buf, fd_sink, nullptr);
  out = StreamWriter(g_out_buf, sizeof g_out_buf, fd_sink, reinterpret_cast<void *>(intptr_t(g_fd)));
  g_out = &out;
  put_prologue(out, SectionKind::Symtab, false);
  put_symtab_final(out);
  put_prologue(out, SectionKind::Sysprof, true);
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  put_process(out, uint64_t(getpid()), uint64_t(ppid),
              uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec), exe, n > 0 ? size_t(n) : 0);
  static const uint8_t kModes[] = {0, 0, 1, 2};  // CpuMode -> the record's mode
  put_ext_values(out, ExtKind::Sampler, uint64_t(g_cpu.backend), kModes[uint8_t(g_cpu.mode)],
                 g_cpu.interval_ns);
  g_modules.reset();
  g_modules_written = UINT64_MAX;
  g_symbols = GuestSymbolCursor();
  g_last_tid = 0;
  g_unload_count = 0;
  drain_once();
  if (!out.flush()) {
    say("cannot write ", g_path, ": ", strerror(out.saved_errno()), "; CPU profiling disabled");
    close(g_fd);
    g_fd = -1;
    return false;
  }
  return true;
}

void unregister_thread(void *p) {
  auto *slot = static_cast<SampleSlot *>(p);
  SignalBlock block;
  t_sample_slot = nullptr;
  pthread_mutex_lock(&g_clocks_mutex);
  disarm_thread(g_cpu.backend, slot);
  pthread_mutex_unlock(&g_clocks_mutex);
  sample_slots::retire(slot);
}

// Gives the calling thread a slot and arms its clock; with `pick`, chooses
// the backend on the way (the process's first thread).
bool register_thread(const CpuBackend *pick) {
  SampleSlot *slot = sample_slots::claim(gettid_now());
  if (!slot) return false;
  t_sample_slot = slot;
  pthread_mutex_lock(&g_clocks_mutex);
  const bool armed = pick ? pick_backend(*pick, g_cpu.sig, g_cpu.interval_ns, slot, &g_cpu.backend)
                          : arm_thread(g_cpu.backend, g_cpu.sig, g_cpu.interval_ns, slot);
  pthread_mutex_unlock(&g_clocks_mutex);
  if (!armed) {
    t_sample_slot = nullptr;
    sample_slots::retire(slot);
    return false;
  }
  pthread_setspecific(g_thread_key, slot);
  return true;
}

// Starts sampling on the calling thread, the process's first.
bool begin(CpuBackend wanted, pid_t ppid) {
  if (!register_thread(&wanted)) {
    say("no CPU clock could be armed (", strerror(errno), "); CPU profiling disabled");
    return false;
  }
  if (!open_stream(ppid) || !start_writer()) {
    disarm_all();
    if (g_fd >= 0) close(g_fd), g_fd = -1;
    return false;
  }
  g_stream_open.store(true);
  g_cpu.on.store(true, std::memory_order_release);
  return true;
}

}  // namespace

bool start_cpu_sampler() {
  const Config &cfg = g_agent.cfg;
  g_cpu.sig = cfg.cpu_signal ? cfg.cpu_signal : SIGPROF;
  g_cpu.mode = cfg.cpu;
  g_cpu.interval_ns = cfg.interval_ns;
  g_cpu.max_depth = int(cfg.max_depth);
  struct sigaction old {};
  sigaction(g_cpu.sig, nullptr, &old);
  if ((old.sa_flags & SA_SIGINFO) || (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
    char num[8];
    snprintf(num, sizeof num, "%d", g_cpu.sig);
    say("signal ", num, " already has a handler in this program; CPU profiling disabled "
        "(PROF_CPU_SIGNAL picks another)");
    return false;
  }
  SignalUnwind::init();
  pthread_key_create(&g_thread_key, unregister_thread);
  struct sigaction sa {};
  sa.sa_sigaction = on_sample_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&sa.sa_mask);
  sigaction(g_cpu.sig, &sa, nullptr);
  if (!begin(cfg.cpu_backend, getppid())) {
    sigaction(g_cpu.sig, &old, nullptr);
    return false;
  }
  return true;
}

void register_sampled_thread() {
  if (!cpu_sampler_on()) return;
  GuardScope guard;
  if (!register_thread(nullptr)) g_cpu.arm_failures.fetch_add(1, std::memory_order_relaxed);
}

void restart_cpu_sampler_in_child() {
  g_cpu.on.store(false);
  if (!g_stream_open.exchange(false)) return;
  if (g_fd >= 0) close(g_fd), g_fd = -1;
  // The parent's clocks: perf fds were inherited (close ours), POSIX timers
  // and the itimer were not.
  sample_slots::for_each([](SampleSlot &s) {
    if (s.perf_fd >= 0) close(s.perf_fd);
  });
  sample_slots::reset_in_child();
  t_sample_slot = nullptr;
  pthread_mutex_init(&g_clocks_mutex, nullptr);
  if (!g_agent.cfg.follow_children) return;
  disarm_process(g_cpu.backend);
  g_cpu.samples = 0, g_cpu.unregistered = 0, g_cpu.in_agent = 0, g_cpu.stacks_cut = 0;
  g_cpu.foreign_signals = 0, g_cpu.arm_failures = 0;
  begin(CpuBackend(uint8_t(g_cpu.backend)), getppid());  // the parent's choice
}

void finish_cpu_stream() {
  // A vfork child shares our memory and must leave the parent's stream be.
  if (getpid() != g_stream_pid || !g_stream_open.exchange(false)) return;
  GuardScope guard;
  if (g_cpu.on.exchange(false)) disarm_all();
  if (g_writer_running.exchange(false)) pthread_join(g_writer, nullptr);
  drain_once();
  uint64_t dropped = 0;
  sample_slots::for_each([&](SampleSlot &s) { dropped += s.dropped.load(); });
  const struct {
    const char *name;
    uint64_t value;
  } stats[] = {
      {"cpu_samples", g_cpu.samples.load()},
      {"cpu_samples_dropped", dropped},
      {"cpu_samples_unregistered_thread", g_cpu.unregistered.load()},
      {"cpu_samples_in_agent", g_cpu.in_agent.load()},
      {"cpu_stacks_cut", g_cpu.stacks_cut.load()},
      {"cpu_foreign_signals", g_cpu.foreign_signals.load()},
      {"cpu_thread_arm_failures", g_cpu.arm_failures.load()},
      {"unwind_unregistered_objects", SignalUnwind::unregistered_objects()},
  };
  put_stats_header(*g_out, sizeof stats / sizeof stats[0]);
  for (const auto &s : stats) put_stat(*g_out, s.name, strlen(s.name), s.value);
  put_sysprof_epilogue(*g_out);
  if (!g_out->flush())
    say("cannot write ", g_path, ": ", strerror(g_out->saved_errno()), "; the CPU profile is truncated");
  close(g_fd);
  g_fd = -1;
}

void yield_sampling_signal() {
  if (!g_cpu.on.exchange(false)) return;
  disarm_all();
  char num[8];
  snprintf(num, sizeof num, "%d", g_cpu.sig);
  say("the program sets its own handler for signal ", num, "; CPU profiling stopped "
      "(PROF_CPU_SIGNAL picks another signal)");
}

void cpu_modules_changed() {
  if (!cpu_sampler_on()) return;
  {
    SignalBlock block;
    SignalUnwind::sync_tables();
  }
  g_modules_generation.fetch_add(1, std::memory_order_release);
}

}  // namespace prof
