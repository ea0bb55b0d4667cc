#include "report/folded.h"

#include <cmath>
#include <stdexcept>

namespace prof {
namespace {

void append(std::string &line, const std::string &name) {
  if (!line.empty()) line += ';';
  for (char c : name) line += c == ';' ? ':' : c == '\n' || c == '\r' ? ' ' : c;
}

std::string fold(const std::vector<Frame> &frames) {
  std::string line;
  for (const Frame &f : frames) append(line, f.function);
  return line;
}

}  // namespace

const std::vector<MemoryMetric> &memory_metrics() {
  static const std::vector<MemoryMetric> kMetrics = {
      {"alloc-bytes", "bytes", "Memory: bytes allocated", &StackStats::alloc_bytes},
      {"alloc-count", "allocations", "Memory: allocations", &StackStats::alloc_count},
      {"leaked-bytes", "bytes", "Memory: bytes leaked (live at the end)", &StackStats::live_bytes},
      {"peak-bytes", "bytes", "Memory: bytes held at the peak", &StackStats::peak_bytes},
  };
  return kMetrics;
}

std::map<std::string, double> folded_stacks(Profile &profile, const FoldedOptions &opt) {
  std::map<std::string, double> out;
  const MemoryMetric *metric = nullptr;
  for (const MemoryMetric &m : memory_metrics())
    if (opt.metric == m.name) metric = &m;
  if (!metric) throw std::invalid_argument("unknown metric " + opt.metric);
  const std::vector<StackStats> &stacks = profile.memory().stacks();
  for (uint32_t id = 0; id < stacks.size(); id++) {
    const double v = stacks[id].*metric->field;
    if (v > 0) out[fold(profile.frames(id))] += v;
  }
  for (const CpuModel::Stack &s : profile.cpu().stacks()) {
    std::string line = fold(s.frames);
    if (opt.by_vmstate) line = vmstate_name(s.vmstate) + (line.empty() ? "" : ";" + line);
    out[line] += s.samples;
  }
  return out;
}

std::map<std::string, double> folded_stacks(const std::vector<Profile *> &profiles,
                                            const FoldedOptions &opt, bool per_process) {
  std::map<std::string, double> out;
  for (Profile *profile : profiles) {
    // XXX: per process, the process is the root frame, so one graph shows all.
    std::string root;
    if (per_process && !profile->streams().empty()) {
      const StreamContext &ctx = *profile->streams()[0];
      root = "[" + (ctx.pid ? "pid " + std::to_string(ctx.pid) : basename_of(ctx.file.path())) +
             "];";
    }
    for (const auto &kv : folded_stacks(*profile, opt)) out[root + kv.first] += kv.second;
  }
  return out;
}

void render_folded(const std::map<std::string, double> &stacks, std::ostream &out) {
  for (const auto &kv : stacks) {
    const long long n = std::llround(kv.second);
    if (n > 0) out << (kv.first.empty() ? "[no stack]" : kv.first) << " " << n << "\n";
  }
}

}  // namespace prof
