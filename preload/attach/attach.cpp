// prof_attach_start() and prof_attach_stop(): the agent's life when gdb
// dlopens it into a running process (attach.h). The settings come from the
// injector; CPU samples of every thread, found in /proc/self/task; the
// allocator's calls through the GOT rewrite (got_rewrite.h).
#include <atomic>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent.h"
#include "attach/attach.h"
#include "attach/got_rewrite.h"
#include "attach/lua_states.h"
#include "config.h"
#include "memory/hooks.h"
#include "cpu/sampler.h"
#include "program_signals.h"
#include "thread_state.h"

namespace prof {
namespace {

std::atomic<bool> g_attached{false};
std::atomic<int> g_in_handler{0};   // sampling handlers running now
std::atomic<bool> g_scanning{false};  // the one thread scanning /proc/self/task
std::atomic<uint64_t> g_next_scan_ns{0};  // CLOCK_MONOTONIC_COARSE
pid_t g_attached_pid = 0;  // (a fork child is not attached: it has no clocks)
char g_error[200];
// The thread runs the handler (gdb may stop it there to call prof_attach_stop).
__thread bool t_in_handler __attribute__((tls_model("initial-exec")));

uint64_t coarse_now_ns() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
}

// Threads started since the last scan are found by the next one, at most
// every 100 ms from whichever thread is sampled.
void scan_if_due() {
  constexpr uint64_t kPeriodNs = 100000000;
  const uint64_t now = coarse_now_ns();
  uint64_t due = g_next_scan_ns.load(std::memory_order_relaxed);
  if (now < due || !g_next_scan_ns.compare_exchange_strong(due, now + kPeriodNs)) return;
  if (getpid() != g_attached_pid || g_scanning.exchange(true, std::memory_order_acquire)) return;
  if (g_attached.load(std::memory_order_acquire)) attached_threads::scan();
  g_scanning.store(false, std::memory_order_release);
}

}  // namespace
}  // namespace prof

// (Named for prof-run's gdb script, which lets a thread it stopped in here
// return before asking it to stop the recording.)
extern "C" __attribute__((visibility("default"))) void prof_attach_signal_handler(
    int sig, siginfo_t *info, void *ucontext) {
  using namespace prof;
  t_in_handler = true;
  g_in_handler.fetch_add(1, std::memory_order_acq_rel);
  if (g_attached.load(std::memory_order_acquire)) {
    const ErrnoKept errno_kept;
    // (The handler finds its thread's slot through TLS: set for this signal only.)
    t_sample_slot = attached_threads::slot_of(uint64_t(syscall(SYS_gettid)));
    on_sample_signal(sig, info, ucontext);
    t_sample_slot = nullptr;
    scan_if_due();
  }
  g_in_handler.fetch_sub(1, std::memory_order_release);
  t_in_handler = false;
}

namespace prof {
namespace {

// The settings, one assignment a line, as an environment for parse_config().
bool parse_settings(const char *settings, Config *cfg) {
  static char text[4096];
  static char *lines[64];
  strncpy(text, settings ? settings : "", sizeof text - 1);
  text[sizeof text - 1] = 0;
  size_t n = 0;
  for (char *p = text; *p && n + 1 < sizeof lines / sizeof lines[0];) {
    lines[n++] = p;
    char *end = strchr(p, '\n');
    if (!end) break;
    *end = 0;
    p = end + 1;
  }
  lines[n] = nullptr;
  return parse_config(lines, cfg);
}

int fail(int result, const char *why) {
  strncpy(g_error, why, sizeof g_error - 1);
  return result;
}

}  // namespace
}  // namespace prof

using namespace prof;

