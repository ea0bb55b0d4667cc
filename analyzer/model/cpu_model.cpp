#include "model/cpu_model.h"

namespace prof {
namespace {

std::string sampler_text(const ExtRecord &r) {
  static const char *const kBackends[] = {"unknown backend", "perf task-clock",
                                          "timer_create thread CPU clock", "ITIMER_PROF"};
  static const char *const kModes[] = {"DEFAULT", "LEAF", "CALLGRAPH"};
  return std::string(kBackends[r.value < 4 ? r.value : 0]) + ", " +
         (r.value2 < 3 ? kModes[r.value2] : "unknown") + " mode, every " +
         std::to_string(r.value3 / 1000) + " us";
}

}  // namespace

void CpuModel::read(StreamContext &ctx, CallTree &calls) {
  uint64_t tid = 0, weight = 1;
  ctx.read_sysprof([&](const SysprofSample &s) {
    if (s.record != SysprofRecord::Ext) {
      add(ctx, calls, s, double(weight), tid);
      weight = 1;
      return;
    }
    switch (s.ext.kind) {
      case ExtKind::Thread: tid = s.ext.value; break;
      case ExtKind::Weight: weight = s.ext.value; break;
      case ExtKind::Sampler: samplers_.push_back(sampler_text(s.ext)); break;
      default: break;
    }
  });
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
