// render_summary(): the native summary as text, read off its JSON.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <map>
#include <sstream>

#include "report/memprof_report.h"
#include "report/object_types.h"
#include "report/summary.h"

namespace prof {
namespace {

using Json = nlohmann::json;

std::string bytes(const Json &v) {
  return format_bytes(std::round(v.get<double>()), true);
}

std::string count(const Json &v) { return format_count(v.get<double>()); }

std::string frame_label(const Json &f) {
  Frame frame;
  frame.function = f["function"];
  frame.file = f["file"];
  frame.line = f["line"];
  frame.kind = f["kind"] == "guest" ? Frame::Kind::Guest : Frame::Kind::Native;
  return frame.label();
}

// The file name of the module whose stripped code frame f is
// ("lua5.4+0x122e0", no source line), else "".
std::string stripped_module(const Json &f) {
  if (f["kind"] != "native" || !f["file"].get<std::string>().empty()) return "";
  const std::string path = f.value("module", ""), function = f["function"];
  const std::string name = path.substr(path.rfind('/') + 1);
  return !name.empty() && function.rfind(name + "+0x", 0) == 0 ? name : "";
}

// One row of a stack table: its figure, then MemProf's MIB fields.
void row(const Json &r, const std::string &figure, size_t depth, bool full, std::ostream &out) {
  out << "  " << figure << "  " << count(r["alloc_count"]) << " allocations";
  if (!r["size"].is_null())
    out << ", size " << r["size"]["min"].get<uint64_t>() << ".." << r["size"]["max"].get<uint64_t>()
        << " (avg " << count(r["size"]["avg"]) << ")";
  if (r["measured"].is_null()) out << ", " << r["frees"].get<uint64_t>() << " freed";
  if (!r["lifetime"].is_null())
    out << ", lifetime " << r["lifetime"]["min"].get<uint64_t>() << ".."
        << r["lifetime"]["max"].get<uint64_t>() << " (avg " << count(r["lifetime"]["avg"])
        << ") events";
  if (r["temporary"].get<uint64_t>()) out << ", " << r["temporary"].get<uint64_t>() << " temporary";
  out << "\n";
  if (!r["measured"].is_null()) {
    const Json &m = r["measured"];
    out << "    measured: " << count(m["accesses"]["total"]) << " accesses ("
        << m["accesses"]["min"].get<uint64_t>() << ".." << m["accesses"]["max"].get<uint64_t>()
        << " a block), " << std::setprecision(4) << m["access_density"].get<double>()
        << " accesses/byte/s, lifetime " << m["lifetime_ms"]["min"].get<uint64_t>() << ".."
        << m["lifetime_ms"]["max"].get<uint64_t>() << " (avg " << count(m["lifetime_ms"]["avg"])
        << ") ms, " << count(m["lifetime_overlaps"]) << " overlaps, "
        << count(m["cpu_migrations"]) << " CPU migrations\n";
  }
  render_stack(r["stack"], depth, out, full);
}

// LLVM MemProf measures: what the runtime saw of each context's blocks.
void measured(const Json &m, const SummaryOptions &opt, std::ostream &out) {
  out << "\nMEMPROF: " << m["contexts"].get<uint64_t>()
      << " allocation contexts measured by LLVM MemProf (no frees, leaks or peak recorded)\n";
  struct Table {
    const char *key, *title;
  };
  static const Table kTables[] = {
      {"accessed", "ACCESSED: contexts by accesses to their blocks"},
      {"hot", "HOT: contexts by accesses per byte per second of lifetime"},
      {"cold", "COLD: contexts by bytes allocated per access"},
      {"long_lived", "LONG-LIVED: contexts by summed block lifetimes"},
      {"overlapping", "OVERLAPPING: contexts by blocks allocated before the previous one died"},
      {"migrating", "MIGRATING: contexts by blocks freed on another CPU"},
  };
  for (const Table &t : kTables) {
    out << "\n" << t.title << "\n";
    for (const Json &r : m[t.key]) row(r, bytes(r["alloc_bytes"]), opt.stack_depth, opt.full, out);
  }
}

// " at 0.466 s" when the peak's time is known.
std::string peak_time_text(const Json &seconds) {
  if (seconds.is_null()) return "";
  char buf[48];
  snprintf(buf, sizeof buf, " at %.3f s", seconds.get<double>());
  return buf;
}

// Memory by function (by line with --by-line), as heaptrack_print gives
// it: in the function itself, and with what it calls; the functions with
// the most bytes in themselves, and with --full with what they call.
void functions(const Json &f, const SummaryOptions &opt, std::ostream &out) {
  const bool by_line = f["by"] == "line";
  auto table = [&](const char *key, const char *order) {
    if (f[key].empty()) return;
    // Two groups of the same four columns: in the function (line) itself,
    // then with what it calls.
    out << "\n" << (by_line ? "LINES" : "FUNCTIONS") << ": by bytes allocated " << order << "\n"
        << "  " << std::setw(40) << (by_line ? "at the line itself" : "in the function itself")
        << std::setw(41) << "with what it calls" << "\n  ";
    for (const char *gap : {"", " "})
      out << gap << std::setw(10) << "bytes" << std::setw(10) << "calls" << std::setw(10) << "leaked"
          << std::setw(10) << "peak";
    out << "  " << (by_line ? "line" : "function") << "\n";
    for (const Json &r : f[key]) {
      out << "  ";
      for (const char *part : {"self", "total"}) {
        const Json &p = r[part];
        out << (part[0] == 't' ? " " : "") << std::setw(10) << bytes(p["alloc_bytes"])
            << std::setw(10) << count(p["alloc_count"]) << std::setw(10) << bytes(p["leaked_bytes"])
            << std::setw(10) << bytes(p["peak_bytes"]);
      }
      out << "  " << r["function"].get<std::string>() << "\n";
    }
  };
  table("by_self", by_line ? "at the line itself" : "in the function itself");
  if (opt.full) table("by_total", by_line ? "at the line and what it calls" : "in the function and what it calls");
}

// A heap snapshot (--heap-snap-interval, --heap-snap-events) and its holders.
void snapshot(const Json &s, const SummaryOptions &opt, std::ostream &out) {
  out << "\n===== HEAP SNAPSHOT, pid " << s["pid"].get<uint64_t>() << ", ";
  if (s["time_ns"].is_null())
    out << s["events"].get<uint64_t>() << " events passed";
  else
    out << std::fixed << std::setprecision(3) << double(s["time_ns"].get<uint64_t>()) / 1e9
        << std::defaultfloat << " seconds passed";
  out << ": heap " << bytes(s["heap_bytes"]) << "\n";
  for (const Json &h : s["holders"]) {
    out << "  " << bytes(h["bytes"]) << "\n";
    render_stack(h["stack"], opt.stack_depth, out);
  }
}

// Memory by thread, the most bytes allocated first, named as the program
// named them (else by tid): one line each, the top few on one screen.
void memory_threads(const Json &threads, const SummaryOptions &opt, std::ostream &out) {
  if (threads.size() < 2) return;
  const size_t shown = opt.full ? threads.size() : std::min(threads.size(), opt.top);
  out << "  by thread:     " << std::setw(10) << "allocated" << std::setw(10) << "calls"
      << std::setw(10) << "frees" << std::setw(10) << "leaked" << std::setw(10) << "peak"
      << "  thread\n";
  for (size_t i = 0; i < shown; i++) {
    const Json &t = threads[i];
    const std::string name = t["name"];
    const std::string pid = std::to_string(t["pid"].get<uint64_t>()),
                      tid = std::to_string(t["tid"].get<uint64_t>());
    out << "                 " << std::setw(10) << bytes(t["alloc_bytes"]) << std::setw(10)
        << count(t["alloc_count"]) << std::setw(10) << count(t["free_count"]) << std::setw(10)
        << bytes(t["leaked_bytes"]) << std::setw(10) << bytes(t["peak_bytes"]) << "  "
        << (name.empty() ? "tid " + tid + " (pid " + pid + ")" : name + " (pid " + pid + " tid " + tid + ")")
        << "\n";
  }
  if (shown < threads.size()) out << "                 ... " << threads.size() - shown << " more threads\n";
}

// "2026-11-29 06:40:12 UTC" of nanoseconds since the epoch.
std::string utc_time(uint64_t unix_ns) {
  const time_t t = time_t(unix_ns / 1000000000u);
  tm parts{};
  char text[32] = "?";
  if (gmtime_r(&t, &parts)) strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &parts);
  return text;
}

void memory(const Json &m, const SummaryOptions &opt, std::ostream &out) {
  out << "MEMORY\n";
  const bool attached = !m["attached"].empty();
  for (const Json &a : m["attached"])
    out << "  recording began when the agent attached to the running process, pid "
        << a["pid"].get<uint64_t>() << " (attach " << a["attach_number"].get<uint64_t>() << "), at "
        << utc_time(a["start_unix_ns"].get<uint64_t>())
        << ": its allocations before are not seen\n";
  if (m["sampling_mean_bytes"].get<uint64_t>())
    out << "  sampled every " << m["sampling_mean_bytes"].get<uint64_t>()
        << " bytes on average: bytes and counts are estimates scaled up per sample\n";
  const bool estimated = m["calls_estimated"].get<bool>();
  out << "  calls:         " << (estimated ? "~" : "") << count(m["alloc_calls"]) << " allocations, "
      << (estimated ? "~" : "") << count(m["realloc_calls"]) << " reallocations, "
      << (estimated ? "~" : "") << count(m["free_calls"]) << " frees";
  if (estimated) {
    const Json &r = m["recorded_calls"];
    out << " (estimated from the " << r["alloc"].get<uint64_t>() + r["realloc"].get<uint64_t>() + r["free"].get<uint64_t>()
        << " calls sampled)";
  }
  out << "\n"
      << "  allocated:     " << bytes(m["allocated_bytes"]);
  if (m["allocated_bytes_ci95"].get<double>() > 0)
    out << " (+/- " << bytes(m["allocated_bytes_ci95"]) << " at 95% confidence)";
  out << " in " << count(m["allocated_blocks"]) << " blocks\n"
      << "  peak heap:     " << bytes(m["peak_bytes"]) << peak_time_text(m["peak_time_s"]);
  // The writer's exact count, and when the peak was reached.
  for (const Json &p : m["peak_counted"]) {
    char at[32];
    snprintf(at, sizeof at, "%.3f", double(p["time_ns"].get<uint64_t>()) / 1e9);
    out << (m["peak_counted"].size() > 1 ? "\n    pid " + std::to_string(p["pid"].get<uint64_t>()) + ":" : "")
        << " (counted " << bytes(p["counted_bytes"]) << " at " << at << " s)";
  }
  if (!m["peak_counted"].empty())
    out << "\n                 counted: the agent's own count of the live heap, in the sizes "
           "the allocator gave (malloc_usable_size)";
  out << "\n"
      << (attached ? "  still live:    " : "  leaked:        ") << (estimated ? "~" : "")
      << bytes(m["leaked_bytes"]) << " in " << (estimated ? "~" : "") << count(m["leaked_blocks"])
      << " blocks"
      << (estimated ? " (estimated from the " + std::to_string(m["leaked_blocks_recorded"].get<uint64_t>()) +
                          " blocks sampled)"
                    : std::string())
      << (attached ? " allocated while recording and live when it ended (the process ran on)" : "")
      << "\n"
      << "  temporary:     " << m["temporary_allocations"].get<uint64_t>()
      << " allocations freed right after they were made (heaptrack's rule, a realloc counting "
         "as a free and an allocation)\n"
      ;
  if (opt.full || m["unknown_frees"].get<uint64_t>())
    out << "  unknown frees: " << m["unknown_frees"].get<uint64_t>()
        << " frees and reallocations of pointers never seen allocated\n";
  if (attached)
    out << "  freed before:  " << m["frees_before_recording"].get<uint64_t>()
        << " frees and reallocations of blocks allocated before recording began\n";
  if (!m["before_start"].is_null()) {
    const uint64_t n = m["before_start"]["allocations"];
    out << "  before start:  " << n << (n == 1 ? " allocation" : " allocations") << " of "
        << bytes(m["before_start"]["bytes"])
        << " made before the agent started (other libraries' constructors, such as libstdc++'s "
           "emergency exception pool): counted, not recorded\n";
  }
  if (!m["missed_events"].empty()) {
    out << "  uncertain:     leaks and frees, the agent having missed events (";
    const char *sep = "";
    for (const auto &kv : m["missed_events"].items())
      out << sep << kv.key() << " " << kv.value().get<uint64_t>(), sep = ", ";
    out << ")\n";
  }
  double by_default = 0;
  uint64_t default_blocks = 0;
  for (const Json &u : m["suppressed"]) {
    if (u["default"].get<bool>()) {
      by_default += u["bytes"].get<double>();
      default_blocks += u["blocks"].get<uint64_t>();
      continue;
    }
    out << "  suppressed:    " << bytes(u["bytes"]) << " in " << u["blocks"].get<uint64_t>()
        << " leaked blocks by leak:" << u["pattern"].get<std::string>() << "\n";
  }
  if (default_blocks)
    out << "  not leaks:     " << bytes(Json(by_default)) << " in " << default_blocks
        << " blocks the C library and the loader keep to the end (--no-default-suppressions)\n";
  memory_threads(m["threads"], opt, out);

  if (opt.full && m.contains("object_types")) render_object_types(m["object_types"], out);

  for (const StackList &t : kStackLists) {
    if (!opt.full && !t.on_one_screen) continue;
    if (!opt.full && m[t.key].empty()) continue;
    // (Attached, the blocks live at the end were live at the detach.)
    const bool live_at_detach = attached && std::string(t.key) == "leaks";
    out << "\n" << (live_at_detach ? "STILL LIVE: stacks holding memory when recording ended" : t.title)
        << "\n";
    const Json &rows = m[t.key];
    // (On one screen, rows that read the same without their code without
    // symbols show it: sqlite3's stacks differ in its static functions.)
    const std::vector<bool> alike = rows_alike_without_stripped_code(rows, opt.stack_depth);
    for (size_t i = 0; i < rows.size(); i++) {
      const Json &r = rows[i];
      const Json figure = r[t.figure].get<double>();
      row(r, *t.unit ? count(figure) + t.unit : bytes(figure), opt.stack_depth, opt.full || alike[i],
          out);
    }
  }

  functions(m["functions"], opt, out);
  if (!m["measured"].is_null()) measured(m["measured"], opt, out);
  for (const Json &s : m["snapshots"]) snapshot(s, opt, out);  // asked for
  if (m["snapshots_dropped"].get<uint64_t>())
    out << "  (" << m["snapshots_dropped"].get<uint64_t>() << " more snapshots not kept)\n";
  if (!opt.full) return;

  out << "\nSIZES: allocations by size\n";
  for (const Json &b : m["size_histogram"])
    out << "  " << std::setw(20) << b["min"].get<uint64_t>() << " .. " << std::setw(20)
        << b["max"].get<uint64_t>() << "  " << b["count"].get<uint64_t>() << "\n";

  const Json &series = m["over_time"];
  if (!series.empty()) {
    out << "\nHEAP OVER TIME\n";
    const size_t step = series.size() > 24 ? series.size() / 24 : 1;
    for (size_t i = 0; i < series.size(); i++) {
      if (i % step && i + 1 != series.size()) continue;
      const Json &p = series[i];
      out << "  pid " << p["pid"].get<uint64_t>() << "  ";
      if (p["time_ns"].is_null())
        out << "after " << std::setw(10) << p["events"].get<uint64_t>() << " events";
      else
        out << std::fixed << std::setprecision(3) << std::setw(9)
            << double(p["time_ns"].get<uint64_t>()) / 1e9 << " s";
      out << "  heap " << bytes(p["heap_bytes"]);
      if (!p["rss_bytes"].is_null()) out << "  rss " << bytes(Json(double(p["rss_bytes"].get<uint64_t>())));
      out << "\n";
    }
  }

  const Json &mm = m["mmap"];
  if (mm["maps"].get<uint64_t>() || mm["unmaps"].get<uint64_t>()) {
    out << "\nMMAP DOMAIN: anonymous mappings, apart from the heap\n"
        << "  " << mm["maps"].get<uint64_t>() << " maps, " << mm["unmaps"].get<uint64_t>()
        << " unmaps; mapped at the end " << bytes(mm["mapped_bytes"]) << ", peak "
        << bytes(mm["peak_bytes"]) << "\n";
    for (const Json &r : mm["peak"]) {
      out << "  " << bytes(r["peak_bytes"]) << " mapped at the mmap peak\n";
      render_stack(r["stack"], opt.stack_depth, out);
    }
    for (const Json &r : mm["still_mapped"]) {
      out << "  " << bytes(r["live_bytes"]) << " still mapped in " << r["live_blocks"].get<uint64_t>()
          << " mappings\n";
      render_stack(r["stack"], opt.stack_depth, out);
    }
  }
}

void cpu(const Json &c, const SummaryOptions &opt, std::ostream &out) {
  out << "CPU\n";
  for (const Json &s : c["samplers"]) out << "  sampler: " << s.get<std::string>() << "\n";
  out << "  samples: " << count(c["samples"]) << "\n";
  for (const auto &kv : c["vmstates"].items())
    out << "    " << std::setw(8) << kv.key() << " " << count(kv.value()) << "\n";
  const double samples = c["samples"].get<double>(), in_agent = c["in_agent"].get<double>();
  out << "  in the profiler ([libprof]): " << count(c["in_agent"]) << " ("
      << std::fixed << std::setprecision(1) << (samples > 0 ? 100 * in_agent / samples : 0.0)
      << std::defaultfloat << "%)\n";
  // By thread, the busiest first, named as the program named them.
  if (c["threads"].size() > 1) {
    std::vector<Json> threads(c["threads"].begin(), c["threads"].end());
    std::stable_sort(threads.begin(), threads.end(), [](const Json &a, const Json &b) {
      return a["samples"].get<double>() > b["samples"].get<double>();
    });
    const size_t shown = opt.full ? threads.size() : std::min(threads.size(), opt.top);
    out << "  by thread:\n";
    for (size_t i = 0; i < shown; i++) {
      const Json &t = threads[i];
      const std::string name = t["name"];
      out << "    " << std::setw(10) << count(t["samples"]) << "  "
          << (name.empty() ? "(unnamed)" : name) << " (pid " << t["pid"].get<uint64_t>() << " tid "
          << t["tid"].get<uint64_t>() << ")\n";
    }
    if (shown < threads.size()) out << "    ... " << threads.size() - shown << " more threads\n";
  }
  const std::string by = c["by"] == "line" ? "LINES" : "FUNCTIONS";
  auto functions = [&](const Json &rows) {
    for (const Json &f : rows) {
      char percent[16];
      snprintf(percent, sizeof percent, "%6.2f%%", f["percent"].get<double>());
      out << "  " << std::setw(10) << count(f["samples"]) << "  " << percent << "  "
          << f["function"].get<std::string>() << "\n";
    }
  };
  out << "\nHOTTEST " << by << ": samples in the " << (by == "LINES" ? "line" : "function")
      << " itself\n";
  functions(c["self"]);
  out << "\nHOTTEST " << by << ": samples in the " << (by == "LINES" ? "line" : "function")
      << " and what it calls\n";
  functions(c["total"]);
  if (!c["in_nearly_every_sample"].empty()) {
    const Json &left_out = c["in_nearly_every_sample"];
    const size_t shown = opt.full ? left_out.size() : std::min<size_t>(left_out.size(), 6);
    out << "  (left out, in 95% or more of the samples: ";
    for (size_t i = 0; i < shown; i++) out << (i ? ", " : "") << left_out[i].get<std::string>();
    if (shown < left_out.size()) out << " and " << left_out.size() - shown << " more";
    out << ")\n";
  }
  if (!opt.full) return;
  out << "\nHOTTEST STACKS\n";
  for (const Json &s : c["stacks"]) {
    out << "  " << count(s["samples"]) << " samples, " << s["vmstate"].get<std::string>() << "\n";
    render_stack(s["stack"], opt.stack_depth, out);
  }
}

// The run's processes when the summary is its main program's: one line
// each, the main program's first, the others by bytes allocated.
void processes(const Json &list, std::ostream &out) {
  constexpr size_t kShown = 5;
  std::map<std::string, size_t> others;
  std::string main;
  for (const Json &p : list)
    if (p["main"].get<bool>())
      main = p["program"];
    else
      others[p["program"]]++;
  out << "PROCESSES: " << list.size() << ", of " << others.size() + 1 << " programs; below is "
      << main << "'s summary, the program that allocated the most (--all-processes: all merged)\n";
  size_t shown = 0;
  for (const Json &p : list) {
    if (shown++ == kShown) break;
    out << "  " << (p["main"].get<bool>() ? "* " : "  ") << std::left << std::setw(16)
        << p["program"].get<std::string>() << std::right << " pid " << std::setw(7)
        << p["pid"].get<uint64_t>() << "  allocated " << std::setw(9) << bytes(p["allocated_bytes"])
        << "  peak " << std::setw(9) << bytes(p["peak_bytes"]) << "  leaked " << std::setw(9)
        << bytes(p["leaked_bytes"]);
    if (p["samples"].get<double>() > 0) out << "  " << count(p["samples"]) << " CPU samples";
    out << "  " << basename_of(p["file"].get<std::string>()) << "\n";
  }
  if (list.size() > kShown) {
    std::map<std::string, size_t> rest;
    for (size_t i = kShown; i < list.size(); i++) rest[list[i]["program"]]++;
    out << "  ... " << list.size() - kShown << " more:";
    const char *sep = " ";
    for (const auto &kv : rest) out << sep << kv.first << " x" << kv.second, sep = ", ";
    out << "\n";
  }
  out << "\n";
}

}  // namespace

