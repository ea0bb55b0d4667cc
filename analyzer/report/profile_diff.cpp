#include "report/profile_diff.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "model/frame_names.h"
#include "model/name_tree.h"
#include "report/memprof_report.h"
#include "report/summary.h"

namespace prof {
namespace {

using Json = nlohmann::json;

// The compared figures, in the order of DiffOptions::sort's names; the last
// four are LLVM MemProf measures (0 in libprof's streams).
constexpr std::array<const char *, 8> kSortNames = {
    "alloc-bytes",  "alloc-count", "leaked-bytes",      "peak-bytes",
    "access-count", "lifetime-ms", "lifetime-overlaps", "cpu-migrations"};
constexpr std::array<const char *, 8> kKeys = {
    "alloc_bytes",  "alloc_count", "leaked_bytes",      "peak_bytes",
    "access_count", "lifetime_ms", "lifetime_overlaps", "cpu_migrations"};
constexpr size_t kHeapFigures = 4;
using Figures = std::array<double, 8>;

Figures figures_of(const StackStats &s) {
  return {s.alloc_bytes, s.alloc_count,  s.live_bytes,        s.peak_bytes,
          measures_of(s).accesses,          measures_of(s).lifetime_ms,
          measures_of(s).lifetime_overlaps, measures_of(s).cpu_migrations};
}

// A frame as two builds name it alike: its label (host files by basename),
// a guest chunk "@/dir/x.lua:12" as "@x.lua:12", "f (@/dir/x.lua:12)" as
// "f (@x.lua:12)".
std::string build_label(const Frame &f) {
  if (f.kind != Frame::Kind::Guest) return f.label();
  const size_t at = f.function.find('@');
  if (at == std::string::npos || (at > 0 && (at < 2 || f.function.compare(at - 2, 2, " (") != 0)))
    return f.label();
  return f.function.substr(0, at + 1) + basename_of(f.function.substr(at + 1));
}

// A frame as two builds or two versions of a script name its function: a
// host function by its name alone, a Lua function by the line it starts at
// (function_name), chunks by basename; a line added above it moves no
// stack.
std::string build_function(const Frame &f) {
  if (f.kind != Frame::Kind::Guest) return f.function;
  if (f.file.empty()) return build_label(f);  // a location alone (LuaJIT's streams)
  // A named Lua function by its name and chunk, wherever it starts; an
  // anonymous one by the line it starts at.
  const std::string fn = function_name(f), chunk = "@" + basename_of(f.file.substr(1));
  const size_t named = fn.find(" (@");
  if (named != std::string::npos) return fn.substr(0, named) + " (" + chunk + ")";
  return chunk + ":" + std::to_string(f.first_line);
}

// The stacks of both profiles by their frames' labels (NameTree nodes): a
// side's figures, and the call-tree node of its first stack there.
struct Sides {
  std::string (*name)(const Frame &) = build_function;
  NameTree labels;
  struct Side {
    std::vector<Figures> figures;
    std::vector<uint32_t> first;  // IdTable::kNone: none
  } side[2];

