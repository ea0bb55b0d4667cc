// The CPU sampler: every `interval` of a thread's CPU time its clock
// (timer.h) signals it; the handler (handler.cpp) captures
// the host stack from the signal's context and the guest stack from the
// registered backtracer and encodes a sysprof sample into the thread's slot
// (slots.h), from which it reaches the process's ".sysprof" file
// (stream.h) with the guest symbols and the module changes.
//
// Invariants:
// - The handler allocates nothing, takes no lock and uses no stdio; it works
//   only on its own thread's slot and on atomics.
// - A sample that interrupts the agent itself (the thread's guard is set:
//   an allocation hook, perhaps inside libunwind, which is not re-entrant)
//   carries one address of the agent's (the analyzer's "[libprof]") above
//   the program's frames that called into the agent: the rule walk alone
//   finds them, those above where the guard began; and the guest stack, as
//   any sample (the backtracer may be interrupting itself: libprof.h).
// - Threads started with pthread_create are registered before their start
//   routine runs, and unregistered when they exit. The sampler starts no
//   thread of its own (stream.h says why).
// - On any failure the sampler prints one line and switches itself off,
//   leaving the program's signal disposition as it found it.
#pragma once

#include <atomic>
#include <csignal>
#include <cstdint>

#include "config.h"
#include "cpu/slots.h"
#include "cpu/timer.h"

namespace prof {

struct CpuSampler {
  std::atomic<bool> on{false};
  SamplerBackend backend = SamplerBackend::Perf;
  CpuMode mode = CpuMode::Callgraph;
  int sig = SIGPROF;
  // The agent's handler is on sig (until the program takes the signal), and
  // what the program has there in its own view: SIG_DFL or SIG_IGN, as it
  // found it or set it since (signal_hooks.cpp).
  std::atomic<bool> holds_signal{false};
  struct sigaction view {};
  void (*handler)(int, siginfo_t *, void *) = nullptr;  // the one installed
  uint64_t interval_ns = 1000000;
  int max_depth = 128;
  uint64_t agent_lo = 0, agent_hi = 0;  // the agent's own object
  // malloc_usable_size, which the hooks call for the heap count outside
  // the guard: a sample there is the agent's cost.
  uint64_t size_query_lo = 0, size_query_hi = 0;
  // Counted for the stats record.
  std::atomic<uint64_t> samples{0};        // signals that became records
  std::atomic<uint64_t> unregistered{0};   // signals on a thread without a slot
  std::atomic<uint64_t> in_agent{0};       // samples that interrupted the agent
  std::atomic<uint64_t> stacks_cut{0};     // host stacks that ended early
  std::atomic<uint64_t> guest_stacks_cut{0};  // guest stacks cut at their limit
  std::atomic<uint64_t> unwind_fallbacks{0};  // host stacks the rule walk left to libunwind
  std::atomic<uint64_t> foreign_signals{0};  // the signal, not from our clock
  std::atomic<uint64_t> on_small_stack{0};   // on an alternate stack without room for one
  std::atomic<uint64_t> arm_failures{0};   // threads whose clock could not be armed
  std::atomic<uint64_t> clocks_closed{0};  // thread clocks (perf) the program closed
};

extern CpuSampler g_cpu;

// The calling thread's slot (initial-exec TLS: read in the handler).
extern __thread SampleSlot *t_sample_slot __attribute__((tls_model("initial-exec")));

void on_sample_signal(int sig, siginfo_t *info, void *ucontext);
// On slot's thread as it ends (its signal blocked): the CPU time since its
// last sample, which the tick-driven clocks may not have signalled yet, is
// charged to that sample's stack again.
void weigh_thread_tail(SampleSlot &slot);

// Lifecycle (lifecycle.cpp, the thread and exec hooks).
bool start_cpu_sampler();
// Attached (attach/): `handler` on the signal and the clock of `first`'s
// thread armed, choosing the backend; no thread registered through TLS.
bool start_cpu_sampler(void (*handler)(int, siginfo_t *, void *), SampleSlot *first);
// Detached: the stream finished, every clock disarmed and every slot free,
// the signal's disposition the program's again. Its handler must be idle.
void stop_cpu_sampler();
void register_sampled_thread();
void restart_cpu_sampler_in_child();
void finish_cpu_stream();
void cpu_modules_changed();
// The program takes the sampling signal for itself (`what` it does: "sets
// its own handler for", "waits for"): sampling stops (one line on stderr)
// and the program gets the signal as it asked; the stream is still finished
// at exit.
void yield_sampling_signal(const char *what);
inline bool cpu_sampler_on() { return g_cpu.on.load(std::memory_order_relaxed); }
// Whether sig is the sampling signal, its handler still the agent's.
inline bool sampler_holds(int sig) {
  return sig == g_cpu.sig && g_cpu.holds_signal.load(std::memory_order_acquire);
}

}  // namespace prof