const StackList kStackLists[5] = {
    {"peak", "PEAK HEAP: stacks holding it at the peak", "peak_bytes", "", true},
    {"leaks", "LEAKS: stacks holding memory at the end", "live_bytes", "", true},
    {"allocated", "ALLOCATED: stacks by bytes allocated", "alloc_bytes", "", false},
    {"calls", "CALLS: stacks by allocations", "alloc_count", " calls", false},
    {"temporary", "TEMPORARY: stacks by allocations freed right after they were made", "temporary",
     " temporary", true},
};

void render_stack(const Json &frames, size_t depth, std::ostream &out, bool show_stripped) {
  size_t shown = 0, done = 0;
  while (done < frames.size()) {
    if (depth && shown == depth) {
      out << "      ... " << frames.size() - done << " more\n";
      return;
    }
    const Json &f = frames[done];
    // Stripped code in a row is one line, so that the frames with names
    // come within the depth: "lua5.4: 3 functions without symbols (...)".
    const std::string module = stripped_module(f);
    size_t stripped = 0;
    while (!module.empty() && done + stripped < frames.size() &&
           stripped_module(frames[done + stripped]) == module)
      stripped++;
    if (stripped > 0 && !show_stripped) {  // one screen: named frames only
      done += stripped;
      continue;
    }
    if (stripped > 1) {
      out << "      " << module << ": " << stripped << " functions without symbols (";
      for (size_t i = 0; i < stripped; i++)
        out << (i ? " " : "") << frames[done + i]["function"].get<std::string>().substr(module.size() + 1);
      out << ")\n";
      done += stripped;
      shown++;
      continue;
    }
    // A frame repeated (recursion) is one line: "name ×N".
    size_t same = 1;
    while (done + same < frames.size() && frames[done + same] == f) same++;
    out << "      " << (f["kind"] == "inlined" ? "(inlined) " : "") << frame_label(f);
    if (same > 1) out << " ×" << same;
    out << "\n";
    done += same;
    shown++;
  }
  if (frames.empty()) out << "      [no stack]\n";
  else if (shown == 0) out << "      (" << frames.size() << " frames without symbols)\n";
}

