// summary_json(): the figures of the native summary, as JSON.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "model/frame_names.h"
#include "model/function_figures.h"
#include "model/name_tree.h"
#include "read/symbolizer.h"

#include "report/object_types.h"
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
  to.live_count += s.live_count;
  to.peak_blocks += s.peak_blocks;
  to.min_size = std::min(to.min_size, s.min_size);
  to.max_size = std::max(to.max_size, s.max_size);
  to.min_life = std::min(to.min_life, s.min_life);
  to.max_life = std::max(to.max_life, s.max_life);
  to.sum_life += s.sum_life;
  merge_measures(to, s);
}

// The stacks of a map, merged by their frames' labels when several streams
// were read (ids are per stream) or object types split them; frames are
// named for the rows shown only.
struct Row {
  uint32_t stack;  // its first stack
  uint32_t rank;   // merged: the order of its frames (NameTree::ranks()), else 0
  const StackStats *stats;
};
struct Rows {
  const std::vector<StackStats> *stacks = nullptr;  // one stream: a row per stack
  std::vector<StackStats> merged;
  std::vector<Row> rows;  // merged

  template <class Fn>
  void for_each(Fn &&fn) const {
    if (!stacks) {
      for (const Row &r : rows) fn(r);
      return;
    }
    for (uint32_t id = 0; id < stacks->size(); id++)
      if ((*stacks)[id].allocs) fn(Row{id, 0, &(*stacks)[id]});  // else the other domain's
  }
};

void rows_of(Profile &profile, const std::vector<StackStats> &stacks, Rows &out) {
  // XXX: an object type splits a stack (stack_key.h); its rows are one again.
  if (profile.streams().size() < 2 && !profile.has_object_types()) {
    out.stacks = &stacks;
    return;
  }
  NameTree labels;
  NameProjection by_label(profile.calls(), labels, frame_label, NameTree::kRoot);
  std::vector<uint32_t> row_of, first, node_of;  // row_of by label node, the others by row
  for (uint32_t id = 0; id < stacks.size(); id++) {
    if (stacks[id].allocs == 0) continue;
    const uint32_t node = by_label.node(profile.node(id));
    if (row_of.size() <= node) row_of.resize(labels.size(), IdTable::kNone);
    if (row_of[node] == IdTable::kNone) {
      row_of[node] = uint32_t(out.merged.size());
      out.merged.push_back(stacks[id]);
      first.push_back(id);
      node_of.push_back(node);
    } else {
      merge_into(out.merged[row_of[node]], stacks[id]);
    }
  }
  const std::vector<uint32_t> rank = labels.ranks();
  for (size_t r = 0; r < out.merged.size(); r++)
    out.rows.push_back(Row{first[r], rank[node_of[r]], &out.merged[r]});
}

Json row_json(Profile &profile, const Row &r) {
  const StackStats &s = *r.stats;
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
  const Measures *m = s.measures.get();
  j["measured"] = m ? Json{{"accesses", {{"total", m->accesses},
                                         {"min", m->min_accesses},
                                         {"max", m->max_accesses}}},
                           {"access_density", access_density(s)},
                           {"lifetime_ms", {{"total", m->lifetime_ms},
                                            {"min", m->min_life_ms},
                                            {"avg", m->lifetime_ms / s.alloc_count},
                                            {"max", m->max_life_ms}}},
                           {"lifetime_overlaps", m->lifetime_overlaps},
                           {"cpu_migrations", m->cpu_migrations}}
                    : Json(nullptr);
  j["stack"] = stack_json(profile.frames(r.stack));
  return j;
}

// The `top` rows with the largest figure, ties in stack order.
template <class Metric>
Json table(Profile &profile, const Rows &rows, size_t top, Metric metric) {
  auto before = [&](const Row &a, const Row &b) {
    const double ma = metric(*a.stats), mb = metric(*b.stats);
    if (ma != mb) return ma > mb;
    return a.rank != b.rank ? a.rank < b.rank : a.stack < b.stack;
  };
  // The best `top` in a heap whose first is the worst of them.
  std::vector<Row> best;
  rows.for_each([&](const Row &r) {
    if (top == 0 || !(metric(*r.stats) > 0)) return;
    if (best.size() == top && !before(r, best.front())) return;
    if (best.size() == top) {
      std::pop_heap(best.begin(), best.end(), before);
      best.pop_back();
    }
    best.push_back(r);
    std::push_heap(best.begin(), best.end(), before);
  });
  std::sort_heap(best.begin(), best.end(), before);
  Json out = Json::array();
  for (const Row &r : best) out.push_back(row_json(profile, r));
  return out;
}

