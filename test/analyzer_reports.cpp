// prof-analyze, run as a program, against independent truths: the reference
// parser's reports of the genuine fixtures, heap figures computed here from
// the decoded events, the VM's own sysprof counters, synthetic streams whose
// figures are known by construction, and a real program under the agent.
#include <catch2/catch.hpp>

#include <deque>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "agent_run.h"
#include "analyzer_streams.h"
#include "fixture_path.h"
#include "temp_files.h"

using namespace analyzer_test;
using Json = nlohmann::json;

namespace {

const std::string kAnalyzer = PROF_ANALYZER_PATH;

RunResult analyze(std::vector<std::string> args) {
  args.insert(args.begin(), kAnalyzer);
  return run_bare(args);
}

std::string basename_of_path(const std::string &path) {
  return path.substr(path.rfind('/') + 1);
}

std::string text(const std::string &path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> lines(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A report split into lines; in the three event sections, each row with its
// Overrides block is one entry, and entries are sorted within runs of equal
// event counts (the only order the reference leaves open).
std::vector<std::string> canonical(const std::string &report) {
  std::vector<std::string> out;
  std::vector<std::pair<uint64_t, std::string>> rows;
  auto flush_rows = [&] {
    for (size_t i = 0, j; i < rows.size(); i = j) {
      std::vector<std::string> group;
      for (j = i; j < rows.size() && rows[j].first == rows[i].first; j++)
        group.push_back(rows[j].second);
      std::sort(group.begin(), group.end());
      out.insert(out.end(), group.begin(), group.end());
    }
    rows.clear();
  };
  bool in_overrides = false;
  for (const std::string &line : lines(report)) {
    const auto events = line.find(" events\t");
    if (events != std::string::npos && line[0] != '\t') {
      const auto colon = line.rfind(": ", events);
      rows.emplace_back(std::stoull(line.substr(colon + 2, events - colon - 2)), line);
      in_overrides = false;
    } else if (!rows.empty() && (line[0] == '\t' || (line.empty() && in_overrides))) {
      // An Overrides block, and the blank line that closes it.
      rows.back().second += "\n" + line;
      in_overrides = !line.empty();
    } else {
      flush_rows();
      out.push_back(line);
    }
  }
  flush_rows();
  return out;
}

}  // namespace

TEST_CASE("memprof reports of the genuine fixtures match the reference parser") {
  for (const char *name : {"m1_seed_example", "m2_jit_traces", "m3_cfuncs_leaks"}) {
    SECTION(name) {
      const std::string bin = fixture(std::string(name) + ".memprof.bin");
      const RunResult full = analyze({"report", "--compat-heap-summary", bin});
      CHECK(full.exit_code == 0);
      CHECK(full.err.empty());
      CHECK(canonical(full.out) == canonical(text(fixture(std::string(name) + ".memprof.txt"))));
      const RunResult leaks = analyze({"report", "--leak-only", "--compat-heap-summary", bin});
      CHECK(leaks.out == text(fixture(std::string(name) + ".memprof.leak-only.txt")));
    }
  }
}

namespace {

// The default HEAP SUMMARY computed here from the decoded events: each live
// block is credited to the name of the event that made it; "allocs" counts
// blocks made under a name, "frees" those of them freed or reallocated.
// Names follow tools/utils/symtab.lua, with the symbols known at the event.
struct HeapRow {
  int64_t holds = 0;
  uint64_t allocs = 0, frees = 0;
  bool operator==(const HeapRow &o) const {
    return holds == o.holds && allocs == o.allocs && frees == o.frees;
  }
};

std::map<std::string, HeapRow> heap_summary_of(const std::string &path) {
  std::map<uint64_t, std::pair<std::string, uint64_t>> lfuncs;  // addr -> (chunk, line)
  std::map<uint64_t, std::string> cfuncs;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> traces;  // no -> (addr, line)
  auto add = [&](const Symbol &s) {
    if (s.type == kSymLfunc) lfuncs[s.addr] = {s.name, s.line};
    if (s.type == kSymCfunc) cfuncs[s.addr] = s.name;
    if (s.type == kSymTrace) traces[s.traceno] = {s.addr, s.line};
  };
  auto lua_name = [&](uint64_t addr, uint64_t line) -> std::string {
    if (addr == 0) return "INTERNAL";
    if (lfuncs.count(addr)) return lfuncs[addr].first + ":" + std::to_string(line);
    auto c = cfuncs.upper_bound(addr);
    char hex[32];
    if (c == cfuncs.begin()) {
      snprintf(hex, sizeof hex, "CFUNC %#llx", (unsigned long long)addr);
      return hex;
    }
    --c;
    snprintf(hex, sizeof hex, ":%#llx", (unsigned long long)c->first);
    return c->second + hex;
  };
  auto name_of = [&](const GuestLoc &loc) -> std::string {
    if (loc.traceno == 0) return lua_name(loc.addr, loc.line);
    std::string t = "TRACE [" + std::to_string(loc.traceno) + "]";
    if (traces.count(loc.traceno))
      t += " started at " + lua_name(traces[loc.traceno].first, traces[loc.traceno].second);
    return t;
  };

  std::map<std::string, HeapRow> rows;
  std::map<uint64_t, std::deque<std::pair<std::string, uint64_t>>> live;  // oldest first
  const int fd = open(path.c_str(), O_RDONLY);
  ByteReader in(fd);
  SymtabReader symtab(in);
  for (Symbol s; symtab.next(s);) add(s);
  MemprofReader reader(in);
  for (MemprofEvent ev; reader.next(ev);) {
    if (ev.record == MemprofRecord::Symbol) add(ev.symbol);
    if (ev.record == MemprofRecord::Symbol || ev.record == MemprofRecord::Ext) continue;
    if (ev.record != MemprofRecord::Alloc && live.count(ev.oaddr)) {
      auto &q = live[ev.oaddr];
      rows[q.front().first].holds -= int64_t(q.front().second);
      rows[q.front().first].frees++;
      q.pop_front();
      if (q.empty()) live.erase(ev.oaddr);
    }
    if (ev.record == MemprofRecord::Free) continue;
    const std::string name = name_of(ev.loc);
    live[ev.naddr].emplace_back(name, ev.nsize);
    rows[name].holds += int64_t(ev.nsize);
    rows[name].allocs++;
  }
  close(fd);
  std::map<std::string, HeapRow> held;
  for (const auto &kv : rows)
    if (kv.second.holds > 0) held.insert(kv);
  return held;
}

// A CPU stream's start: an empty symbol table, then the sysprof prologue,
// the process (77, /bin/y) and its sampler.
VecOut cpu_stream_head() {
  using namespace prof;
  VecOut o;
  put_prologue(o, SectionKind::Symtab, false);
  put_symtab_final(o);
  put_prologue(o, SectionKind::Sysprof, true);
  put_ext(o, ext::Process{77, 1, 0, "/bin/y"});
  put_ext(o, ext::Sampler{1, 2, 1000000});
  return o;
}

}  // namespace

TEST_CASE("the default heap summary credits each live block to the event that made it") {
  for (const char *name : {"m1_seed_example", "m2_jit_traces", "m3_cfuncs_leaks"}) {
    SECTION(name) {
      const std::string bin = fixture(std::string(name) + ".memprof.bin");
      const RunResult r = analyze({"report", "--leak-only", "--json", bin});
      REQUIRE(r.exit_code == 0);
      std::map<std::string, HeapRow> got;
      const Json report = Json::parse(r.out);
      for (const Json &row : report["heap_summary"])
        got[row["location"]] = HeapRow{row["holds"], row["allocs"], row["frees"]};
      const auto expected = heap_summary_of(bin);
      CHECK(got.size() == expected.size());
      for (const auto &kv : expected) {
        INFO(kv.first);
        REQUIRE(got.count(kv.first));
        CHECK(got[kv.first].holds == kv.second.holds);
        CHECK(got[kv.first].allocs == kv.second.allocs);
        CHECK(got[kv.first].frees == kv.second.frees);
      }
      // The text report shows the same rows, largest first.
      const RunResult t = analyze({"report", "--leak-only", bin});
      const auto text_lines = lines(t.out);
      REQUIRE(text_lines.size() == expected.size() + 2);
      CHECK(text_lines.front() == "HEAP SUMMARY:");
    }
  }
}

TEST_CASE("human-readable units and ALIASES of chunks with line breaks follow the reference") {
  // A genuine stream: prototype 0x100 of "@h.lua", prototype 0x200 of a
  // load()ed string; one allocation per line, of sizes chosen per unit.
  VecOut o;
  put_prologue(o, SectionKind::Symtab, false);
  Symbol file{kSymLfunc, 0x100, 1, 0, "@h.lua"};
  Symbol chunk{kSymLfunc, 0x200, 1, 0, "return 1\nlocal x = 2\n\nreturn x"};
  put_symtab_entry(o, file);
  put_symtab_entry(o, chunk);
  put_symtab_final(o);
  put_prologue(o, SectionKind::Memprof, false);
  const uint64_t sizes[] = {1023, 1024, 1536, 3ull << 30, 4ull << 40};
  for (uint64_t line = 1; line <= 5; line++)
    put_memprof_event(o, AllocEvent{kAeventAlloc, GuestLoc{kAsourceLfunc, 0x100, line, 0}, false, 0,
                                    0, 0, 0, 0x1000 * line, sizes[line - 1]});
  put_memprof_event(o, AllocEvent{kAeventAlloc, GuestLoc{kAsourceLfunc, 0x200, 3, 0}, false, 0, 0,
                                  0, 0, 0x9000, 10});
  put_memprof_epilogue(o);
  const TempFile stream(o.b);
  const RunResult r = analyze({"report", "--human-readable", stream.path});
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "ALLOCATIONS\n"
        "@h.lua:1: 1 events\t+1023B\t-0B\n"
        "@h.lua:2: 1 events\t+1KiB\t-0B\n"
        "@h.lua:3: 1 events\t+1.50KiB\t-0B\n"
        "@h.lua:4: 1 events\t+3GiB\t-0B\n"
        "@h.lua:5: 1 events\t+4096GiB\t-0B\n"
        "function_alias_1:3: 1 events\t+10B\t-0B\n"
        "\n"
        "REALLOCATIONS\n"
        "\n"
        "DEALLOCATIONS\n"
        "\n"
        "HEAP SUMMARY:\n"
        "@h.lua:5 holds 4096GiB: 1 allocs, 0 frees\n"
        "@h.lua:4 holds 3GiB: 1 allocs, 0 frees\n"
        "@h.lua:3 holds 1.50KiB: 1 allocs, 0 frees\n"
        "@h.lua:2 holds 1KiB: 1 allocs, 0 frees\n"
        "@h.lua:1 holds 1023B: 1 allocs, 0 frees\n"
        "function_alias_1:3 holds 10B: 1 allocs, 0 frees\n"
        "\n"
        "ALIASES:\n"
        "function_alias_1:\n"
        "1\t| return 1\n"
        "2\t| local x = 2\n"
        "3\t| return x\n"
        "\n\n");
}

TEST_CASE("sysprof samples per VM state match the VM's own counters") {
  for (const char *name : {"s_lua_L", "s_lua_C"}) {
    SECTION(name) {
      const std::string bin = fixture(std::string(name) + ".sysprof.bin");
      const RunResult r = analyze({"summary", "--json", bin});
      REQUIRE(r.exit_code == 0);
      const Json cpu = Json::parse(r.out)["cpu"];
      std::map<std::string, double> counters;
      std::istringstream in(text(fixture(std::string(name) + ".counters.txt")));
      for (std::string field; in >> field;) {
        const auto eq = field.find('=');
        counters[field.substr(0, eq)] = std::stod(field.substr(eq + 1));
      }
      CHECK(cpu["samples"].get<double>() == counters.at("samples"));
      for (const auto &kv : counters)
        if (kv.first != "samples") CHECK(cpu["vmstates"].value(kv.first, 0.0) == kv.second);

      // Folded by VM state: each state's lines add up to its counter.
      const RunResult f = analyze({"folded", "--by-vmstate", bin});
      REQUIRE(f.exit_code == 0);
      std::map<std::string, double> folded;
      for (const std::string &line : lines(f.out)) {
        const size_t count = line.rfind(' ');
        folded[line.substr(0, std::min(line.find(';'), count))] += std::stod(line.substr(count + 1));
      }
      for (const auto &kv : counters)
        if (kv.first != "samples" && kv.second > 0) CHECK(folded[kv.first] == kv.second);
    }
  }
}

TEST_CASE("host frames of genuine sysprof stacks are named as the reference names them") {
  // The reference's folded stacks are truncated, but the host frames it does
  // print are named by the same floor lookup in the C symbols ("name:0xaddr").
  auto frames = [](const std::string &folded, char count_separator, bool strip_address) {
    std::set<std::string> names;
    for (const std::string &line : lines(folded)) {
      std::istringstream stack(line.substr(0, line.rfind(count_separator)));
      for (std::string f; std::getline(stack, f, ';');) {
        if (strip_address && f.find(":0x") != std::string::npos) f.resize(f.rfind(":0x"));
        if (!f.empty() && f[0] != '@' && f.rfind("ffunc#", 0) != 0) names.insert(f);
      }
    }
    return names;
  };
  const RunResult ours = analyze({"folded", fixture("s_lua_C.sysprof.bin")});
  const std::set<std::string> reference =
      frames(text(fixture("s_lua_C.sysprof.folded")), '\t', true);
  CHECK(reference.size() > 5);
  CHECK(frames(ours.out, ' ', false) == reference);
}

TEST_CASE("the native summary of a libprof stream gives the figures it was built with") {
  const TempFile stream(native_memory_stream());
  const RunResult r = analyze({"summary", "--json", "--heap-snap-interval", "1", stream.path});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  const Json j = Json::parse(r.out);
  const Json m = j["memory"];
  CHECK(m["alloc_calls"] == 16);
  CHECK(m["realloc_calls"] == 1);
  CHECK(m["free_calls"] == 12);
  CHECK(m["allocated_bytes"] == 1100 + 5300);
  CHECK(m["peak_bytes"] == 6000);
  CHECK(m["leaked_bytes"] == 4300);
  CHECK(m["leaked_blocks"] == 5);
  CHECK(m["temporary_allocations"] == 1);
  CHECK(m["unknown_frees"] == 1);

  auto stack = [](const Json &row) {
    std::string s;
    for (const Json &f : row["stack"]) s += f["function"].get<std::string>() + ";";
    return s;
  };
  REQUIRE(m["peak"].size() == 2);
  CHECK(stack(m["peak"][0]) == "0x3000;0x1000;");
  CHECK(m["peak"][0]["peak_bytes"] == 5000);
  CHECK(stack(m["peak"][1]) == "0x2000;0x1000;");
  CHECK(m["peak"][1]["peak_bytes"] == 1000);
  REQUIRE(m["leaks"].size() == 1);
  const Json b = m["leaks"][0];
  CHECK(stack(b) == "0x3000;0x1000;");
  CHECK(b["live_bytes"] == 4300);
  CHECK(b["live_blocks"] == 5);
  CHECK(b["allocs"] == 6);
  CHECK(b["size"] == Json{{"min", 300}, {"avg", 5300.0 / 6}, {"max", 1000}});
  CHECK(b["lifetime"] == Json{{"min", 17}, {"avg", 17.0}, {"max", 17}});
  REQUIRE(m["temporary"].size() == 1);
  const Json a = m["temporary"][0];
  CHECK(stack(a) == "0x2000;0x1000;");
  CHECK(a["temporary"] == 1);
  CHECK(a["frees"] == 11);
  CHECK(a["lifetime"] == Json{{"min", 1}, {"avg", (9 * 15 + 17 + 1) / 11.0}, {"max", 17}});
  CHECK(m["calls"][0]["alloc_count"] == 11);
  CHECK(m["allocated"][0]["alloc_bytes"] == 5300);

  std::map<uint64_t, uint64_t> hist;
  for (const Json &h : m["size_histogram"]) hist[h["min"]] = h["count"];
  CHECK(hist == std::map<uint64_t, uint64_t>{{64, 11}, {256, 1}, {512, 5}});

  REQUIRE(m["over_time"].size() == 2);
  CHECK(m["over_time"][0] == Json{{"pid", 42}, {"time_ns", 1000000000}, {"events", 15},
                                  {"heap_bytes", 6000}, {"rss_bytes", 1 << 20}});
  CHECK(m["over_time"][1]["heap_bytes"] == 4300);
  CHECK(m["over_time"][1]["rss_bytes"] == 2 << 20);
  REQUIRE(m["snapshots"].size() == 2);
  CHECK(m["snapshots"][0]["heap_bytes"] == 6000);
  REQUIRE(m["snapshots"][0]["holders"].size() == 2);
  CHECK(m["snapshots"][0]["holders"][0]["bytes"] == 5000);
  CHECK(m["snapshots"][0]["holders"][1]["bytes"] == 1000);
  CHECK(m["snapshots"][1]["time_ns"] == 2000000000);
  REQUIRE(m["snapshots"][1]["holders"].size() == 1);
  CHECK(m["snapshots"][1]["holders"][0]["bytes"] == 4300);

  const Json mm = m["mmap"];
  CHECK(mm["maps"] == 1);
  CHECK(mm["unmaps"] == 1);
  CHECK(mm["mapped_bytes"] == 48 * 1024);
  CHECK(mm["peak_bytes"] == 64 * 1024);
  REQUIRE(mm["still_mapped"].size() == 1);
  CHECK(mm["still_mapped"][0]["live_blocks"] == 2);  // the two ends of the mapping
  CHECK(stack(mm["still_mapped"][0]) == "0x3000;0x1000;");

  CHECK(j["agent"] == Json{{"unwind_failures", 3}});
  CHECK(j["streams"][0]["pid"] == 42);
  CHECK(j["streams"][0]["markers"] == Json::array({{{"time_ns", 1500000000}, {"label", "phase 2"}}}));

  // Snapshots every 12 events: after event 12 (A 1000, B 2000) and 24 (A 100, B 5000).
  const Json e =
      Json::parse(analyze({"summary", "--json", "--heap-snap-events", "12", stream.path}).out);
  REQUIRE(e["memory"]["snapshots"].size() == 2);
  CHECK(e["memory"]["snapshots"][0]["heap_bytes"] == 3000);
  CHECK(e["memory"]["snapshots"][0]["holders"][0]["bytes"] == 2000);
  CHECK(e["memory"]["snapshots"][1]["heap_bytes"] == 5100);
  CHECK(e["memory"]["snapshots"][1]["holders"][1]["bytes"] == 100);

  // The text shows the same figures.
  const RunResult t = analyze({"summary", "--full", stream.path});
  CHECK(t.out.find("  peak heap:     5.86KiB at 1.000 s\n") != std::string::npos);
  CHECK(t.out.find("  leaked:        4.20KiB in 5 blocks\n") != std::string::npos);
  CHECK(t.out.find("  unwind_failures: 3\n") != std::string::npos);
}

TEST_CASE("a compact stream gives the figures of its plain twin, stacks and all") {
  const TempFile compact(native_compact_stream()), plain(native_memory_stream());
  Json figures[2];
  int i = 0;
  for (const TempFile *f : {&compact, &plain}) {
    const RunResult r = analyze({"summary", "--json", f->path});
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    figures[i] = Json::parse(r.out)["memory"];
    // (What the files hold differs: their sizes.)
    for (const char *key : {"stream_bytes", "stream_file_bytes", "bytes_per_event"})
      figures[i].erase(key);
    i++;
  }
  CHECK(figures[0]["alloc_calls"] == 16);
  CHECK(figures[0]["unknown_frees"] == 1);
  CHECK(figures[0].dump(1) == figures[1].dump(1));
  for (const char *command : {"report", "folded"}) {
    INFO(command);
    const RunResult a = analyze({command, compact.path}), b = analyze({command, plain.path});
    CHECK(a.exit_code == 0);
    CHECK(a.out == b.out);
  }
}

TEST_CASE("folded memory stacks, by metric, are the stream's figures") {
  const TempFile stream(native_memory_stream());
  const struct {
    const char *metric, *expected;
  } cases[] = {
      {"alloc-bytes", "0x1000;0x2000 1100\n0x1000;0x3000 5300\n"},
      {"alloc-count", "0x1000;0x2000 11\n0x1000;0x3000 6\n"},
      {"leaked-bytes", "0x1000;0x3000 4300\n"},
      {"peak-bytes", "0x1000;0x2000 1000\n0x1000;0x3000 5000\n"},
  };
  for (const auto &c : cases) {
    INFO(c.metric);
    const RunResult r = analyze({"folded", "--metric", c.metric, stream.path});
    CHECK(r.exit_code == 0);
    CHECK(r.out == c.expected);
  }
  CHECK(analyze({"folded", "--metric", "bogus", stream.path}).exit_code == 2);
}

TEST_CASE("an unknown command is named, and any command-line error exits 2") {
  const TempFile stream(native_memory_stream());
  const RunResult unknown = analyze({"sumary", stream.path});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.out.empty());
  CHECK(unknown.err.find("unknown command 'sumary'") != std::string::npos);
  const RunResult option = analyze({"summary", "--bogus", stream.path});
  CHECK(option.exit_code == 2);
  CHECK(option.out.empty());
  CHECK(option.err.find("--bogus") != std::string::npos);
  CHECK(analyze({"summary", "--top", "0", stream.path}).exit_code == 2);  // out of range
  CHECK(analyze({"summary"}).exit_code == 2);                             // no file
  CHECK(analyze({"summary", stream.path + ".missing"}).exit_code == 2);
  CHECK(analyze({"diff", stream.path}).exit_code == 2);                   // no AFTER
  CHECK(analyze({}).exit_code == 2);                                      // no command
  const RunResult help = analyze({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("speedscope") != std::string::npos);
}

TEST_CASE("the memprof report of a libprof stream names sites by their innermost frame") {
  const TempFile stream(native_memory_stream());
  const RunResult r = analyze({"report", stream.path});
  CHECK(r.out ==
        "ALLOCATIONS\n"
        "0x2000: 11 events\t+1100B\t-0B\n"
        "0x3000: 5 events\t+5000B\t-0B\n"
        "\n"
        "REALLOCATIONS\n"
        "0x3000: 1 events\t+300B\t-1000B\n"
        "\tOverrides:\n"
        "\t\t0x3000\n"
        "\n"
        "\n"
        "DEALLOCATIONS\n"
        "[no stack]: 12 events\t+0B\t-1100B\n"
        "\tOverrides:\n"
        "\t\t0x2000\n"
        "\n"
        "\n"
        "HEAP SUMMARY:\n"
        "0x3000 holds 4300B: 6 allocs, 1 frees\n"
        "\n");
}

TEST_CASE("a parent and its child merge, or stay apart per process") {
  // The same stacks under other node ids in the child: merged by their frames.
  const TempFile parent(native_memory_stream(42, 0));
  const TempFile child(native_memory_stream(43, 100));
  const Json merged = Json::parse(analyze({"summary", "--json", parent.path, child.path}).out);
  CHECK(merged["memory"]["alloc_calls"] == 32);
  CHECK(merged["memory"]["peak_bytes"] == 12000);  // the sum of each process's peak
  CHECK(merged["memory"]["leaked_bytes"] == 8600);
  REQUIRE(merged["memory"]["leaks"].size() == 1);
  CHECK(merged["memory"]["leaks"][0]["live_bytes"] == 8600);
  CHECK(merged["memory"]["leaks"][0]["allocs"] == 12);
  CHECK(merged["memory"]["unknown_frees"] == 2);
  CHECK(merged["streams"].size() == 2);

  const Json apart =
      Json::parse(analyze({"summary", "--json", "--per-process", parent.path, child.path}).out);
  REQUIRE(apart.size() == 2);
  CHECK(apart[0]["file"] == parent.path);
  CHECK(apart[1]["file"] == child.path);
  CHECK(apart[1]["memory"]["peak_bytes"] == 6000);

  CHECK(analyze({"folded", "--metric", "leaked-bytes", parent.path, child.path}).out ==
        "0x1000;0x3000 8600\n");
  CHECK(analyze({"folded", "--per-process", "--metric", "leaked-bytes", parent.path, child.path})
            .out == "[pid 42];0x1000;0x3000 4300\n[pid 43];0x1000;0x3000 4300\n");
  const RunResult report = analyze({"report", "--leak-only", parent.path, child.path});
  CHECK(report.out == "HEAP SUMMARY:\n0x3000 holds 8600B: 12 allocs, 2 frees\n\n");
  const RunResult reports =
      analyze({"report", "--leak-only", "--per-process", parent.path, child.path});
  CHECK(reports.out ==
        "== " + parent.path + "\nHEAP SUMMARY:\n0x3000 holds 4300B: 6 allocs, 1 frees\n\n" +
            "== " + child.path + "\nHEAP SUMMARY:\n0x3000 holds 4300B: 6 allocs, 1 frees\n\n");
}

TEST_CASE("CPU samples of a libprof stream: weights, threads, VM states, guest frames") {
  const TempFile stream(native_cpu_stream());
  const Json cpu = Json::parse(analyze({"summary", "--json", stream.path}).out)["cpu"];
  CHECK(cpu["samples"] == 5);
  CHECK(cpu["vmstates"] == Json{{"NATIVE", 4}, {"LFUNC", 1}});
  // (The stream names no thread: "".)
  CHECK(cpu["threads"] == Json::array({{{"pid", 77}, {"tid", 7}, {"name", ""}, {"samples", 4}},
                                       {{"pid", 77}, {"tid", 8}, {"name", ""}, {"samples", 1}}}));
  CHECK(cpu["samplers"] == Json::array({"perf task-clock, CALLGRAPH mode, every 1000 us"}));
  CHECK(cpu["self"][0] == Json{{"function", "0x3000"}, {"samples", 4}, {"percent", 80.0}});
  // 0x1000 is in all 5 samples: left out of the total table, by name.
  CHECK(cpu["in_nearly_every_sample"] == Json::array({"0x1000"}));
  CHECK(cpu["total"][0] == Json{{"function", "0x2000"}, {"samples", 4}, {"percent", 80.0}});
  CHECK(analyze({"folded", stream.path}).out == "0x1000;0x2000;0x3000 4\n0x1000;@g.lua:9 1\n");
  CHECK(analyze({"folded", "--by-vmstate", stream.path}).out ==
        "LFUNC;0x1000;@g.lua:9 1\nNATIVE;0x1000;0x2000;0x3000 4\n");
}

TEST_CASE("the total CPU table leaves out functions in 95% or more of the samples") {
  VecOut o = cpu_stream_head();
  put_ext(o, ext::Thread{7});
  SysprofSample s;
  s.vmstate = kVmstNative;
  // 0x1000 is in 20 of 20 samples, 0x2000 (a thread's start) in 19: both
  // left out; 0x3000 in 10, 0x5000 in 9, 0x4000 in 1.
  for (const auto &[stack, weight] :
       std::vector<std::pair<std::vector<uint64_t>, uint64_t>>{
           {{0x3000, 0x2000, 0x1000}, 10}, {{0x5000, 0x2000, 0x1000}, 9}, {{0x4000, 0x1000}, 1}}) {
    s.host = stack;
    put_ext(o, ext::Weight{weight});
    put_sysprof_sample(o, s);
  }
  put_sysprof_epilogue(o);
  const TempFile stream(o.b);
  const Json cpu = Json::parse(analyze({"summary", "--json", stream.path}).out)["cpu"];
  CHECK(cpu["samples"] == 20);
  CHECK(cpu["in_nearly_every_sample"] == Json::array({"0x1000", "0x2000"}));
  REQUIRE(cpu["total"].size() == 3);
  CHECK(cpu["total"][0] == Json{{"function", "0x3000"}, {"samples", 10}, {"percent", 50.0}});
  CHECK(cpu["self"][0] == Json{{"function", "0x3000"}, {"samples", 10}, {"percent", 50.0}});
}

TEST_CASE("a stream its process did not finish is read whole, with one warning") {
  // What the agent's writer leaves of a process that died: its events, then
  // an unclean-end record (2.5 s in, 96 bytes lost), the stats, the epilogue.
  VecOut o;
  put_prologue(o, SectionKind::Symtab, false);
  put_symtab_final(o);
  put_prologue(o, SectionKind::Memprof, true);
  put_ext(o, ext::Process{42, 1, 0, "/bin/x"});
  put_ext(o, ext::StackHost{1, 0, 0x1000});
  put_memprof_event(o, AllocEvent{kAeventAlloc, GuestLoc{}, true, 1, 0, 0, 0, 0x10000, 100});
  put_ext(o, ext::UncleanEnd{2500000000, 96});
  put_ext(o, ext::Stats{{{"unwind_failures", 0}}});
  put_memprof_epilogue(o);
  const TempFile stream(o.b);
  const std::string &path = stream.path;
  const RunResult r = analyze({"summary", "--json", path});
  CHECK(r.exit_code == 0);
  CHECK(r.err == "prof-analyze: warning: " + path +
                     ": the process ended without finishing its profile (exit_group past exit(), a "
                     "signal or a kill) 2.500 s in; 96 bytes of events its dying threads were writing "
                     "are lost\n");
  const Json j = Json::parse(r.out);
  CHECK(j["streams"][0]["unclean_end"] == Json{{"time_ns", 2500000000}, {"lost_bytes", 96}});
  CHECK(j["streams"][0]["truncated_at"] == nullptr);
  CHECK(j["memory"]["alloc_calls"] == 1);
  CHECK(j["memory"]["leaked_bytes"] == 100);
  unlink(path.c_str());
}

TEST_CASE("bad input: a cut file is reported up to its cut, a corrupt one refused") {
  size_t cut = 0;
  std::vector<uint8_t> bytes = native_memory_stream(42, 0, &cut);
  bytes.resize(cut + 2);  // inside event 27: its header byte, then one byte of a ULEB128
  const TempFile truncated(bytes);
  const RunResult t = analyze({"summary", "--json", truncated.path});
  CHECK(t.exit_code == 0);
  CHECK(t.err == "prof-analyze: warning: " + truncated.path + ": truncated at byte " +
                     std::to_string(cut + 1) +
                     " (input ends inside a ULEB128 value); reporting the records before it\n");
  const Json m = Json::parse(t.out)["memory"];
  CHECK(m["free_calls"] == 10);
  CHECK(m["leaked_bytes"] == 100 + 5000);
  CHECK(Json::parse(t.out)["streams"][0]["truncated_at"] == cut + 1);
  const RunResult tr = analyze({"report", "--leak-only", truncated.path});
  CHECK(tr.exit_code == 0);
  CHECK(tr.out == "HEAP SUMMARY:\n0x3000 holds 5000B: 5 allocs, 0 frees\n"
                  "0x2000 holds 100B: 11 allocs, 10 frees\n\n");

  bytes = native_memory_stream();
  bytes[15] = 0x7f;  // the Process record's header byte becomes an unknown kind
  const TempFile corrupt(bytes);
  for (const char *cmd : {"report", "summary", "folded"}) {
    const RunResult c = analyze({cmd, corrupt.path});
    CHECK(c.exit_code == 2);
    CHECK(c.out.empty());
    CHECK(c.err == "prof-analyze: " + corrupt.path +
                       ": corrupt at byte 15: unknown extension record 0x7f\n");
  }

  const TempFile empty;
  const RunResult e = analyze({"summary", empty.path});
  CHECK(e.exit_code == 2);
  CHECK(e.err == "prof-analyze: " + empty.path +
                     ": an empty file, not a profile stream (did the program run under libprof?)\n");
  CHECK(analyze({"report", fixture("s_lua_C.sysprof.bin")}).exit_code == 2);
}

TEST_CASE("sampled, the heap over time and its peak are the writer's exact count") {
  // mem_peak.c: 1000 blocks of 1000 B, down to 200, up to 1700, down to none.
  const RunResult run = run_under_agent({PROF_PEAK_PROGRAM}, {"PROF_SAMPLE_BYTES=512k"});
  REQUIRE(run.exit_code == 0);
  const Recorded rec = read_only_memprof(run);
  REQUIRE(!rec.heap_totals.empty());
  // The stream: the first top, a record near the valley, then the peak, in
  // time order, and an empty heap at the end.
  auto at_least = [&](size_t from, uint64_t bytes) {
    for (size_t i = from; i < rec.heap_totals.size(); i++)
      if (rec.heap_totals[i].live_bytes >= bytes) return i;
    return rec.heap_totals.size();
  };
  const size_t top = at_least(0, 1000000);
  REQUIRE(top < rec.heap_totals.size());
  CHECK(rec.heap_totals[top].live_bytes == 1000000);
  size_t valley = top;
  for (size_t i = top; i < rec.heap_totals.size() && rec.heap_totals[i].live_bytes <= 1000000; i++)
    if (rec.heap_totals[i].live_bytes < rec.heap_totals[valley].live_bytes) valley = i;
  CHECK(rec.heap_totals[valley].live_bytes >= 200000);
  CHECK(rec.heap_totals[valley].live_bytes <= 200000 + 65536);  // within one step
  const size_t peak = at_least(valley, 1700000);
  REQUIRE(peak < rec.heap_totals.size());
  CHECK(rec.heap_totals[peak].live_bytes == 1700000);
  // 10 ms sleeps apart: the first top, then two sleeps, the peak.
  CHECK(rec.heap_totals[peak].time_ns >= rec.heap_totals[top].time_ns + 20000000);
  for (size_t i = 1; i < rec.heap_totals.size(); i++)
    CHECK(rec.heap_totals[i].time_ns >= rec.heap_totals[i - 1].time_ns);
  CHECK(rec.heap_totals.back().live_bytes == 0);

  // The analyzer: the exact peak (not the samples' estimate) and its time.
  const RunResult s = analyze({"summary", "--json", run.memprof_files[0]});
  REQUIRE(s.exit_code == 0);
  const Json m = Json::parse(s.out)["memory"];
  CHECK(m["peak_bytes"] == 1700000.0);
  REQUIRE(m["peak_counted"].size() == 1);
  CHECK(m["peak_counted"][0]["counted_bytes"] == 1700000.0);
  CHECK(m["peak_counted"][0]["time_ns"] == rec.heap_totals[peak].time_ns);
  // Allocated bytes stay an estimate, with its confidence interval.
  CHECK(m["allocated_bytes_ci95"].get<double>() > 0);
  size_t points = 0;
  for (const Json &p : m["over_time"]) {
    points += !p["time_ns"].is_null();
    CHECK((p["rss_bytes"].is_null() || p["rss_bytes"].get<uint64_t>() > 0));  // never a made-up 0
  }
  CHECK(points == rec.heap_totals.size());
  // The first heap totals come before the first time mark: RSS unknown.
  REQUIRE(!m["over_time"].empty());
  CHECK(m["over_time"][0]["rss_bytes"].is_null());
}

TEST_CASE("a real program under the agent: its sites, with file, line and inlined calls") {
  const RunResult run = run_under_agent({PROF_SITES_PROGRAM});
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.memprof_files.size() == 1);
  std::istringstream printed(run.out);
  int leak_line = 0, temporary_line = 0, inlined_line = 0, inline_site_line = 0;
  printed >> leak_line >> temporary_line >> inlined_line >> inline_site_line;
  const std::string file = run.memprof_files[0];