std::vector<bool> rows_alike_without_stripped_code(const Json &rows, size_t depth) {
  std::map<std::string, std::vector<size_t>> by_text;
  for (size_t i = 0; i < rows.size(); i++) {
    std::ostringstream text;
    render_stack(rows[i]["stack"], depth, text, false);
    by_text[text.str()].push_back(i);
  }
  std::vector<bool> alike(rows.size(), false);
  for (const auto &kv : by_text)
    if (kv.second.size() > 1)
      for (size_t i : kv.second) alike[i] = true;
  return alike;
}

void render_summary(const Json &summary, const SummaryOptions &opt, std::ostream &out) {
  std::ostringstream text;
  if (summary.contains("processes")) processes(summary["processes"], text);
  for (const Json &s : summary["streams"])
    if (!s["window"].is_null()) text << window_line(s["window"], s["pid"].get<uint64_t>()) << "\n";
  if (!summary["memory"].is_null()) memory(summary["memory"], opt, text);
  if (!summary["cpu"].is_null()) {
    if (!summary["memory"].is_null()) text << "\n";
    cpu(summary["cpu"], opt, text);
  }
  if (!opt.full) {
    text << "\n(--full: "
         << (summary["memory"].is_null() ? "" : "frames without symbols, stacks by bytes "
                                                 "allocated and by calls, every thread, object "
                                                 "types, sizes, the heap over time, mmap, ")
         << (summary["cpu"].is_null() ? "" : "the hottest stacks, threads, ")
         << "the agent's counters and the streams)\n";
    out << text.str();
    return;
  }
  if (!summary["agent"].empty()) {
    text << "\nAGENT COUNTERS\n";
    for (const auto &kv : summary["agent"].items())
      text << "  " << kv.key() << ": " << kv.value().get<uint64_t>() << "\n";
  }
  text << "\nSTREAMS\n";
  for (const Json &s : summary["streams"]) {
    text << "  " << s["path"].get<std::string>() << ": " << bytes(s["file_bytes"]);
    if (s["compressed"].get<bool>()) text << " (zstd; " << bytes(s["stream_bytes"]) << " decompressed)";
    text << ", " << s["events"].get<uint64_t>() << " events";
    if (!s["bytes_per_event"].is_null())
      text << ", " << std::fixed << std::setprecision(2) << s["bytes_per_event"].get<double>()
           << std::defaultfloat << " bytes per event";
    text << "\n";
  }
  for (const Json &s : summary["streams"])
    for (const Json &m : s["markers"])
      text << "marker " << m["label"].get<std::string>() << " at "
           << double(m["time_ns"].get<uint64_t>()) / 1e9 << " s (pid " << s["pid"].get<uint64_t>()
           << ")\n";
  out << text.str();
}

}  // namespace prof