Json point_json(const Profile &profile, const HeapPoint &p) {
  return {{"pid", profile.streams()[p.file]->pid},
          {"time_ns", p.timed ? Json(p.time_ns) : Json(nullptr)},
          {"events", p.events},
          {"heap_bytes", p.heap_bytes},
          // (0: before the stream's first time mark, unknown)
          {"rss_bytes", p.timed && p.rss ? Json(p.rss) : Json(nullptr)}};
}

// The writer's exact count at the peak, where streams carry heap-total
// records: one entry per such stream.
Json peak_json(const Profile &profile) {
  Json out = Json::array();
  for (const StreamHeap &s : profile.memory().stream_heaps())
    if (s.counted)
      out.push_back({{"pid", profile.streams()[s.file]->pid},
                     {"counted_bytes", s.counted_peak},
                     {"time_ns", s.peak_ns}});
  return out;
}

// LLVM MemProf measures: the contexts by what the runtime saw of their
// blocks; "cold" ranks bytes per access (blocks allocated and barely read).
Json measured_json(Profile &profile, const Rows &rows, const SummaryOptions &opt) {
  const HeapModel &heap = profile.memory();
  Json j = {{"contexts", heap.measured_contexts()}};
  j["accessed"] = table(profile, rows, opt.top, [](const StackStats &s) { return measures_of(s).accesses; });
  j["hot"] = table(profile, rows, opt.top, access_density);
  j["cold"] = table(profile, rows, opt.top, [](const StackStats &s) {
    return s.measures.get() ? s.alloc_bytes / std::max(measures_of(s).accesses, 1.0) : 0.0;
  });
  j["long_lived"] = table(profile, rows, opt.top, [](const StackStats &s) { return measures_of(s).lifetime_ms; });
  j["overlapping"] =
      table(profile, rows, opt.top, [](const StackStats &s) { return measures_of(s).lifetime_overlaps; });
  j["migrating"] = table(profile, rows, opt.top, [](const StackStats &s) { return measures_of(s).cpu_migrations; });
  return j;
}

// When one stream's heap peaked, in seconds since it started; null without
// time marks or for several streams (their peaks add up, at no one time).
Json peak_time(const HeapModel &heap) {
  if (heap.stream_heaps().size() != 1) return nullptr;
  const StreamHeap &h = heap.stream_heaps()[0];
  const double t = peak_time(heap.over_time(), h);
  return t < 0 ? Json(nullptr) : Json(std::round(t * 1e6) / 1e6);
}

// The leaked blocks as the tables count allocations: each sampled block for
// the blocks it stands for.
double estimated_live_blocks(const HeapModel &heap) {
  double blocks = 0;
  for (const StackStats &s : heap.stacks()) blocks += s.live_count;
  return std::round(blocks);
}

Json figures_json(const MemoryFigures &f) {
  return {{"alloc_bytes", f.alloc_bytes},
          {"alloc_count", f.alloc_count},
          {"leaked_bytes", f.leaked_bytes},
          {"peak_bytes", f.peak_bytes}};
}

// Memory by function (by line with opt.lines), as heaptrack_print gives it.
Json functions_memory_json(Profile &profile, const SummaryOptions &opt) {
  const FunctionTables t = memory_by_function(profile, opt.lines, opt.top);
  auto rows = [](const std::vector<FunctionFigures> &v) {
    Json out = Json::array();
    for (const FunctionFigures &f : v)
      out.push_back({{"function", f.function}, {"self", figures_json(f.self)},
                     {"total", figures_json(f.total)}});
    return out;
  };
  return {{"by", opt.lines ? "line" : "function"},
          {"by_self", rows(t.by_self)},
          {"by_total", rows(t.by_total)}};
}

