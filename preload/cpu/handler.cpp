// The sampling signal's handler: one sysprof sample of the interrupted
// thread into its slot. Async-signal-safe (sampler.h).
#include <cerrno>
#include <cstring>

#include "agent.h"
#include "ext.h"
#include "guest_registry.h"
#include "program_signals.h"
#include "cpu/sampler.h"
#include "cpu/stream.h"
#include "signal_unwind.h"
#include "stream_writer.h"
#include "sysprof.h"
#include "thread_state.h"

namespace prof {

__thread SampleSlot *t_sample_slot __attribute__((tls_model("initial-exec")));

namespace {

int guest_frames_wanted(CpuMode mode) {
  switch (mode) {
    case CpuMode::Leaf: return 1;
    case CpuMode::Callgraph: return int(SampleSlot::kMaxGuestFrames);
    default: return 0;
  }
}

// The VM state as sysprof writes it: NATIVE when no guest runs here.
uint8_t stream_vmstate(int vmstate) {
  if (vmstate < 0) return kVmstNative;
  return vmstate <= kVmstTrace ? uint8_t(vmstate) : uint8_t(kVmstInterp);
}

void put_sample(SpanWriter &out, const SampleSlot &s, uint8_t vmstate, int guest, int host) {
  if (vmstate == kVmstTrace) {
    // A JIT trace: the guest names its number, then its prototype and
    // line, if it can (libprof.h, PROF_FRAME_TRACE), then its callers.
    const bool numbered = guest > 0 && s.guest[0].type == PROF_FRAME_TRACE;
    const int at = numbered ? 1 : 0;
    const bool named = guest > at && s.guest[at].type == PROF_FRAME_LFUNC;
    const ext::TraceSample trace{numbered ? s.guest[0].addr : 0, named ? s.guest[at].addr : 0,
                                 named ? s.guest[at].line : 0};
    const int callers = named ? at + 1 : at;
    if (host == 0 && guest <= callers) {
      put_sysprof_trace(out, trace.traceno, trace.addr, trace.line);  // as LuaJIT writes it
      return;
    }
    put_ext(out, trace);
    put_sysprof_stacks(out, kVmstLfunc, Span<prof_guest_frame>(s.guest + callers, size_t(guest - callers)),
                       Span<uint64_t>(s.ips, size_t(host)));
    return;
  }
  // XXX: sysprof's samples in the VM's own states (GC, a trace exit, the
  // JIT compiler's) have no guest stack: one that keeps the stack the VM
  // interrupted is a guest sample labelled with that state (ext.h).
  if (!vmstate_has_guest(vmstate) && guest > 0) {
    put_ext(out, ext::VmState{vmstate});
    vmstate = kVmstLfunc;
  }
  put_sysprof_stacks(out, vmstate, Span<prof_guest_frame>(s.guest, size_t(guest)),
                     Span<uint64_t>(s.ips, size_t(host)));
}

bool in_agent_code(uint64_t ip) { return ip >= g_cpu.agent_lo && ip < g_cpu.agent_hi; }

// Leaves out the agent's frames but the innermost: the interposers the
// program called through (a hook calling the real malloc) are transparent.
int drop_agent_callers(uint64_t *ips, int n) {
  int kept = n > 0 ? 1 : 0;
  for (int i = 1; i < n; i++)
    if (!in_agent_code(ips[i])) ips[kept++] = ips[i];
  return kept;
}

// A sample in the allocator's size query that a hook made for the heap
// count (outside the guard, memory/hooks.cpp) is the agent's: its frames
// below the hook become the one agent frame. True if so.
bool in_agent_size_query(uint64_t *ips, int n) {
  for (int i = 1; i < n; i++) {
    if (!in_agent_code(ips[i])) continue;
    if (ips[i - 1] < g_cpu.size_query_lo || ips[i - 1] >= g_cpu.size_query_hi) return false;
    for (int j = 0; j < i; j++) ips[j] = reinterpret_cast<uint64_t>(&on_sample_signal);
    return true;
  }
  return false;
}

// The host stack of a sample that interrupted the agent, which set its
// guard at stack pointer `guard`: one address of the agent's, then the
// program's frames that called into it. Where none can be walked out of
// the agent, they are walked from the call into it, if the agent knows it.
int agent_sample_stack(SampleSlot &s, void *ucontext, uintptr_t guard, int max, bool *cut) {
  s.ips[0] = reinterpret_cast<uint64_t>(&on_sample_signal);
  if (max <= 1) return 1;
  uint64_t *callers = s.ips + 1;
  int n = drop_agent_callers(s.ips, 1 + SignalUnwind::capture_callers(ucontext, guard, callers, max - 1, &s.walk, cut));
  if (n == 1 && t_state.entered_from.ip != 0) {
    n = drop_agent_callers(s.ips, 1 + SignalUnwind::capture_from_call(t_state.entered_from, callers, max - 1, &s.walk, cut));
    *cut = true;  // (a stack from elsewhere than the interrupted state)
  }
  return n;
}

void sample(SampleSlot &s, void *ucontext) {
  const uint64_t weight = sample_weight(&s, g_cpu.interval_ns);
  if (g_agent.paused.load(std::memory_order_relaxed)) return;
  SpanWriter out(s.record);
  if (weight != 1) put_ext(out, ext::Weight{weight});

  const CpuMode mode = g_cpu.mode;
  // (Read before this handler sets the guard itself.)
  const uintptr_t agent_guard = t_state.guard;
  const bool in_agent = agent_guard != 0;
  // What libunwind or the guest maps or allocates from here is the agent's.
  GuardScope guard;
  int vmstate = -1, guest = 0;
  if (guest_registered()) {
    const int wanted = guest_frames_wanted(mode);
    // (A JIT trace's sample takes two frames: its number, where it started.)
    const int asked = wanted == 1 ? 2 : wanted;
    guest = guest_backtrace_interrupted(s.guest, asked, &vmstate, ucontext);
    if (guest < 0) guest = 0;
    const int kept = vmstate == PROF_VMST_TRACE ? asked : wanted;
    if (guest > kept) guest = kept;
    if (guest_stack_cut(s.guest, guest))
      g_cpu.guest_stacks_cut.fetch_add(1, std::memory_order_relaxed);
  }
  int host = 0;
  if (in_agent) {
    g_cpu.in_agent.fetch_add(1, std::memory_order_relaxed);
    if (mode != CpuMode::Default) {
      bool cut = false;
      host = agent_sample_stack(s, ucontext, agent_guard, mode == CpuMode::Leaf ? 1 : g_cpu.max_depth, &cut);
      if (cut) g_cpu.stacks_cut.fetch_add(1, std::memory_order_relaxed);
    }
  } else if (mode != CpuMode::Default) {
    bool cut = false, fell_back = false;
    host = SignalUnwind::capture(ucontext, s.ips, mode == CpuMode::Leaf ? 1 : g_cpu.max_depth,
                                 &s.walk, g_agent.cfg.rule_walk, &cut, &fell_back);
    if (in_agent_size_query(s.ips, host)) g_cpu.in_agent.fetch_add(1, std::memory_order_relaxed);
    host = drop_agent_callers(s.ips, host);
    if (cut) g_cpu.stacks_cut.fetch_add(1, std::memory_order_relaxed);
    if (fell_back) g_cpu.unwind_fallbacks.fetch_add(1, std::memory_order_relaxed);
  }
  s.last_sample_at = out.size();  // kept for weigh_thread_tail()
  put_sample(out, s, stream_vmstate(vmstate), guest, host);
  s.last_sample_end = out.size();
  s.push(out.data(), out.size());
  g_cpu.samples.fetch_add(1, std::memory_order_relaxed);
  sysprof_stream::flush_from_handler(s, SampleSlot::kFlushBytes);
}

}  // namespace

void weigh_thread_tail(SampleSlot &s) {
  const uint64_t w = unweighed_intervals(&s, g_cpu.interval_ns);
  if (w == 0 || s.last_sample_end == 0) return;
  uint8_t weight[ext::Weight::kMaxBytes];
  SpanWriter out(weight);
  put_ext(out, ext::Weight{w});
  // One record, built in the slot's scratch (no handler runs now): the
  // weight, then the last sample again.
  const size_t len = s.last_sample_end - s.last_sample_at;
  memmove(s.record + out.size(), s.record + s.last_sample_at, len);
  memcpy(s.record, out.data(), out.size());
  s.last_sample_at = out.size();
  s.last_sample_end = out.size() + len;
  s.push(s.record, s.last_sample_end);
  g_cpu.samples.fetch_add(1, std::memory_order_relaxed);  // a sample record too
}

namespace {

// Whether the handler runs on an alternate signal stack (a program's
// handler the trampoline did not run was interrupted there) with less room
// left than a sample takes (about 5 KiB).
bool on_small_alternate_stack() { return alternate_stack_room() < 8192; }

}  // namespace

void on_sample_signal(int, siginfo_t *info, void *ucontext) {
  const ErrnoKept errno_kept;
  SampleSlot *slot = t_sample_slot;
  if (!g_cpu.on.load(std::memory_order_relaxed)) {
    // Switched off: late signals of a clock being stopped are absorbed.
  } else if (!is_sampler_signal(g_cpu.backend, info, slot)) {
    g_cpu.foreign_signals.fetch_add(1, std::memory_order_relaxed);
  } else if (!slot) {
    g_cpu.unregistered.fetch_add(1, std::memory_order_relaxed);
  } else if (on_small_alternate_stack()) {
    g_cpu.on_small_stack.fetch_add(1, std::memory_order_relaxed);
  } else {
    sample(*slot, ucontext);
  }
}

}  // namespace prof