  const RunResult s = analyze({"summary", "--json", "--top", "1000", file});
  REQUIRE(s.exit_code == 0);
  const Json m = Json::parse(s.out)["memory"];
  // The row whose innermost frame is `function`, in a table.
  auto row = [&](const char *table, const std::string &function) {
    for (const Json &r : m[table])
      if (r["stack"][0]["function"] == function) return r;
    return Json();
  };
  const Json leak = row("leaks", "leak_site");
  REQUIRE(!leak.is_null());
  CHECK(leak["live_bytes"] == 7000);
  CHECK(leak["live_blocks"] == 7);
  CHECK(leak["stack"][0]["line"] == leak_line);
  CHECK(basename_of_path(leak["stack"][0]["file"]) == "analyzer_sites.c");
  CHECK(leak["stack"][1]["function"] == "main");

  const Json temp = row("temporary", "temporary_site");
  REQUIRE(!temp.is_null());
  CHECK(temp["temporary"] == 100);
  CHECK(temp["allocs"] == 100);
  CHECK(temp["stack"][0]["line"] == temporary_line);

  const Json inl = row("allocated", "inlined_alloc");
  REQUIRE(!inl.is_null());
  CHECK(inl["allocs"] == 3);
  CHECK(inl["frees"] == 3);
  CHECK(inl["stack"][0]["kind"] == "inlined");
  CHECK(inl["stack"][0]["line"] == inlined_line);
  CHECK(inl["stack"][1]["function"] == "inline_site");
  CHECK(inl["stack"][1]["line"] == inline_site_line);

