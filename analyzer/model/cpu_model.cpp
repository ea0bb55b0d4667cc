#include "model/cpu_model.h"

#include <algorithm>
#include <optional>

#include "model/thread_choice.h"

namespace prof {
namespace {

std::string sampler_text(const ext::Sampler &r) {
  static const char *const kBackends[] = {"unknown backend", "perf task-clock",
                                          "timer_create thread CPU clock", "ITIMER_PROF"};
  static const char *const kModes[] = {"DEFAULT", "LEAF", "CALLGRAPH"};
  return std::string(kBackends[r.backend < 4 ? r.backend : 0]) + ", " +
         (r.mode < 3 ? kModes[r.mode] : "unknown") + " mode, every " +
         std::to_string(r.interval_ns / 1000) + " us";
}

// A vm-state record's state, which its sample takes as its label.
int relabel_to(const ext::VmState &r, uint64_t offset) {
  if (r.vmstate >= kVmstCount || r.vmstate == kVmstTrace)
    throw FormatError(offset, false, "vm-state " + std::to_string(r.vmstate) + " names no VM state a sample can take");
  return int(r.vmstate);
}

}  // namespace

void CpuModel::read(StreamContext &ctx, CallTree &calls, const std::string &thread) {
  const ThreadChoice chosen(thread);
  uint64_t tid = 0, weight = 1;
  int vmstate = -1;  // the next sample's, from a vm-state record
  std::optional<ext::TraceSample> trace;  // the next sample's trace, from a trace-sample record
  uint64_t trace_at = 0;
  SysprofSample relabelled;
  ctx.read_sysprof([&](const SysprofSample &s) {
    if (s.record != SysprofRecord::Ext) {
      if (!chosen.chooses(tid, ctx.thread_name(tid))) {
        weight = 1;
        vmstate = -1;
        trace.reset();
        return;
      }
      if (trace) {
        if (!vmstate_has_guest(s.vmstate))
          throw FormatError(trace_at, false, "trace-sample record before a sample without a Lua stack");
        relabelled = s;
        relabelled.vmstate = kVmstTrace;
        relabelled.traceno = trace->traceno, relabelled.trace_addr = trace->addr;
        relabelled.trace_line = trace->line;
        add(ctx, calls, relabelled, double(weight), tid);
      } else if (vmstate >= 0 && s.vmstate != kVmstTrace) {
        relabelled = s;
        relabelled.vmstate = uint8_t(vmstate);
        add(ctx, calls, relabelled, double(weight), tid);
      } else {
        add(ctx, calls, s, double(weight), tid);
      }
      weight = 1;
      vmstate = -1;
      trace.reset();
      return;
    }
    if (const auto *t = std::get_if<ext::Thread>(&s.ext))
      tid = t->tid;
    else if (const auto *w = std::get_if<ext::Weight>(&s.ext))
      weight = w->sample_weight;
    else if (const auto *state = std::get_if<ext::VmState>(&s.ext))
      vmstate = relabel_to(*state, s.offset);
    else if (const auto *t = std::get_if<ext::TraceSample>(&s.ext))
      trace = *t, trace_at = s.offset;
    else if (const auto *sampler = std::get_if<ext::Sampler>(&s.ext))
      add_sampler(sampler_text(*sampler));
  });
}

void CpuModel::add_sampler(std::string text) {
  // The processes of one run share their settings: each is said once.
  if (std::find(samplers_.begin(), samplers_.end(), text) == samplers_.end())
    samplers_.push_back(std::move(text));
}

void CpuModel::add(StreamContext &ctx, CallTree &calls, const SysprofSample &s, double weight,
                   uint64_t tid) {
  samples_ += weight;
  by_vmstate_[s.vmstate] += weight;
  by_thread_[Thread{ctx.index, tid}] += weight;

  if (raw_epoch_ != ctx.naming_epoch) {
    by_raw_.clear();
    raw_epoch_ = ctx.naming_epoch;
  }
  raw_.assign({ctx.index, s.vmstate, s.traceno, s.host.size()});
  raw_.insert(raw_.end(), s.host.begin(), s.host.end());
  for (const GuestFrame &g : s.guest) raw_.insert(raw_.end(), {g.type, g.addr, g.line});
  auto raw = by_raw_.find(raw_);
  if (raw != by_raw_.end()) {
    stacks_[raw->second].samples += weight;
    return;
  }
  const uint32_t node = ctx.sample_node(s, calls);
  auto named = by_node_.emplace(std::make_tuple(ctx.index, s.vmstate, node), uint32_t(stacks_.size()));
  if (named.second) stacks_.push_back(Stack{ctx.index, s.vmstate, node, 0});
  stacks_[named.first->second].samples += weight;
  by_raw_.emplace(raw_, named.first->second);
}

}  // namespace prof
