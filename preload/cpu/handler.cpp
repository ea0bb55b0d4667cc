// The sampling signal's handler: one sysprof sample of the interrupted
// thread into its slot. Async-signal-safe (sampler.h).
#include <cerrno>
#include <cstring>
#include <ucontext.h>

#include "agent.h"
#include "ext.h"
#include "guest_registry.h"
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
    // A JIT trace: the guest names its prototype and line, if it can.
    const bool named = guest > 0 && s.guest[0].type == PROF_FRAME_LFUNC;
    put_sysprof_trace(out, 0, named ? s.guest[0].addr : 0, named ? s.guest[0].line : 0);
    return;
  }
  // XXX: sysprof's GC sample has no guest stack: one that keeps the stack
  // the collector interrupted is a guest sample labelled GC (ext.h).
  if (vmstate == kVmstGc && guest > 0) {
    put_ext(out, ext::VmState{kVmstGc});
    vmstate = kVmstLfunc;
  }
  put_sysprof_stacks(out, vmstate, Span<prof_guest_frame>(s.guest, size_t(guest)),
                     Span<uint64_t>(s.ips, size_t(host)));
}

void sample(SampleSlot &s, void *ucontext) {
  const uint64_t weight = sample_weight(&s, g_cpu.interval_ns);
  if (g_agent.paused.load(std::memory_order_relaxed)) return;
  SpanWriter out(s.record);
  if (weight != 1) put_ext(out, ext::Weight{weight});

  const CpuMode mode = g_cpu.mode;
  const bool in_agent = t_state.guard;
  // What libunwind or the guest maps or allocates from here is the agent's.
  GuardScope guard;
  int vmstate = -1, guest = 0;
  if (!in_agent && guest_registered()) {
    const int wanted = guest_frames_wanted(mode);
    guest = guest_backtrace(s.guest, wanted, &vmstate);
    if (guest < 0) guest = 0;
    if (guest > wanted) guest = wanted;
  }
  int host = 0;
  if (in_agent) {
    g_cpu.in_agent.fetch_add(1, std::memory_order_relaxed);
    if (mode != CpuMode::Default) {
      s.ips[0] = uint64_t(static_cast<const ucontext_t *>(ucontext)->uc_mcontext.gregs[REG_RIP]);
      host = 1;
    }
  } else if (mode != CpuMode::Default) {
    bool cut = false, fell_back = false;
    host = SignalUnwind::capture(ucontext, s.ips, mode == CpuMode::Leaf ? 1 : g_cpu.max_depth,
                                 g_agent.cfg.rule_walk ? &s.walk : nullptr, &cut, &fell_back);
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

void on_sample_signal(int, siginfo_t *info, void *ucontext) {
  const int saved_errno = errno;
  SampleSlot *slot = t_sample_slot;
  if (!g_cpu.on.load(std::memory_order_relaxed)) {
    // Switched off: late signals of a clock being stopped are absorbed.
  } else if (!is_sampler_signal(g_cpu.backend, info, slot)) {
    g_cpu.foreign_signals.fetch_add(1, std::memory_order_relaxed);
  } else if (!slot) {
    g_cpu.unregistered.fetch_add(1, std::memory_order_relaxed);
  } else {
    sample(*slot, ucontext);
  }
  errno = saved_errno;
}

}  // namespace prof