namespace {

#ifndef PROF_CPU_ONLY
// XXX: a child the program forks while attached inherits the rewritten GOT
// and the parent's ring, which is not its own: it records nothing, its calls
// passed on by the hooks, the agent off.
void leave_fork_child_unrecorded() { g_agent.on.store(false, std::memory_order_relaxed); }
#endif

// Memory from now on: a new stream, then the GOT entries that bring the
// allocator's calls to the hooks.
int start_memory() {
#ifdef PROF_CPU_ONLY
  return kAttachStarted;  // (libprof-cpu.so has no hooks: the settings said no memory)
#else
  resolve_real_functions_in_program();
  static bool fork_handled = false;
  if (!fork_handled) fork_handled = pthread_atfork(nullptr, nullptr, leave_fork_child_unrecorded) == 0;
  if (!open_attached_memory_stream())
    return fail(kAttachMemoryFailed, "the memory stream could not be opened (the program's stderr says why)");
  got_rewrite::install(g_agent.cfg.mmap);
  return kAttachStarted;
#endif
}

void stop_memory() {
#ifndef PROF_CPU_ONLY
  // The calls go to libc again first, then the stream ends: a call already
  // in a hook finds the agent off (or its record dropped at the end).
  got_rewrite::restore();
  finish_attached_memory_stream();
#endif
}

}  // namespace

int prof_attach_start(const char *settings) {
  const ErrnoKept errno_kept;
  g_error[0] = 0;
  if (loaded_with_program()) return fail(kAttachWithProgram, "the agent came with the program");
  if (getauxval(AT_SECURE)) return fail(kAttachSecure, "secure execution (setuid/setgid)");
  if (g_attached.load()) return fail(kAttachAlready, "attached already");
  GuardScope guard;
  Config cfg;
  if (!parse_settings(settings, &cfg)) return fail(kAttachBadSettings, cfg.error);
#ifdef PROF_CPU_ONLY
  cfg.memory = false;
#endif
  if (cfg.cpu == CpuMode::Off) cfg.cpu = CpuMode::Callgraph;
  g_agent.cfg = cfg;
  g_agent.start_ns = monotonic_ns();
  g_agent.attach_number++;
  claim_signal_table();
  g_attached_pid = getpid();
  if (cfg.memory && start_memory() != kAttachStarted) return kAttachMemoryFailed;
  SampleSlot *first = sample_slots::claim(uint64_t(syscall(SYS_gettid)));
  if (!first) {
    if (cfg.memory) stop_memory();
    return fail(kAttachCpuFailed, "cannot map a thread's sample slot");
  }
  // (Before the sampling: the adapter's check runs Lua on a scratch state.)
  attached_lua::start(cfg.lua, cfg.memory);
  if (!start_cpu_sampler(prof_attach_signal_handler, first)) {
    attached_lua::stop();
    sample_slots::release(first);
    if (cfg.memory) stop_memory();
    return fail(kAttachCpuFailed, "the CPU sampler did not start (the program's stderr says why)");
  }
  while (g_scanning.exchange(true, std::memory_order_acquire)) sched_yield();
  attached_threads::adopt(first);
  g_attached.store(true, std::memory_order_release);
  attached_threads::scan();
  g_next_scan_ns.store(coarse_now_ns() + 100000000, std::memory_order_relaxed);
  g_scanning.store(false, std::memory_order_release);
  return kAttachStarted;
}

int prof_attach_stop(void) {
  const ErrnoKept errno_kept;
  // XXX: called on a thread stopped inside the handler, the stop would wait
  // for that handler to end, which it cannot: it must return first.
  if (t_in_handler) return kDetachBusy;
  if (!g_attached.exchange(false)) return kDetachNone;
  GuardScope guard;
  if (g_agent.cfg.memory) stop_memory();
  while (g_in_handler.load(std::memory_order_acquire) != 0) sched_yield();
  attached_lua::stop();
  while (g_scanning.exchange(true, std::memory_order_acquire)) sched_yield();
  stop_cpu_sampler();
  attached_threads::forget();
  g_scanning.store(false, std::memory_order_release);
  return kDetachStopped;
}

const char *prof_attach_error(void) { return g_error; }

const char *prof_attach_lua_status(void) { return attached_lua::status(); }