  void add(Profile &p, Side &s) {
    const std::vector<StackStats> &stacks = p.memory().stacks();
    NameProjection by_label(p.calls(), labels, name, NameTree::kRoot);
    for (uint32_t id = 0; id < stacks.size(); id++) {
      if (stacks[id].allocs == 0) continue;
      const uint32_t call = p.node(id), node = by_label.node(call);
      for (Side &each : side) {
        each.figures.resize(labels.size(), Figures{});
        each.first.resize(labels.size(), IdTable::kNone);
      }
      const Figures add = figures_of(stacks[id]);
      for (size_t i = 0; i < add.size(); i++) s.figures[node][i] += add[i];
      if (s.first[node] == IdTable::kNone) s.first[node] = call;
    }
  }
};

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

// Decreases in the units of increases: format_bytes() scales magnitudes.
std::string signed_bytes(double v) {
  const double n = std::round(v);
  return (n > 0 ? "+" : n < 0 ? "-" : "") + format_bytes(std::fabs(n), true);
}

std::string signed_count(double v) {
  const double n = std::round(v);
  return (n > 0 ? "+" : "") + format_count(n);
}

}  // namespace

Json diff_json(Profile &before, Profile &after, const DiffOptions &opt) {
  const size_t sort =
      size_t(std::find(kSortNames.begin(), kSortNames.end(), opt.sort) - kSortNames.begin());
  if (sort == kSortNames.size()) throw std::invalid_argument("unknown figure " + opt.sort);
  Sides sides;
  if (opt.by_line) sides.name = build_label;
  Sides::Side &b = sides.side[0], &a = sides.side[1];
  sides.add(before, b);
  sides.add(after, a);
  const std::vector<uint32_t> rank = sides.labels.ranks();
  struct Row {
    uint32_t node;
    double key;  // |change| of the sort figure
  };
  std::vector<Row> rows;
  for (uint32_t n = 0; n < b.figures.size(); n++)
    if (b.figures[n] != a.figures[n]) rows.push_back({n, std::fabs(a.figures[n][sort] - b.figures[n][sort])});
  const size_t shown = std::min(opt.top, rows.size());
  std::partial_sort(rows.begin(), rows.begin() + long(shown), rows.end(), [&](const Row &x, const Row &y) {
    return x.key != y.key ? x.key > y.key : rank[x.node] < rank[y.node];
  });
  rows.resize(shown);

  Json stacks = Json::array();
  for (const Row &r : rows) {
    Json j;
    for (size_t i = 0; i < kKeys.size(); i++) j[kKeys[i]] = change(b.figures[r.node][i], a.figures[r.node][i]);
    const bool in_after = a.first[r.node] != IdTable::kNone;
    const Profile &p = in_after ? after : before;
    j["stack"] = stack_json(p.calls().frames(in_after ? a.first[r.node] : b.first[r.node]));
    stacks.push_back(std::move(j));
  }
  return {
      {"before", totals(before)}, {"after", totals(after)}, {"sort", opt.sort}, {"stacks", stacks}};
}

void render_diff(const Json &d, const DiffOptions &opt, std::ostream &out) {
  static const char *const kTitles[] = {"allocated", "calls", "leaked", "peak heap"};
  out << "DIFF: " << d["after"]["files"][0].get<std::string>() << " against "
      << d["before"]["files"][0].get<std::string>() << "\n";
  for (size_t i = 0; i < kHeapFigures; i++) {
    const double b = d["before"][kKeys[i]], a = d["after"][kKeys[i]];
    const bool is_count = i == 1;
    out << "  " << kTitles[i] << ": "
        << (is_count ? format_count(b) : format_bytes(std::round(b), true)) << " -> "
        << (is_count ? format_count(a) : format_bytes(std::round(a), true))
        << " (" << (is_count ? signed_count(a - b) : signed_bytes(a - b)) << ")\n";
  }
  out << "\nSTACKS by change of " << opt.sort << ", largest first\n";
  for (const Json &s : d["stacks"]) {
    out << "  " << signed_bytes(s["alloc_bytes"]["delta"]) << " allocated, "
        << signed_count(s["alloc_count"]["delta"]) << " calls, "
        << signed_bytes(s["leaked_bytes"]["delta"]) << " leaked, "
        << signed_bytes(s["peak_bytes"]["delta"]) << " at the peak"
        << "  (allocated "
        << format_bytes(std::round(s["alloc_bytes"]["before"].get<double>()), true) << " -> "
        << format_bytes(std::round(s["alloc_bytes"]["after"].get<double>()), true) << ")\n";
    if (s["access_count"]["before"].get<double>() || s["access_count"]["after"].get<double>())
      out << "    MemProf: " << signed_count(s["access_count"]["delta"]) << " accesses, "
          << signed_count(s["lifetime_ms"]["delta"]) << " ms of lifetimes, "
          << signed_count(s["lifetime_overlaps"]["delta"]) << " overlaps, "
          << signed_count(s["cpu_migrations"]["delta"]) << " CPU migrations\n";
    render_stack(s["stack"], opt.stack_depth, out);
  }
}

}  // namespace prof
