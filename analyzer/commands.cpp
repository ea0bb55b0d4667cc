#include "commands.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "heap_model.h"
#include "stream_context.h"

namespace prof {
namespace {

using Json = nlohmann::json;

// Opens the files one at a time and hands each to fn; reports a cut file as a
// warning and a corrupt or unreadable one as an error (exit code 2). With
// `keep`, the streams stay open afterwards (their stacks are named later).
template <class Fn>
int for_each_stream(const CommandOptions &opt, Fn &&fn,
                    std::vector<std::unique_ptr<StreamContext>> *keep = nullptr) {
  uint32_t index = 0;
  for (const std::string &path : opt.files) {
    try {
      auto owned = std::make_unique<StreamContext>(path, index++);
      StreamContext &ctx = *owned;
      if (opt.progress)
        std::cerr << "prof-analyze: reading " << path << " (" << ctx.file.size() << " bytes)\n";
      fn(ctx);
      if (ctx.end.truncated)
        std::cerr << "prof-analyze: warning: " << path << ": truncated at byte " << ctx.end.offset
                  << " (" << ctx.end.reason << "); reporting the records before it\n";
      if (keep) keep->push_back(std::move(owned));
    } catch (const FormatError &e) {
      std::cerr << "prof-analyze: " << path << ": " << e.what()
                << (e.truncated() ? " (nothing complete to report)" : "") << "\n";
      return 2;
    } catch (const std::exception &e) {
      std::cerr << "prof-analyze: " << path << ": " << e.what() << "\n";
      return 2;
    }
  }
  return 0;
}

MemprofReport::SiteKey site_key(const MemprofEvent &ev) {
  if (ev.loc.source == kAsourceNone) return {1, ev.host_stack, 0, 0};
  return {0, ev.loc.addr, ev.loc.line, ev.loc.traceno};
}

std::string join(const std::vector<std::string> &names, const char *sep) {
  std::string out;
  for (size_t i = 0; i < names.size(); i++) out += (i ? sep : "") + names[i];
  return out;
}

std::string human(double bytes) { return format_bytes(int64_t(std::llround(bytes)), true); }

}  // namespace

int run_report(const CommandOptions &opt, std::ostream &out) {
  StreamContext *current = nullptr;
  auto make = [&] {
    return std::make_unique<MemprofReport>(
        [&](const MemprofEvent &ev) {
          // XXX: native events of libprof streams are named by their
          // innermost host frame, guest ones as LuaJIT names them.
          if (ev.loc.source == kAsourceNone) return current->top_frame_name(ev.host_stack);
          return current->file.symbols().location_name(ev.loc);
        },
        site_key);
  };
  auto report = make();
  std::vector<std::string> aliases;
  Json per_file = Json::array();
  auto emit = [&](const std::string &title) {
    if (opt.json) {
      Json j = report->to_json(opt.report);
      j["file"] = title;
      per_file.push_back(j);
      return;
    }
    if (!title.empty()) out << "== " << title << "\n";
    report->render(out, opt.report);
  };
  const int rc = for_each_stream(opt, [&](StreamContext &ctx) {
    if (ctx.file.kind() != SectionKind::Memprof)
      throw std::runtime_error("not a memory profile (memprof) stream; try `summary`");
    current = &ctx;
    ctx.read_memprof([&](const MemprofEvent &ev) {
      if (ev.record != MemprofRecord::Ext) report->add(ev);
    });
    for (const std::string &chunk : ctx.file.symbols().aliased_chunks()) {
      aliases.push_back(ctx.file.symbols().alias_of(chunk) + ":");
      std::istringstream lines(chunk);
      std::string line;
      for (int n = 1; std::getline(lines, line);)
        if (!line.empty()) aliases.push_back(std::to_string(n++) + "\t| " + line);
      aliases.push_back("\n");
    }
    if (opt.per_process) {
      emit(ctx.file.path());
      report = make();
    }
  });
  if (rc != 0) return rc;
  if (!opt.per_process) emit("");
  if (opt.json) {
    out << (per_file.size() == 1 ? per_file[0] : per_file).dump(1) << "\n";
    return 0;
  }
  if (!aliases.empty()) {
    out << "ALIASES:\n";
    for (const auto &a : aliases) out << a << "\n";
  }
  return 0;
}

namespace {

struct CpuModel {
  double samples = 0;
  std::map<uint8_t, double> by_vmstate;
  std::map<uint64_t, double> by_thread;
  std::map<std::string, double> stacks;  // folded, root first
  std::map<std::string, double> leaves;  // innermost function
  std::string sampler;
};

const char *backend_name(uint64_t b) {
  switch (b) {
    case 1: return "perf task-clock";
    case 2: return "timer_create thread CPU clock";
    case 3: return "ITIMER_PROF";
  }
  return "unknown";
}

void read_cpu(StreamContext &ctx, CpuModel &m, bool by_vmstate) {
  uint64_t tid = 0, weight = 1;
  ctx.read_sysprof([&](const SysprofSample &s) {
    if (s.record == SysprofRecord::Ext) {
      if (s.ext.kind == ExtKind::Thread) tid = s.ext.value;
      if (s.ext.kind == ExtKind::Weight) weight = s.ext.value;
      if (s.ext.kind == ExtKind::Sampler) {
        static const char *const kModes[] = {"DEFAULT", "LEAF", "CALLGRAPH"};
        m.sampler = std::string(backend_name(s.ext.value)) + ", " +
                    (s.ext.value2 < 3 ? kModes[s.ext.value2] : "?") + " mode, every " +
                    std::to_string(s.ext.value3 / 1000) + " us";
      }
      return;
    }
    const double w = double(weight);
    weight = 1;
    m.samples += w;
    m.by_vmstate[s.vmstate] += w;
    m.by_thread[tid] += w;
    std::vector<std::string> names = ctx.sample_names(s, true);
    if (by_vmstate) names.insert(names.begin(), vmstate_name(s.vmstate));
    m.stacks[join(names, ";")] += w;
    if (!names.empty()) m.leaves[names.back()] += w;
  });
  // DEFAULT mode writes counters only, as stats "vmstate.NAME".
  for (const auto &kv : ctx.stats)
    if (kv.first.rfind("vmstate.", 0) == 0)
      for (uint8_t v = 0; v < kVmstCount; v++)
        if (kv.first.substr(8) == vmstate_name(v)) m.by_vmstate[v] += double(kv.second);
}

template <class Map>
std::vector<std::pair<std::string, double>> top_of(const Map &m, size_t n) {
  std::vector<std::pair<std::string, double>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](const auto &a, const auto &b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (v.size() > n) v.resize(n);
  return v;
}

void read_memory(StreamContext &ctx, HeapModel &heap) {
  ctx.read_memprof([&](const MemprofEvent &ev) {
    const StackKey key{ctx.index, ev.host_stack, ev.guest_stack,
                       ev.has_stacks || ev.record == MemprofRecord::Ext ? 0 : ctx.site_of(ev.loc)};
    switch (ev.record) {
      case MemprofRecord::Alloc: heap.alloc(key, ev.naddr, ev.nsize); break;
      case MemprofRecord::Free: heap.free(ev.oaddr, ctx.index); break;
      case MemprofRecord::Realloc: heap.realloc(key, ev.oaddr, ev.naddr, ev.nsize); break;
      case MemprofRecord::Ext:
        switch (ev.ext.kind) {
          case ExtKind::Sampling: heap.set_sampling(ev.ext.value); break;
          case ExtKind::TimeMark: heap.time_mark(ev.ext.time_ns, ev.ext.value); break;
          case ExtKind::Map:
            heap.map(StackKey{ctx.index, ev.ext.host_stack, ev.ext.guest_stack}, ev.ext.addr,
                     ev.ext.size);
            break;
          case ExtKind::Unmap: heap.unmap(ev.ext.addr, ev.ext.size, ctx.index); break;
          default: break;
        }
        break;
      default: break;
    }
  });
}

}  // namespace

int run_summary(const CommandOptions &opt, std::ostream &out) {
  std::vector<std::unique_ptr<StreamContext>> contexts;
  HeapModel heap;
  CpuModel cpu;
  bool any_mem = false, any_cpu = false;
  std::vector<std::pair<std::string, uint64_t>> stats;
  const int rc = for_each_stream(
      opt,
      [&](StreamContext &ctx) {
        if (ctx.file.kind() == SectionKind::Memprof) {
          any_mem = true;
          read_memory(ctx, heap);
        } else {
          any_cpu = true;
          read_cpu(ctx, cpu, false);
        }
        stats.insert(stats.end(), ctx.stats.begin(), ctx.stats.end());
      },
      &contexts);
  if (rc != 0) return rc;
  heap.finish();
  auto name_stack = [&](const StackKey &k) {
    StreamContext &ctx = *contexts[k.file];
    if (k.site) return std::vector<std::string>{ctx.site_name(k.site)};
    return ctx.stack_names(k.host, k.guest, false);
  };

  Json j;
  std::ostringstream text;
  if (any_mem) {
    const double scale_note = heap.mean();
    j["memory"] = {{"alloc_calls", heap.alloc_calls()},
                   {"realloc_calls", heap.realloc_calls()},
                   {"free_calls", heap.free_calls()},
                   {"allocated_bytes", heap.allocated_bytes()},
                   {"peak_bytes", heap.peak_bytes()},
                   {"leaked_bytes", heap.live_bytes()},
                   {"leaked_blocks", heap.live_blocks()},
                   {"temporary_allocations", heap.temporary()},
                   {"unknown_frees", heap.unknown_frees()},
                   {"sampling_mean_bytes", heap.mean()}};
    text << "MEMORY\n";
    if (scale_note > 0)
      text << "  (sampled every " << heap.mean()
           << " bytes on average; sizes and counts are scaled estimates)\n";
    text << "  calls:      " << heap.alloc_calls() << " allocations, " << heap.realloc_calls()
         << " reallocations, " << heap.free_calls() << " frees\n"
         << "  allocated:  " << human(heap.allocated_bytes()) << "\n"
         << "  peak heap:  " << human(heap.peak_bytes()) << "\n"
         << "  leaked:     " << human(heap.live_bytes()) << " in " << heap.live_blocks()
         << " blocks\n"
         << "  temporary:  " << heap.temporary() << " allocations freed right away\n"
         << "  unknown frees: " << heap.unknown_frees()
         << " (pointers never seen allocated)\n";

    struct Table {
      const char *title, *key;
      double StackStats::*metric;
    };
    const Table tables[] = {{"PEAK HEAP: stacks holding it at the peak", "peak", &StackStats::peak_bytes},
                            {"LEAKS: live at exit", "leaks", &StackStats::live_bytes},
                            {"ALLOCATED: bytes by stack", "allocated", &StackStats::alloc_bytes}};
    for (const Table &t : tables) {
      std::vector<std::pair<StackKey, const StackStats *>> rows;
      for (const auto &kv : heap.stacks())
        if (kv.second.*t.metric > 0) rows.push_back({kv.first, &kv.second});
      std::stable_sort(rows.begin(), rows.end(), [&](const auto &a, const auto &b) {
        if (a.second->*t.metric != b.second->*t.metric)
          return a.second->*t.metric > b.second->*t.metric;
        return std::tie(a.first.file, a.first.host, a.first.guest, a.first.site) <
               std::tie(b.first.file, b.first.host, b.first.guest, b.first.site);
      });
      if (rows.size() > opt.top) rows.resize(opt.top);
      text << "\n" << t.title << "\n";
      Json jrows = Json::array();
      for (const auto &r : rows) {
        const StackStats &s = *r.second;
        std::vector<std::string> names = name_stack(r.first);
        const double avg_life = s.frees ? double(s.sum_life) / double(s.frees) : 0;
        text << "  " << human(s.*t.metric) << "  " << s.allocs << " allocs, size "
             << s.min_size << ".." << s.max_size << " (avg "
             << (s.allocs ? uint64_t(s.alloc_bytes / s.alloc_count) : 0) << "), "
             << s.frees << " freed";
        if (s.frees)
          text << ", lifetime " << s.min_life << ".." << s.max_life << " (avg "
               << uint64_t(avg_life) << ") events";
        text << "\n";
        for (size_t i = names.size(); i-- > 0 && names.size() - i <= 8;)
          text << "      " << names[i] << "\n";
        jrows.push_back({{"bytes", s.*t.metric},
                         {"allocs", s.allocs},
                         {"frees", s.frees},
                         {"temporary", s.temporary},
                         {"min_size", s.allocs ? s.min_size : 0},
                         {"max_size", s.max_size},
                         {"avg_size", s.allocs ? s.alloc_bytes / s.alloc_count : 0},
                         {"min_lifetime", s.frees ? s.min_life : 0},
                         {"max_lifetime", s.max_life},
                         {"avg_lifetime", avg_life},
                         {"stack", names}});
      }
      j["memory"][t.key] = jrows;
    }

    text << "\nSIZES: allocations by size\n";
    Json hist = Json::array();
    const auto &h = heap.size_histogram();
    for (size_t b = 0; b < h.size(); b++) {
      if (!h[b]) continue;
      const uint64_t lo = b ? uint64_t(1) << (b - 1) : 0, hi = b ? (uint64_t(1) << b) - 1 : 0;
      text << "  " << std::setw(10) << lo << " .. " << std::setw(10) << hi << "  " << h[b]
           << "\n";
      hist.push_back({{"min", lo}, {"max", hi}, {"count", h[b]}});
    }
    j["memory"]["size_histogram"] = hist;

    const auto &t = heap.over_time();
    if (!t.empty()) {
      text << "\nHEAP OVER TIME\n";
      const size_t step = t.size() > 20 ? t.size() / 20 : 1;
      Json series = Json::array();
      for (size_t i = 0; i < t.size(); i++) {
        series.push_back({{"time_ns", t[i].time_ns}, {"rss", t[i].rss}, {"heap", t[i].heap_bytes}});
        if (i % step == 0 || i + 1 == t.size())
          text << "  " << std::fixed << std::setprecision(3) << double(t[i].time_ns) / 1e9
               << " s  heap " << human(double(t[i].heap_bytes)) << "  rss "
               << human(double(t[i].rss)) << "\n";
      }
      j["memory"]["over_time"] = series;
    }

    if (!heap.mmap_stacks().empty()) {
      text << "\nMMAP DOMAIN: anonymous mappings, apart from the heap\n"
           << "  mapped now " << human(heap.mapped_bytes()) << ", peak "
           << human(heap.mapped_peak()) << "\n";
      Json maps = Json::array();
      for (const auto &r : top_of([&] {
             std::map<std::string, double> m;
             for (const auto &kv : heap.mmap_stacks())
               m[join(name_stack(kv.first), ";")] += kv.second.live_bytes;
             return m;
           }(), opt.top)) {
        if (r.second <= 0) continue;
        text << "  " << human(r.second) << " still mapped at " << r.first << "\n";
        maps.push_back({{"bytes", r.second}, {"stack", r.first}});
      }
      j["memory"]["mmap"] = {{"mapped_bytes", heap.mapped_bytes()},
                             {"peak_bytes", heap.mapped_peak()},
                             {"still_mapped", maps}};
    }
  }
  if (any_cpu) {
    text << (any_mem ? "\n" : "") << "CPU\n";
    if (!cpu.sampler.empty()) text << "  sampler: " << cpu.sampler << "\n";
    double total = cpu.samples;
    for (const auto &kv : cpu.by_vmstate) total = std::max(total, kv.second);
    double counted = 0;
    for (const auto &kv : cpu.by_vmstate) counted += kv.second;
    text << "  samples: " << uint64_t(counted) << "\n";
    Json vm = Json::object();
    for (const auto &kv : cpu.by_vmstate) {
      text << "    " << std::setw(8) << vmstate_name(kv.first) << " " << uint64_t(kv.second)
           << "\n";
      vm[vmstate_name(kv.first)] = kv.second;
    }
    text << "\nHOTTEST FUNCTIONS (self)\n";
    Json leaves = Json::array();
    for (const auto &r : top_of(cpu.leaves, opt.top)) {
      text << "  " << std::setw(8) << uint64_t(r.second) << "  " << r.first << "\n";
      leaves.push_back({{"samples", r.second}, {"function", r.first}});
    }
    j["cpu"] = {{"samples", counted}, {"vmstates", vm}, {"self", leaves}, {"sampler", cpu.sampler}};
  }
  if (!stats.empty()) {
    text << "\nAGENT COUNTERS\n";
    Json js = Json::object();
    for (const auto &kv : stats) {
      text << "  " << kv.first << ": " << kv.second << "\n";
      js[kv.first] = kv.second;
    }
    j["agent"] = js;
  }
  if (opt.json)
    out << j.dump(1) << "\n";
  else
    out << text.str();
  return 0;
}

int run_folded(const CommandOptions &opt, std::ostream &out) {
  std::map<std::string, double> folded;
  const int rc = for_each_stream(opt, [&](StreamContext &ctx) {
    if (ctx.file.kind() == SectionKind::Sysprof) {
      CpuModel cpu;
      read_cpu(ctx, cpu, opt.by_vmstate);
      for (const auto &kv : cpu.stacks) folded[kv.first] += kv.second;
      return;
    }
    HeapModel heap;
    read_memory(ctx, heap);
    heap.finish();
    for (const auto &kv : heap.stacks()) {
      const StackStats &s = kv.second;
      double v = 0;
      if (opt.metric == "alloc-bytes") v = s.alloc_bytes;
      else if (opt.metric == "alloc-count") v = s.alloc_count;
      else if (opt.metric == "leaked-bytes") v = s.live_bytes;
      else v = s.peak_bytes;
      if (v <= 0) continue;
      const auto names = kv.first.site ? std::vector<std::string>{ctx.site_name(kv.first.site)}
                                       : ctx.stack_names(kv.first.host, kv.first.guest, true);
      folded[join(names, ";")] += v;
    }
  });
  if (rc != 0) return rc;
  for (const auto &kv : folded) {
    const uint64_t n = uint64_t(std::llround(kv.second));
    if (n > 0) out << (kv.first.empty() ? "[unknown]" : kv.first) << " " << n << "\n";
  }
  return 0;
}

}  // namespace prof