// Memory by thread (event-thread records), by bytes allocated: each
// thread's own blocks and frees, named by the name it had last.
Json memory_threads_json(const Profile &profile) {
  std::vector<const ThreadHeap *> threads;
  for (const ThreadHeap &t : profile.memory().threads())
    if ((t.tid || t.others) && (t.allocs || t.frees)) threads.push_back(&t);
  std::stable_sort(threads.begin(), threads.end(), [](const ThreadHeap *a, const ThreadHeap *b) {
    return a->alloc_bytes > b->alloc_bytes;
  });
  Json out = Json::array();
  for (const ThreadHeap *t : threads) {
    const StreamContext &ctx = *profile.streams()[t->file];
    out.push_back({{"pid", ctx.pid},
                   {"tid", t->tid},
                   {"name", t->others ? "(other threads)" : ctx.thread_name(t->tid)},
                   {"alloc_bytes", t->alloc_bytes},
                   {"alloc_count", t->alloc_count},
                   {"free_count", t->free_count},
                   {"leaked_bytes", t->live_bytes},
                   {"leaked_blocks", t->live_count},
                   {"peak_bytes", t->peak_bytes}});
  }
  return out;
}

Json memory_json(Profile &profile, const SummaryOptions &opt) {
  const HeapModel &heap = profile.memory();
  // XXX: in sampled streams the calls are estimates, as bytes are; what
  // was recorded is given apart.
  const HeapModel::Calls &calls = heap.estimated_calls();
  Json m = {{"sampling_mean_bytes", heap.sampling_mean()},
            {"calls_estimated", heap.sampled()},
            {"alloc_calls", heap.sampled() ? Json(std::round(calls.allocs)) : Json(heap.alloc_calls())},
            {"realloc_calls",
             heap.sampled() ? Json(std::round(calls.reallocs)) : Json(heap.realloc_calls())},
            {"free_calls", heap.sampled() ? Json(std::round(calls.frees)) : Json(heap.free_calls())},
            {"recorded_calls",
             {{"alloc", heap.alloc_calls()},
              {"realloc", heap.realloc_calls()},
              {"free", heap.free_calls()}}},
            {"allocated_bytes", heap.allocated_bytes()},
            {"allocated_bytes_ci95", 1.96 * std::sqrt(heap.allocated_variance())},
            {"allocated_blocks", heap.allocated_blocks()},
            {"peak_bytes", heap.peak_bytes()},
            {"peak_counted", peak_json(profile)},
            {"peak_time_s", peak_time(heap)},
            {"leaked_bytes", heap.live_bytes()},
            {"leaked_blocks", heap.sampled() ? Json(estimated_live_blocks(heap)) : Json(heap.live_blocks())},
            {"leaked_blocks_recorded", heap.live_blocks()},
            {"temporary_allocations", heap.temporary()},
            {"unknown_frees", heap.unknown_frees()},
            {"frees_before_recording", heap.frees_before_recording()},
            {"threads", memory_threads_json(profile)}};
  // Where recording began, for the streams of an agent attached to a
  // running process.
  Json attached = Json::array();
  for (const auto &ctx : profile.streams())
    if (ctx->attach_number && ctx->file.kind() == SectionKind::Memprof)
      attached.push_back({{"pid", ctx->pid},
                          {"attach_number", ctx->attach_number},
                          {"start_unix_ns", ctx->start_unix_ns}});
  m["attached"] = attached;
  Json suppressed = Json::array();
  for (const SuppressedLeaks &l : profile.suppressed())
    suppressed.push_back(
        {{"pattern", l.pattern}, {"default", l.by_default}, {"blocks", l.blocks}, {"bytes", l.bytes}});
  m["suppressed"] = suppressed;
  if (profile.has_object_types()) m["object_types"] = object_types_json(profile);
  Rows rows;
  rows_of(profile, heap.stacks(), rows);
  m["peak"] = table(profile, rows, opt.top, [](const StackStats &s) { return s.peak_bytes; });
  m["leaks"] = table(profile, rows, opt.top, [](const StackStats &s) { return s.live_bytes; });
  m["allocated"] = table(profile, rows, opt.top, [](const StackStats &s) { return s.alloc_bytes; });
  m["calls"] = table(profile, rows, opt.top, [](const StackStats &s) { return s.alloc_count; });
  m["temporary"] =
      table(profile, rows, opt.top, [](const StackStats &s) { return double(s.temporary); });
  m["functions"] = functions_memory_json(profile, opt);

  m["measured"] = heap.measured_contexts() ? measured_json(profile, rows, opt) : Json(nullptr);

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

  Rows maps;
  rows_of(profile, heap.mmap_stacks(), maps);
  m["mmap"] = {{"maps", heap.maps()},
               {"unmaps", heap.unmaps()},
               {"mapped_bytes", heap.mapped_bytes()},
               {"peak_bytes", heap.mapped_peak()},
               {"peak",
                table(profile, maps, opt.top, [](const StackStats &s) { return s.peak_bytes; })},
               {"still_mapped",
                table(profile, maps, opt.top, [](const StackStats &s) { return s.live_bytes; })},
               {"mapped",
                table(profile, maps, opt.top, [](const StackStats &s) { return s.alloc_bytes; })}};
  return m;
}

