// summary_json(): the figures of the native summary, as JSON.
#include <algorithm>
#include <map>

#include "report/summary.h"

namespace prof {
namespace {

using Json = nlohmann::json;

const char *kind_name(Frame::Kind k) {
  switch (k) {
    case Frame::Kind::Native: return "native";
    case Frame::Kind::Inlined: return "inlined";
    case Frame::Kind::Guest: return "guest";
    case Frame::Kind::Jit: return "jit";
    case Frame::Kind::Unknown: break;
  }
  return "unknown";
}

void merge_into(StackStats &to, const StackStats &s) {
  to.alloc_bytes += s.alloc_bytes;
  to.alloc_count += s.alloc_count;
  to.live_bytes += s.live_bytes;
  to.peak_bytes += s.peak_bytes;
  to.allocs += s.allocs;
  to.frees += s.frees;
  to.temporary += s.temporary;
  to.live_blocks += s.live_blocks;
  to.min_size = std::min(to.min_size, s.min_size);
  to.max_size = std::max(to.max_size, s.max_size);
  to.min_life = std::min(to.min_life, s.min_life);
  to.max_life = std::max(to.max_life, s.max_life);
  to.sum_life += s.sum_life;
}

// The stacks of a map, merged by their frames when several streams were read
// (ids are per stream); frames are filled in for the rows shown only.
struct Row {
  uint32_t stack;
  StackStats stats;
  std::vector<Frame> frames;
  std::string label;  // set when merged
};

std::vector<Row> rows_of(Profile &profile, const std::vector<StackStats> &stacks) {
  std::vector<Row> rows;
  const bool merge = profile.streams().size() > 1;
  std::map<std::string, size_t> by_label;
  for (uint32_t id = 0; id < stacks.size(); id++) {
    if (stacks[id].allocs == 0) continue;  // a stack of the other domain
    if (!merge) {
      rows.push_back(Row{id, stacks[id], {}, {}});
      continue;
    }
    std::vector<Frame> frames = profile.frames(id);
    std::string label = stack_label(frames);
    auto it = by_label.find(label);
    if (it == by_label.end()) {
      by_label.emplace(label, rows.size());
      rows.push_back(Row{id, stacks[id], std::move(frames), std::move(label)});
    } else {
      merge_into(rows[it->second].stats, stacks[id]);
    }
  }
  return rows;
}

Json row_json(Profile &profile, Row &r) {
  const StackStats &s = r.stats;
  if (r.frames.empty()) r.frames = profile.frames(r.stack);
  Json j = {{"alloc_bytes", s.alloc_bytes}, {"alloc_count", s.alloc_count},
            {"allocs", s.allocs},           {"frees", s.frees},
            {"temporary", s.temporary},     {"live_bytes", s.live_bytes},
            {"live_blocks", s.live_blocks}, {"peak_bytes", s.peak_bytes}};
  j["size"] = s.allocs ? Json{{"min", s.min_size},
                              {"avg", s.alloc_count > 0 ? s.alloc_bytes / s.alloc_count : 0.0},
                              {"max", s.max_size}}
                       : Json(nullptr);
  j["lifetime"] = s.frees ? Json{{"min", s.min_life},
                                 {"avg", double(s.sum_life) / double(s.frees)},
                                 {"max", s.max_life}}
                          : Json(nullptr);
  j["stack"] = stack_json(r.frames);
  return j;
}

// The `top` rows with the largest figure, ties in stack order.
template <class Metric>
Json table(Profile &profile, std::vector<Row> &rows, size_t top, Metric metric) {
  std::vector<Row *> order;
  for (Row &r : rows)
    if (metric(r.stats) > 0) order.push_back(&r);
  auto before = [&](const Row *a, const Row *b) {
    const double ma = metric(a->stats), mb = metric(b->stats);
    if (ma != mb) return ma > mb;
    return a->label != b->label ? a->label < b->label : a->stack < b->stack;
  };
  const size_t n = std::min(top, order.size());
  std::partial_sort(order.begin(), order.begin() + long(n), order.end(), before);
  Json out = Json::array();
  for (size_t i = 0; i < n; i++) out.push_back(row_json(profile, *order[i]));
  return out;
}

Json point_json(const Profile &profile, const HeapPoint &p) {
  return {{"pid", profile.streams()[p.file]->pid},
          {"time_ns", p.timed ? Json(p.time_ns) : Json(nullptr)},
          {"events", p.events},
          {"heap_bytes", p.heap_bytes},
          {"rss_bytes", p.timed ? Json(p.rss) : Json(nullptr)}};
}

Json memory_json(Profile &profile, const SummaryOptions &opt) {
  const HeapModel &heap = profile.memory();
  Json m = {{"sampling_mean_bytes", heap.sampling_mean()},
            {"alloc_calls", heap.alloc_calls()},
            {"realloc_calls", heap.realloc_calls()},
            {"free_calls", heap.free_calls()},
            {"allocated_bytes", heap.allocated_bytes()},
            {"allocated_blocks", heap.allocated_blocks()},
            {"peak_bytes", heap.peak_bytes()},
            {"leaked_bytes", heap.live_bytes()},
            {"leaked_blocks", heap.live_blocks()},
            {"temporary_allocations", heap.temporary()},
            {"unknown_frees", heap.unknown_frees()}};
  Json suppressed = Json::array();
  for (const SuppressedLeaks &l : profile.suppressed())
    suppressed.push_back({{"pattern", l.pattern}, {"blocks", l.blocks}, {"bytes", l.bytes}});
  m["suppressed"] = suppressed;
  std::vector<Row> rows = rows_of(profile, heap.stacks());
  m["peak"] = table(profile, rows, opt.top, [](const StackStats &s) { return s.peak_bytes; });
  m["leaks"] = table(profile, rows, opt.top, [](const StackStats &s) { return s.live_bytes; });
  m["allocated"] = table(profile, rows, opt.top, [](const StackStats &s) { return s.alloc_bytes; });
  m["calls"] = table(profile, rows, opt.top, [](const StackStats &s) { return s.alloc_count; });
  m["temporary"] =
      table(profile, rows, opt.top, [](const StackStats &s) { return double(s.temporary); });

  Json hist = Json::array();
  const auto &h = heap.size_histogram();
  for (size_t b = 0; b < h.size(); b++)
    if (h[b])
      hist.push_back({{"min", b ? uint64_t(1) << (b - 1) : 0},
                      {"max", b ? (b == 64 ? UINT64_MAX : (uint64_t(1) << b) - 1) : 0},
                      {"count", h[b]}});
  m["size_histogram"] = hist;

  Json series = Json::array();
  for (const HeapPoint &p : heap.over_time()) series.push_back(point_json(profile, p));
  m["over_time"] = series;
  Json snaps = Json::array();
  for (const HeapSnapshot &s : heap.snapshots()) {
    Json j = point_json(profile, s.at);
    j["holders"] = Json::array();
    for (const auto &h : s.holders)
      j["holders"].push_back({{"bytes", h.second}, {"stack", stack_json(profile.frames(h.first))}});
    snaps.push_back(j);
  }
  m["snapshots"] = snaps;
  m["snapshots_dropped"] = heap.snapshots_dropped();

  std::vector<Row> maps = rows_of(profile, heap.mmap_stacks());
  m["mmap"] = {{"maps", heap.maps()},
               {"unmaps", heap.unmaps()},
               {"mapped_bytes", heap.mapped_bytes()},
               {"peak_bytes", heap.mapped_peak()},
               {"still_mapped",
                table(profile, maps, opt.top, [](const StackStats &s) { return s.live_bytes; })},
               {"mapped",
                table(profile, maps, opt.top, [](const StackStats &s) { return s.alloc_bytes; })}};
  return m;
}

// Function names by samples, largest first, then by name.
Json functions_json(const std::map<std::string, double> &by_function, size_t top) {
  std::vector<std::pair<std::string, double>> v(by_function.begin(), by_function.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  if (v.size() > top) v.resize(top);
  Json out = Json::array();
  for (const auto &kv : v) out.push_back({{"function", kv.first}, {"samples", kv.second}});
  return out;
}

Json cpu_json(Profile &profile, const SummaryOptions &opt) {
  const CpuModel &cpu = profile.cpu();
  Json vm = Json::object();
  for (const auto &kv : cpu.by_vmstate()) vm[vmstate_name(kv.first)] = kv.second;
  Json threads = Json::array();
  for (const auto &kv : cpu.by_thread())
    threads.push_back({{"pid", profile.streams()[kv.first.file]->pid},
                       {"tid", kv.first.tid},
                       {"samples", kv.second}});
  std::map<std::string, double> self, total;
  for (const CpuModel::Stack &s : cpu.stacks()) {
    if (s.frames.empty()) continue;
    self[s.frames.back().label()] += s.samples;
    std::vector<std::string> seen;
    for (const Frame &f : s.frames) seen.push_back(f.label());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (const std::string &f : seen) total[f] += s.samples;
  }
  std::vector<const CpuModel::Stack *> hot;
  for (const CpuModel::Stack &s : cpu.stacks()) hot.push_back(&s);
  std::stable_sort(hot.begin(), hot.end(), [](const auto *a, const auto *b) {
    return a->samples > b->samples;
  });
  if (hot.size() > opt.top) hot.resize(opt.top);
  Json stacks = Json::array();
  for (const CpuModel::Stack *s : hot)
    stacks.push_back({{"samples", s->samples},
                      {"vmstate", vmstate_name(s->vmstate)},
                      {"stack", stack_json(s->frames)}});
  return {{"samples", cpu.samples()},        {"vmstates", vm},
          {"threads", threads},              {"self", functions_json(self, opt.top)},
          {"total", functions_json(total, opt.top)}, {"stacks", stacks},
          {"samplers", cpu.samplers()}};
}

}  // namespace

Json stack_json(const std::vector<Frame> &root_first) {
  Json out = Json::array();
  for (auto it = root_first.rbegin(); it != root_first.rend(); ++it) out.push_back(frame_json(*it));
  return out;
}

Json frame_json(const Frame &f) {
  return {{"function", f.function},
          {"file", f.file},
          {"line", f.line},
          {"module", f.module},
          {"kind", kind_name(f.kind)}};
}

Json summary_json(Profile &profile, const SummaryOptions &opt) {
  Json j;
  Json streams = Json::array();
  std::map<std::string, uint64_t> agent;
  for (const auto &ctx : profile.streams()) {
    Json markers = Json::array();
    for (const auto &m : ctx->markers) markers.push_back({{"time_ns", m.first}, {"label", m.second}});
    Json stats = Json::object();
    for (const auto &kv : ctx->stats) {
      stats[kv.first] = kv.second;
      agent[kv.first] += kv.second;
    }
    streams.push_back(
        {{"path", ctx->file.path()},
         {"kind", ctx->file.kind() == SectionKind::Memprof ? "memprof" : "sysprof"},
         {"extended", ctx->file.prologue().extended},
         {"pid", ctx->pid},
         {"ppid", ctx->ppid},
         {"exe", ctx->exe},
         {"truncated_at", ctx->end.truncated ? Json(ctx->end.offset) : Json(nullptr)},
         {"unclean_end", ctx->unclean.seen ? Json{{"time_ns", ctx->unclean.time_ns},
                                                  {"lost_bytes", ctx->unclean.lost_bytes}}
                                           : Json(nullptr)},
         {"markers", markers},
         {"markers_dropped", ctx->markers_dropped},
         {"stats", stats},
         {"window", ctx->window.spec().active() ? ctx->window.to_json() : Json(nullptr)}});
  }
  j["streams"] = streams;
  j["memory"] = profile.has_memory() ? memory_json(profile, opt) : Json(nullptr);
  if (profile.has_memory()) {
    // The agent's counts of events it could not record: leaks and frees
    // are then uncertain.
    static const char *const kMissed[] = {"signal_handlers_in_agent", "guards_abandoned",
                                          "ring_records_abandoned"};
    Json missed = Json::object();
    for (const char *name : kMissed) {
      const auto it = agent.find(name);
      if (it != agent.end() && it->second) missed[name] = it->second;
    }
    j["memory"]["missed_events"] = missed;
  }
  j["cpu"] = profile.has_cpu() ? cpu_json(profile, opt) : Json(nullptr);
  j["agent"] = agent;
  return j;
}

}  // namespace prof
