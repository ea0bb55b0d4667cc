#include "folded.h"

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

double metric_of(const StackStats &s, const std::string &metric) {
  if (metric == "alloc-bytes") return s.alloc_bytes;
  if (metric == "alloc-count") return s.alloc_count;
  if (metric == "leaked-bytes") return s.live_bytes;
  if (metric == "peak-bytes") return s.peak_bytes;
  throw std::invalid_argument("unknown metric " + metric);
}

}  // namespace

std::map<std::string, double> folded_stacks(Profile &profile, const FoldedOptions &opt) {
  std::map<std::string, double> out;
  const std::vector<StackStats> &stacks = profile.memory().stacks();
  for (uint32_t id = 0; id < stacks.size(); id++) {
    const double v = metric_of(stacks[id], opt.metric);
    if (v > 0) out[fold(profile.frames(id))] += v;
  }
  for (const CpuModel::Stack &s : profile.cpu().stacks()) {
    std::string line = fold(s.frames);
    if (opt.by_vmstate) line = vmstate_name(s.vmstate) + (line.empty() ? "" : ";" + line);
    out[line] += s.samples;
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