// Function names by samples, largest first, then by name, with their share
// of all samples.
Json functions_json(const std::map<std::string, double> &by_function, size_t top, double all) {
  std::vector<std::pair<std::string, double>> v(by_function.begin(), by_function.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  if (v.size() > top) v.resize(top);
  Json out = Json::array();
  for (const auto &kv : v)
    out.push_back({{"function", kv.first},
                   {"samples", kv.second},
                   {"percent", all > 0 ? 100 * kv.second / all : 0.0}});
  return out;
}

// The share of the samples from which a function is in "nearly every" one.
constexpr double kNearlyEvery = 0.95;

Json cpu_json(Profile &profile, const SummaryOptions &opt) {
  const CpuModel &cpu = profile.cpu();
  Json vm = Json::object();
  for (const auto &kv : cpu.by_vmstate()) vm[vmstate_name(kv.first)] = kv.second;
  Json threads = Json::array();
  for (const auto &kv : cpu.by_thread())
    threads.push_back({{"pid", profile.streams()[kv.first.file]->pid},
                       {"tid", kv.first.tid},
                       {"name", profile.streams()[kv.first.file]->thread_name(kv.first.tid)},
                       {"samples", kv.second}});
  // Samples by function (by line with opt.lines): in the innermost frame
  // (self), anywhere on the stack (total, once a stack); and by stack,
  // alike labels merged.
  const CallTree &calls = profile.calls();
  NameTree labels, functions;
  NameProjection by_label(calls, labels, frame_label, NameTree::kRoot);
  NameProjection by_function(calls, functions, opt.lines ? frame_label : function_name,
                             NameTree::kRoot);
  std::vector<double> self, total;
  std::vector<uint32_t> path;
  struct Hot {
    const CpuModel::Stack *first;
    double samples;
  };
  std::vector<Hot> hot;
  std::map<std::tuple<uint32_t, uint8_t, uint32_t>, size_t> hot_of;  // (file, vmstate, label node)
  for (const CpuModel::Stack &s : cpu.stacks()) {
    const uint32_t node = by_label.node(s.node);
    auto it = hot_of.emplace(std::make_tuple(s.file, s.vmstate, node), hot.size()).first;
    if (it->second == hot.size()) hot.push_back({&s, 0});
    hot[it->second].samples += s.samples;
    if (node == NameTree::kRoot) continue;
    path.clear();
    for (uint32_t n = by_function.node(s.node); n != NameTree::kRoot; n = functions.parent(n))
      path.push_back(functions.tree().key(n));
    self.resize(functions.names().size());
    total.resize(functions.names().size());
    self[path.front()] += s.samples;
    std::sort(path.begin(), path.end());
    path.erase(std::unique(path.begin(), path.end()), path.end());
    for (uint32_t label : path) total[label] += s.samples;
  }
  // XXX: a function in (nearly) every sample (_start, main, a thread's
  // start, the VM's entry and main loop) says nothing a user can act on:
  // the total table leaves it out, by name, unless it runs itself in half
  // the samples or more (then it is the work, not a frame around it).
  const double all = cpu.samples();
  Json everywhere = Json::array();
  auto named = [&](const std::vector<double> &samples, bool leave_out_everywhere) {
    std::map<std::string, double> out;
    for (uint32_t id = 0; id < samples.size(); id++) {
      if (samples[id] == 0) continue;
      const std::string name(functions.names().str(id));
      const double itself = id < self.size() ? self[id] : 0;
      if (leave_out_everywhere && samples[id] >= kNearlyEvery * all && itself < 0.5 * all)
        everywhere.push_back(name);
      else
        out[name] = samples[id];
    }
    return out;
  };
  const Json total_json = functions_json(named(total, true), opt.top, all);
  std::sort(everywhere.begin(), everywhere.end());
  std::stable_sort(hot.begin(), hot.end(),
                   [](const Hot &a, const Hot &b) { return a.samples > b.samples; });
  if (hot.size() > opt.top) hot.resize(opt.top);
  Json stacks = Json::array();
  for (const Hot &h : hot)
    stacks.push_back({{"samples", h.samples},
                      {"vmstate", vmstate_name(h.first->vmstate)},
                      {"stack", stack_json(calls.frames(h.first->node))}});
  // What profiling cost the program: the samples that interrupted the agent.
  const std::map<std::string, double> self_by_name = named(self, false);
  const auto agent = self_by_name.find(kAgentFrame);
  const Json self_json = functions_json(self_by_name, opt.top, all);
  return {{"samples", cpu.samples()},
          {"vmstates", vm},
          {"in_agent", agent == self_by_name.end() ? 0.0 : agent->second},
          {"threads", threads},
          {"by", opt.lines ? "line" : "function"},
          {"self", self_json},
          {"total", total_json},
          {"in_nearly_every_sample", everywhere},
          {"stacks", stacks},
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

// A stream's named threads: [{"tid", "name"}], the last name each had.
static Json thread_names_json(const StreamContext &ctx) {
  Json out = Json::array();
  for (const auto &[tid, name] : ctx.thread_names) out.push_back({{"tid", tid}, {"name", name}});
  return out;
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
         {"kind", ctx->file.llvm_memprof()                   ? "llvm-memprof"
                  : ctx->file.kind() == SectionKind::Memprof ? "memprof"
                                                             : "sysprof"},
         {"extended", ctx->file.prologue().extended},
         {"pid", ctx->pid},
         {"ppid", ctx->ppid},
         {"exe", ctx->exe},
         {"attach_number", ctx->attach_number},
         {"truncated_at", ctx->end.truncated ? Json(ctx->end.offset) : Json(nullptr)},
         {"unclean_end", ctx->unclean.seen ? Json{{"time_ns", ctx->unclean.time_ns},
                                                  {"lost_bytes", ctx->unclean.lost_bytes}}
                                           : Json(nullptr)},
         {"markers", markers},
         {"thread_names", thread_names_json(*ctx)},
         {"markers_dropped", ctx->markers_dropped},
         {"stats", stats},
         {"file_bytes", ctx->file.size()},
         {"compressed", ctx->file.compressed()},
         {"stream_bytes", ctx->stream_bytes},
         {"events", ctx->events},
         {"bytes_per_event", ctx->events ? Json(double(ctx->file.size()) / double(ctx->events))
                                         : Json(nullptr)},
         {"window", ctx->window.spec().active() ? ctx->window.to_json() : Json(nullptr)}});
  }
  j["streams"] = streams;
  j["memory"] = profile.has_memory() ? memory_json(profile, opt) : Json(nullptr);
  if (profile.has_memory()) {
    // The agent's counts of events it could not record: leaks and frees
    // are then uncertain.
    static const char *const kMissed[] = {"signal_handlers_in_agent", "guards_abandoned",
                                          "ring_records_abandoned", "events_while_opening"};
    Json missed = Json::object();
    for (const char *name : kMissed) {
      const auto it = agent.find(name);
      if (it != agent.end() && it->second) missed[name] = it->second;
    }
    j["memory"]["missed_events"] = missed;
    // Allocations made before the agent started (other libraries'
    // constructors), counted by the agent, never recorded.
    const auto before = agent.find("allocations_before_start");
    j["memory"]["before_start"] =
        before != agent.end() && before->second
            ? Json{{"allocations", before->second}, {"bytes", agent["bytes_before_start"]}}
            : Json(nullptr);
  }
  j["cpu"] = profile.has_cpu() ? cpu_json(profile, opt) : Json(nullptr);
  j["agent"] = agent;
  return j;
}

}  // namespace prof