  const RunResult f = analyze({"folded", "--metric", "leaked-bytes", file});
  CHECK(f.out.find(";main;leak_site 7000\n") != std::string::npos);
  const RunResult rep = analyze({"report", file});
  CHECK(rep.out.find("\nleak_site (analyzer_sites.c:" + std::to_string(leak_line) +
                     "): 7 events\t+7000B\t-0B\n") != std::string::npos);
}

TEST_CASE("CPU: a stack whose unwind ran onto garbage does not root at a raw address") {
  using namespace prof;
  VecOut o = cpu_stream_head();
  // Code of a module (the analyzer's own file names it), under an address
  // no module covers: the unwind's step past the outermost real frame.
  put_ext(o, ext::ModuleLoadView{0x400000, 0x100000, kAnalyzer, ""});
  SysprofSample s;
  s.vmstate = kVmstNative;
  s.host = {0x402001, 0x401001, 0x3b00005448150414};
  put_ext(o, ext::Thread{7});
  put_sysprof_sample(o, s);
  // A stack of raw addresses alone keeps them: there is nothing else.
  s.host = {0x3000, 0x2000};
  put_sysprof_sample(o, s);
  put_sysprof_epilogue(o);
  const TempFile stream(o.b);
  const RunResult r = analyze({"folded", stream.path});
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.out);
  std::vector<std::string> stacks;
  for (std::string line; std::getline(lines, line);) stacks.push_back(line);
  REQUIRE(stacks.size() == 2);
  CHECK(stacks[0] == "0x2000;0x3000 1");
  CHECK(stacks[1].rfind("prof-analyze+0x", 0) == 0);
  CHECK(stacks[1].find("0x3b00005448150414") == std::string::npos);
  CHECK(stacks[1].substr(stacks[1].size() - 2) == " 1");
}
