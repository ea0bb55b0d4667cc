#include "report/profile_diff.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>

#include "report/memprof_report.h"
#include "report/summary.h"

namespace prof {
namespace {

using Json = nlohmann::json;

// The compared figures, in the order of DiffOptions::sort's names.
constexpr std::array<const char *, 4> kSortNames = {"alloc-bytes", "alloc-count", "leaked-bytes",
                                                    "peak-bytes"};
constexpr std::array<const char *, 4> kKeys = {"alloc_bytes", "alloc_count", "leaked_bytes",
                                               "peak_bytes"};
using Figures = std::array<double, 4>;

Figures figures_of(const StackStats &s) {
  return {s.alloc_bytes, s.alloc_count, s.live_bytes, s.peak_bytes};
}

struct Side {
  std::map<std::string, Figures> by_label;
  std::map<std::string, std::vector<Frame>> frames;
};

Side side_of(Profile &p) {
  Side side;
  const std::vector<StackStats> &stacks = p.memory().stacks();
  for (uint32_t id = 0; id < stacks.size(); id++) {
    if (stacks[id].allocs == 0) continue;
    std::vector<Frame> frames = p.frames(id);
    const std::string label = stack_label(frames);
    Figures &f = side.by_label[label];
    const Figures add = figures_of(stacks[id]);
    for (size_t i = 0; i < f.size(); i++) f[i] += add[i];
    side.frames.emplace(label, std::move(frames));
  }
  return side;
}

Json totals(const Profile &p) {
  Json files = Json::array();
  for (const auto &ctx : p.streams()) files.push_back(ctx->file.path());
  const HeapModel &h = p.memory();
  return {{"files", files},
          {"alloc_bytes", h.allocated_bytes()},
          {"alloc_count", h.allocated_blocks()},
          {"leaked_bytes", h.live_bytes()},
          {"peak_bytes", h.peak_bytes()}};
}

Json change(double before, double after) {
  return {{"before", before}, {"after", after}, {"delta", after - before}};
}

std::string signed_bytes(double v) {
  const int64_t n = int64_t(std::llround(v));
  return (n > 0 ? "+" : "") + format_bytes(n, true);
}

std::string signed_count(double v) {
  const long long n = std::llround(v);
  return (n > 0 ? "+" : "") + std::to_string(n);
}

}  // namespace

Json diff_json(Profile &before, Profile &after, const DiffOptions &opt) {
  const size_t sort =
      size_t(std::find(kSortNames.begin(), kSortNames.end(), opt.sort) - kSortNames.begin());
  if (sort == kSortNames.size()) throw std::invalid_argument("unknown figure " + opt.sort);
  Side b = side_of(before), a = side_of(after);
  struct Row {
    const std::string *label;
    Figures before{}, after{};
    double key = 0;  // |change| of the sort figure
  };
  std::vector<Row> rows;
  auto add = [&](const std::string &label) {
    Row r{&label};
    if (auto it = b.by_label.find(label); it != b.by_label.end()) r.before = it->second;
    if (auto it = a.by_label.find(label); it != a.by_label.end()) r.after = it->second;
    r.key = std::fabs(r.after[sort] - r.before[sort]);
    if (r.before != r.after) rows.push_back(r);
  };
  for (const auto &kv : b.by_label) add(kv.first);
  for (const auto &kv : a.by_label)
    if (!b.by_label.count(kv.first)) add(kv.first);
  std::stable_sort(rows.begin(), rows.end(), [](const Row &x, const Row &y) {
    return x.key != y.key ? x.key > y.key : *x.label < *y.label;
  });
  if (rows.size() > opt.top) rows.resize(opt.top);

  Json stacks = Json::array();
  for (const Row &r : rows) {
    Json j;
    for (size_t i = 0; i < kKeys.size(); i++) j[kKeys[i]] = change(r.before[i], r.after[i]);
    auto frames = a.frames.find(*r.label);
    j["stack"] = stack_json(frames != a.frames.end() ? frames->second : b.frames.at(*r.label));
    stacks.push_back(std::move(j));
  }
  return {
      {"before", totals(before)}, {"after", totals(after)}, {"sort", opt.sort}, {"stacks", stacks}};
}

void render_diff(const Json &d, const DiffOptions &opt, std::ostream &out) {
  static const char *const kTitles[] = {"allocated", "calls", "leaked", "peak heap"};
  out << "DIFF: " << d["after"]["files"][0].get<std::string>() << " against "
      << d["before"]["files"][0].get<std::string>() << "\n";
  for (size_t i = 0; i < kKeys.size(); i++) {
    const double b = d["before"][kKeys[i]], a = d["after"][kKeys[i]];
    const bool is_count = i == 1;
    out << "  " << kTitles[i] << ": "
        << (is_count ? std::to_string(std::llround(b)) : format_bytes(std::llround(b), true))
        << " -> "
        << (is_count ? std::to_string(std::llround(a)) : format_bytes(std::llround(a), true))
        << " (" << (is_count ? signed_count(a - b) : signed_bytes(a - b)) << ")\n";
  }
  out << "\nSTACKS by change of " << opt.sort << ", largest first\n";
  for (const Json &s : d["stacks"]) {
    out << "  " << signed_bytes(s["alloc_bytes"]["delta"]) << " allocated, "
        << signed_count(s["alloc_count"]["delta"]) << " calls, "
        << signed_bytes(s["leaked_bytes"]["delta"]) << " leaked, "
        << signed_bytes(s["peak_bytes"]["delta"]) << " at the peak"
        << "  (allocated "
        << format_bytes(std::llround(s["alloc_bytes"]["before"].get<double>()), true) << " -> "
        << format_bytes(std::llround(s["alloc_bytes"]["after"].get<double>()), true) << ")\n";
    render_stack(s["stack"], opt.stack_depth, out);
  }
}

}  // namespace prof
