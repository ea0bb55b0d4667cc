// The LuaJIT adapter end to end: Debian's stock luajit with prof_luajit
// under libprof.so, its memory stream decoded with the format readers
// (e2e/luajit_streams.h). Counts expected by construction from the
// scripts' lines.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "agent_run.h"
#include "luajit_streams.h"

namespace {

const std::string kTables = PROF_LUAJIT_TEST_DIR "/luajit_tables.lua";
const std::string kRfc = PROF_LUAJIT_TEST_DIR "/luajit_rfc.lua";
constexpr uint64_t kTableBytes = 64;  // sizeof(GCtab) on x86_64 GC64
// lj_str_size: sizeof(GCstr), then the bytes and a NUL, rounded up to 4.
uint64_t string_bytes(uint64_t len) { return 24 + ((len + 4) & ~uint64_t(3)); }

void use_module() { setenv("LUA_CPATH", PROF_LUAJIT_MODULE_DIR "/?.so", 1); }

// Plain streams: their addresses tell the VM's own blocks (in the arenas it
// maps) from the C library's (compact streams name blocks by site).
RunResult run_plain(const std::vector<std::string> &argv) {
  return run_under_agent(argv, {"PROF_COMPRESS=0"});
}

VmStream stream_of(const RunResult &r) {
  INFO(r.err);
  REQUIRE(r.signal == 0);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.memprof_files.size() == 1);
  VmStream s = read_vm_stream(r.memprof_files[0]);
  CHECK_FALSE(s.truncated);
  return s;
}

// The plain stream of `luajit -l prof_luajit e2e/<script> n`.
VmStream test_script_stream(const std::string &script, int n) {
  use_module();
  return stream_of(run_plain({"luajit", "-l", "prof_luajit",
                              PROF_LUAJIT_TEST_DIR "/" + script, std::to_string(n)}));
}

// The allocations at `site` whose guest stack (innermost first) holds each
// (depth, frame) of `frames`.
uint64_t allocs_in_frames(const VmStream &s, const std::string &site,
                          const std::vector<std::pair<size_t, std::string>> &frames) {
  return uint64_t(std::count_if(s.events.begin(), s.events.end(), [&](const VmEvent &e) {
    return e.record == prof::MemprofRecord::Alloc && e.site == site &&
           std::all_of(frames.begin(), frames.end(), [&e](const auto &f) {
             return f.first < e.stack.size() && e.stack[f.first] == f.second;
           });
  }));
}

}  // namespace

TEST_CASE("luajit e2e: without the agent the module stays off, the program unchanged", "[luajit]") {
  use_module();
  const RunResult off = run_bare(
      {"luajit", "-e", "local p = require 'prof_luajit' print(p.enabled, p.reason)"});
  CHECK(off.exit_code == 0);
  CHECK(off.out == "false\tthe libprof agent is not loaded\n");
  CHECK(off.err == "");
  const RunResult with = run_bare({"luajit", "-l", "prof_luajit", kRfc, "100"});
  CHECK(with.exit_code == 0);
  CHECK(with.err == "");
}

TEST_CASE("luajit e2e: N tables made at one line are N events there, JIT off", "[luajit]") {
  use_module();
  const int n = 5000;
  const VmStream s = stream_of(run_plain({"luajit", kTables, std::to_string(n), "off"}));
  CHECK(s.count(prof::MemprofRecord::Alloc, "luajit_tables.lua:6", kTableBytes) == n);
  CHECK(s.traces == 0);
}

TEST_CASE("luajit e2e: with the JIT on, the tables are charged to the line or its trace",
          "[luajit]") {
  use_module();
  const int n = 5000;
  const VmStream s = stream_of(run_plain({"luajit", kTables, std::to_string(n), "on"}));
  const uint64_t interpreted = s.count(prof::MemprofRecord::Alloc, "luajit_tables.lua:6", kTableBytes);
  const uint64_t traced =
      s.count(prof::MemprofRecord::Alloc, "TRACE@luajit_tables.lua:6", kTableBytes);
  // A trace that exits (the array of keep is full, it grows in the
  // interpreter) drops the table it made and the interpreter makes it
  // again: one more per growth of the array, 13 at most for 5000 slots.
  CHECK(interpreted + traced >= n);
  CHECK(interpreted + traced <= n + 13);
  // The loop is hot after 56 iterations: the trace makes almost all of them.
  CHECK(traced > n / 2);
  CHECK(s.traces >= 1);
}

TEST_CASE("luajit e2e: the VM's bytes equal its own count at the end", "[luajit]") {
  use_module();
  for (const char *jit : {"off", "on"}) {
    INFO("JIT " << jit);
    const RunResult r = run_plain({"luajit", kTables, "3000", jit});
    const VmStream s = stream_of(r);
    // The script's last line: bytes_before and collectgarbage("count") * 1024.
    std::istringstream last(r.out.substr(r.out.find('\n') + 1));
    double before = -1, end = -1;
    last >> before >> end;
    REQUIRE(before > 0);
    int64_t delta = 0;
    for (const VmEvent &e : s.events) delta += int64_t(e.nsize) - int64_t(e.osize);
    CHECK(uint64_t(before) + delta == uint64_t(end));
  }
}

// Allocation sampling: each block of s bytes is sampled with probability
// 1 - exp(-s / mean), on its own (the countdown is memoryless): how far
// `sampled` of n may lie from n times that, six standard deviations.
bool within_six_sigma(uint64_t sampled, uint64_t n, double size, double mean) {
  const double p = 1 - std::exp(-size / mean);
  return std::fabs(double(sampled) - n * p) < 6 * std::sqrt(n * p * (1 - p));
}

TEST_CASE("luajit e2e: allocation sampling samples the VM's calls and ends every block it sampled",
          "[luajit]") {
  use_module();
  const int n = 20000;
  const std::string site = "luajit_sampled.lua:5";
  const VmStream s = stream_of(run_under_agent(
      {"luajit", PROF_LUAJIT_TEST_DIR "/luajit_sampled.lua", std::to_string(n)},
      {"PROF_COMPRESS=0", "PROF_SAMPLE_BYTES=4096"}));
  const uint64_t sampled = s.count(prof::MemprofRecord::Alloc, site, kTableBytes);
  CHECK(sampled > 0);
  CHECK(within_six_sigma(sampled, n, kTableBytes, 4096));
  // The VM frees every block before it exits: each sampled table's end is
  // in the stream, after it.
  std::set<uint64_t> live;
  for (const VmEvent &e : s.events) {
    if (e.record != prof::MemprofRecord::Alloc) live.erase(e.oaddr);
    if (e.record != prof::MemprofRecord::Free && e.site == site) live.insert(e.naddr);
  }
  CHECK(live.empty());
}

TEST_CASE("luajit e2e: the heap count holds the VM's bytes, sampled or not", "[luajit]") {
  use_module();
  for (const char *mean : {"0", "65536"}) {
    INFO("PROF_SAMPLE_BYTES=" << mean);
    const RunResult r = run_under_agent({"luajit", kTables, "20000", "off"},
                                        {"PROF_COMPRESS=0", std::string("PROF_SAMPLE_BYTES=") + mean});
    stream_of(r);
    std::istringstream last(r.out.substr(r.out.find('\n') + 1));
    double before = -1, end = -1;
    last >> before >> end;
    REQUIRE(before > 0);
    const Recorded rec = read_memprof(r.memprof_files[0]);
    REQUIRE(!rec.heap_totals.empty());
    // Every table is live at the end: the count is the VM's bytes since the
    // module loaded and the C library's few, give or take what the thread
    // has not added in yet (64 KiB).
    const double counted = double(rec.heap_totals.back().live_bytes);
    CHECK(counted >= end - before - 65536);
    CHECK(counted <= end - before + (1 << 20));
  }
}

// Allocations (any size) charged to site.
uint64_t allocs_at(const VmStream &s, const std::string &site) {
  uint64_t n = 0;
  for (const VmEvent &e : s.events) n += e.record == prof::MemprofRecord::Alloc && e.site == site;
  return n;
}

TEST_CASE("luajit e2e: the demo's memprof example, JIT off from the command line", "[luajit]") {
  use_module();
  const int n = 2000;
  const VmStream s = stream_of(run_plain(
      {"luajit", "-joff", "-l", "prof_luajit", PROF_LUAJIT_DEMO_DIR "/memprof_rfc.lua", std::to_string(n)}));
  // The RFC's lines: one table at line 7, every string at line 10.
  CHECK(allocs_at(s, "memprof_rfc.lua:7") == 1);
  std::map<uint64_t, uint64_t> strings;
  for (int k = 2; k <= n; k++) strings[string_bytes(k)]++;
  for (const auto &size_count : strings)
    CHECK(s.count(prof::MemprofRecord::Alloc, "memprof_rfc.lua:10", size_count.first) ==
          size_count.second);
}

TEST_CASE("luajit e2e: the memprof RFC's example gives the RFC's attribution", "[luajit]") {
  use_module();
  const int n = 2000;
  const VmStream s =
      stream_of(run_plain({"luajit", "-l", "prof_luajit", kRfc, std::to_string(n)}));
  // string.rep('q', k) makes one string of lj_str_size(k) bytes, charged
  // to the Lua line that called append (line 10: append's tail call leaves
  // no frame of its own); k = 1 is the constant 'q', which already exists.
  std::map<uint64_t, uint64_t> strings;
  for (int k = 2; k <= n; k++) strings[string_bytes(k)]++;
  for (const auto &size_count : strings) {
    INFO(size_count.first << " bytes");
    CHECK(s.count(prof::MemprofRecord::Alloc, "luajit_rfc.lua:10", size_count.first) ==
          size_count.second);
  }
  // The RFC's other rows: the closure (line 5), the table (line 7), the
  // array table.insert grows (line 9), and frees by the collector.
  CHECK(s.count(prof::MemprofRecord::Alloc, "luajit_rfc.lua:5", 40) == 1);
  CHECK(s.count(prof::MemprofRecord::Alloc, "luajit_rfc.lua:7", kTableBytes) == 1);
  CHECK(allocs_at(s, "luajit_rfc.lua:7") == 1);
  uint64_t grown = 0, collected = 0;
  for (const VmEvent &e : s.events) {
    if (e.record == prof::MemprofRecord::Realloc && e.site == "luajit_rfc.lua:9") grown++;
    if (e.record == prof::MemprofRecord::Free && e.site == "INTERNAL") collected++;
  }
  CHECK(grown >= 8);  // 2000 slots: doubled at least eight times
  CHECK(collected >= uint64_t(n) - 1);  // every string, at lua_close at the latest
  // The guest stack of a string: string.rep called from the main chunk.
  for (const VmEvent &e : s.events) {
    if (e.record != prof::MemprofRecord::Alloc || e.nsize != string_bytes(n)) continue;
    REQUIRE(e.stack.size() >= 2);
    CHECK(e.stack[0] == "string.rep");
    CHECK(e.stack[1] == "luajit_rfc.lua:10");
  }
}

namespace {

const std::string kBurn = PROF_LUAJIT_TEST_DIR "/luajit_burn.lua";
const std::string kFfi = PROF_LUAJIT_TEST_DIR "/luajit_ffi.lua";

CpuStream cpu_of(const RunResult &r) {
  INFO(r.err);
  REQUIRE(r.signal == 0);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.sysprof_files.size() == 1);
  CpuStream s = read_cpu_stream(r.sysprof_files[0]);
  CHECK_FALSE(s.truncated);
  return s;
}

// prof-analyze's output for `args`.
std::string analyze(const std::string &args) {
  std::string out;
  FILE *f = popen((std::string(PROF_ANALYZER_PATH) + " " + args + " 2>/dev/null").c_str(), "r");
  if (!f) return out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  pclose(f);
  return out;
}

// The samples of the folded stacks whose innermost frame matches leaf.
// The samples of folded stacks whose leaf (or, with anywhere, any frame)
// is `frame`.
uint64_t leaf_count(const std::string &folded, const std::regex &frame, bool anywhere = false) {
  uint64_t n = 0;
  std::istringstream lines(folded);
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    const std::string stack = line.substr(0, space);
    size_t from = anywhere ? 0 : stack.rfind(';');
    from = from == std::string::npos || anywhere ? 0 : from + 1;
    bool found = false;
    for (size_t at = from; at <= stack.size() && !found;) {
      const size_t end = std::min(stack.find(';', at), stack.size());
      found = std::regex_match(stack.substr(at, end - at), frame);
      at = end + 1;
    }
    if (found) n += std::stoull(line.substr(space + 1));
  }
  return n;
}

// In the FFI script's folded stacks reaching main: qsort (qsort_r,
// msort_...) between the line that called it (18) and the comparator's
// interpreted frame (@...luajit_ffi.lua:9-11).
Placement ffi_placement(const std::string &folded) {
  // (Lua frames are named by their function where the source says it:
  // "compare (@.../luajit_ffi.lua:9)".)
  return placement(folded, std::regex(R"(compare \(@.*/luajit_ffi\.lua:(9|10|11)\))"),
                   std::regex(R"(\(main chunk\) \(@.*/luajit_ffi\.lua:18\))"),
                   std::regex(R"((qsort|msort).*)"), std::regex("main"));
}

RunResult run_sampled(const std::string &mode, const std::vector<std::string> &argv) {
  std::vector<std::string> full{"luajit", "-l", "prof_luajit"};
  full.insert(full.end(), argv.begin(), argv.end());
  return run_under_agent(full, {"PROF_CPU=" + mode, "PROF_MEMORY=0"});
}

// burn.lua sampled in `mode` for 0.6 s with the JIT on or off; `hot`,
// the innermost frame of its loop (line 5), holds most samples.
struct Burn {
  RunResult run;
  CpuStream samples;
};
// The samples of a folded profile (prof-analyze folded), and those whose
// root is _start (none at a raw address) and that reach main with a frame
// of `script`.
struct Whole {
  uint64_t all = 0, rooted = 0, whole = 0;
};
Whole whole_stacks(const std::string &folded, const std::string &script) {
  Whole w;
  std::istringstream lines(folded);
  for (std::string line; std::getline(lines, line);) {
    const uint64_t n = std::stoull(line.substr(line.rfind(' ') + 1));
    w.all += n;
    if (line.rfind("_start;", 0) != 0) continue;
    w.rooted += n;
    if (line.find(";main;") != std::string::npos && line.find(script) != std::string::npos)
      w.whole += n;
  }
  return w;
}

Burn burn_sampled(const std::string &mode, const std::string &jit, const std::string &hot) {
  INFO(mode);
  Burn b{run_sampled(mode, {kBurn, jit, "0.6"}), {}};
  CHECK(b.run.out == "true\n");
  b.samples = cpu_of(b.run);
  REQUIRE(b.samples.samples.size() > 100);
  CHECK(b.samples.at(hot) > b.samples.samples.size() * 6 / 10);
  return b;
}

}  // namespace

TEST_CASE("luajit e2e: the function that burns the CPU holds most samples, JIT off", "[luajit]") {
  use_module();
  for (const char *mode : {"leaf", "callgraph"}) {
    INFO(mode);
    // The interpreter's registers name the loop's line.
    const Burn b = burn_sampled(mode, "off", "luajit_burn.lua:5");
    const CpuStream &s = b.samples;
    // The analyzer names it too: its prototype was named as it was made,
    // before any sample showed it.
    CHECK(leaf_count(analyze("folded " + b.run.sysprof_files[0]),
                     std::regex(R"(burn \(@.*/luajit_burn\.lua:5\))")) > s.samples.size() * 6 / 10);
    uint64_t called_from_main = 0, unnamed = 0;
    for (const CpuSample &c : s.samples) {
      called_from_main += c.stack.size() >= 2 && c.stack[1] == "luajit_burn.lua:9";
      // luajit.c's pmain at the root too, though only signal handlers saw it.
      unnamed += std::count(c.stack.begin(), c.stack.end(), "?");
    }
    CHECK(unnamed == 0);
    CHECK(s.in_state(prof::kVmstLfunc) > s.samples.size() * 6 / 10);
    if (std::string(mode) == "callgraph") CHECK(called_from_main > s.samples.size() * 6 / 10);
    CHECK(s.in_state(prof::kVmstTrace) == 0);
  }
}

TEST_CASE("luajit e2e: a Lua stack deeper than a sample's walk ends in the cut frame, the rest "
          "in place", "[luajit]") {
  use_module();
  const RunResult r = run_under_agent({"luajit", "-l", "prof_luajit",
                                       PROF_LUAJIT_TEST_DIR "/luajit_deep.lua", "1"},
                                      {"PROF_CPU=callgraph", "PROF_MEMORY=0"});
  const CpuStream s = cpu_of(r);
  REQUIRE(s.samples.size() > 300);
  uint64_t in_burn = 0, cut = 0;
  for (const CpuSample &c : s.samples) {
    if (c.stack.empty() || c.stack[0] != "luajit_deep.lua:6") continue;
    in_burn++;
    cut += c.stack.back() == "[… more frames]";
  }
  CHECK(in_burn > s.samples.size() * 6 / 10);
  CHECK(cut == in_burn);
  // The analyzer lines the frames up from the inside: the cut frame sits
  // above luajit.c's lua_pcall and the VM frame it entered, not below them.
  const std::string folded = analyze("folded " + r.sysprof_files[0]);
  const uint64_t burning = leaf_count(folded, std::regex(R"(burn \(@.*/luajit_deep\.lua:6\))"));
  CHECK(burning > s.samples.size() * 6 / 10);
  uint64_t misplaced = 0;
  std::istringstream lines(folded);
  for (std::string line; std::getline(lines, line);) {
    const size_t cut_at = line.find("[… more frames]"), pcall_at = line.rfind("lua_pcall");
    if (cut_at != std::string::npos && pcall_at != std::string::npos && pcall_at > cut_at)
      misplaced += std::stoull(line.substr(line.rfind(' ') + 1));
  }
  CHECK(misplaced == 0);
}

TEST_CASE("luajit e2e: with the JIT on, burn's trace holds most samples, numbered", "[luajit]") {
  use_module();
  for (const char *mode : {"leaf", "callgraph"}) {
    INFO(mode);
    // The trace starts at the loop; its samples are TRACE samples, each
    // with the number of the trace that ran.
    const Burn b = burn_sampled(mode, "on", "TRACE@luajit_burn.lua:5");
    const CpuStream &s = b.samples;
    uint64_t numbered = 0;
    for (const CpuSample &c : s.samples) numbered += c.vmstate == prof::kVmstTrace && c.traceno != 0;
    CHECK(s.in_state(prof::kVmstTrace) > s.samples.size() * 6 / 10);
    CHECK(numbered == s.in_state(prof::kVmstTrace));
    // The analyzer names the trace as sysprof's parser does (under the
    // native helpers it calls, with whole stacks).
    const std::string folded = analyze("folded " + b.run.sysprof_files[0]);
    CHECK(leaf_count(folded, std::regex(R"(TRACE \[[1-9][0-9]*\] started at @.*/luajit_burn\.lua:5)"),
                     std::string(mode) == "callgraph") > s.samples.size() * 6 / 10);
    if (std::string(mode) != "callgraph") continue;
    // The function a trace started in owns its samples: it is the trace's
    // caller, at the trace's start ("burn (@…:5);TRACE [1] started at
    // @…:5"; the main chunk's loop may be a trace too).
    uint64_t traced = 0, under_start = 0;
    const std::regex trace_under_start(R"(\(@([^;]*:[0-9]+)\);TRACE \[[1-9][0-9]*\] started at @\1(;|$))");
    std::istringstream lines(folded);
    for (std::string line; std::getline(lines, line);) {
      const size_t space = line.rfind(' ');
      const uint64_t n = std::stoull(line.substr(space + 1));
      if (line.find("TRACE [") == std::string::npos) continue;
      traced += n;
      if (std::regex_search(line.substr(0, space), trace_under_start)) under_start += n;
    }
    CHECK(traced > 0);
    CHECK(under_start == traced);
    // Its samples keep the trace's caller (line 9) and the native stack
    // through the VM's frame the trace runs in, down to main: nearly every
    // sample is whole, a Lua frame in it and main at its root.
    uint64_t with_caller = 0;
    for (const CpuSample &c : s.samples)
      with_caller += c.vmstate == prof::kVmstTrace && c.stack.size() >= 2 &&
                     c.stack[1] == "luajit_burn.lua:9";
    CHECK(with_caller > s.in_state(prof::kVmstTrace) * 9 / 10);
    const Whole w = whole_stacks(folded, "luajit_burn.lua");
    CHECK(w.rooted == w.all);  // no stack roots at a raw address
    INFO(folded);
    CHECK(w.whole * 100 >= w.all * 95);
  }
}

TEST_CASE("luajit e2e: samples in trace exits and in the interpreter's helpers keep their Lua "
          "frames and reach main", "[luajit]") {
  use_module();
  for (const char *script : {"luajit_exits.lua", "luajit_helpers.lua"}) {
    INFO(script);
    const RunResult r = run_sampled("callgraph", {PROF_LUAJIT_TEST_DIR "/" + std::string(script), "0.6"});
    CHECK(r.out == "true\n");
    const CpuStream s = cpu_of(r);
    REQUIRE(s.samples.size() > 100);
    const std::string folded = analyze("folded " + r.sysprof_files[0]);
    INFO(folded);
    const Whole w = whole_stacks(folded, script);
    // The exit handler and the helpers lower the stack pointer below the
    // interpreter's frame, which its unwind table does not say: the walk
    // steps to the frame (trace_step.h), not to a stale return address.
    // XXX: about one trace sample in 600-2000 still steps past the inner
    // VM's frame to a stale one (cause not found): not all, but nearly.
    CHECK(w.rooted * 100 >= w.all * 99);
    CHECK(w.whole * 100 >= w.all * 95);
    if (std::string(script) != "luajit_exits.lua") continue;
    // The VM restoring a trace's exit still runs exits(): its samples say
    // EXIT and keep its frames.
    uint64_t exit_with_lua = 0;
    for (const CpuSample &c : s.samples)
      exit_with_lua += c.vmstate == prof::kVmstExit && !c.stack.empty() &&
                       c.stack[0].find("luajit_exits.lua:") != std::string::npos;
    CHECK(s.in_state(prof::kVmstExit) > s.samples.size() / 20);
    CHECK(exit_with_lua * 10 >= s.in_state(prof::kVmstExit) * 9);
  }
}

TEST_CASE("luajit e2e: DEFAULT mode counts the VM states, no stacks", "[luajit]") {
  use_module();
  const CpuStream s = cpu_of(run_sampled("default", {kBurn, "off", "0.4"}));
  REQUIRE(s.samples.size() > 100);
  uint64_t lfunc = 0, stacks = 0;
  for (const CpuSample &c : s.samples) {
    if (c.vmstate == prof::kVmstLfunc) lfunc++;
    if (!c.stack.empty() || c.host_frames) stacks++;
  }
  CHECK(lfunc > s.samples.size() * 6 / 10);
  CHECK(stacks == 0);
}

TEST_CASE("luajit e2e: FFI calls and callbacks under 1 kHz CALLGRAPH sampling", "[luajit]") {
  use_module();
  for (const char *jit : {"off", "on"}) {
    INFO("JIT " << jit);
    const RunResult r = run_sampled("callgraph", {kFfi, jit, "60"});
    CHECK(r.out == "true\n");
    const CpuStream s = cpu_of(r);
    REQUIRE(s.samples.size() > 50);
    // The comparator (lines 9-12) runs called back from qsort.
    uint64_t in_callback = 0;
    for (const CpuSample &c : s.samples)
      for (const std::string &f : c.stack)
        if (f == "luajit_ffi.lua:9" || f == "luajit_ffi.lua:10" || f == "luajit_ffi.lua:11") {
          in_callback++;
          break;
        }
    CHECK(in_callback > 0);
    // Merged with the host stack, the comparator's frames sit above qsort,
    // which sits above the line that called it (18).
    const Placement p = ffi_placement(analyze("folded " + r.sysprof_files[0]));
    CHECK(p.whole > 0);
    CHECK(p.placed == p.whole);
  }
}

TEST_CASE("luajit e2e: a coroutine's allocations carry its frames, then its resumer's",
          "[luajit]") {
  const int n = 500;
  const VmStream s = test_script_stream("luajit_coroutine.lua", n);
  CHECK(s.count(prof::MemprofRecord::Alloc, "luajit_coroutine.lua:5", kTableBytes) == n);
  // The coroutine's function, then coroutine.wrap's resume, then line 9.
  CHECK(allocs_in_frames(s, "luajit_coroutine.lua:5",
                         {{0, "luajit_coroutine.lua:5"}, {2, "luajit_coroutine.lua:9"}}) == n);
}

TEST_CASE("luajit e2e: after a pause, allocations carry the frames they ran in, not the last recorded",
          "[luajit]") {
  // The module tells the agent which frames its walk kept from its last
  // capture (prof_guest_walk); its captures while paused reach no stack, so
  // the first ones after must be compared whole.
  const int n = 300;
  const VmStream s = test_script_stream("luajit_paused.lua", n);
  CHECK(allocs_in_frames(s, "luajit_paused.lua:6",
                         {{1, "luajit_paused.lua:7"}, {2, "luajit_paused.lua:22"}}) == n);
  CHECK(allocs_in_frames(s, "luajit_paused.lua:6",
                         {{1, "luajit_paused.lua:12"}, {2, "luajit_paused.lua:24"}}) == n - 1);
  CHECK(s.count(prof::MemprofRecord::Alloc, "luajit_paused.lua:6", kTableBytes) == 2 * n - 1);
}

TEST_CASE("luajit e2e: memory and 1 kHz CALLGRAPH sampling at once leave the program unchanged",
          "[luajit]") {
  use_module();
  const std::string trees = PROF_LUAJIT_DEMO_DIR "/../bench/binarytrees.lua";
  for (const char *jit : {"-joff", "-jon"}) {
    INFO(jit);
    const RunResult bare = run_bare({"luajit", jit, trees, "12"});
    const RunResult r = run_under_agent({"luajit", jit, "-l", "prof_luajit", trees, "12"},
                                        {"PROF_CPU=callgraph"});
    INFO(r.err);
    REQUIRE(r.signal == 0);
    CHECK(r.exit_code == 0);
    CHECK(r.out == bare.out);
    CHECK(r.err == "");
    REQUIRE(r.sysprof_files.size() == 1);
    CHECK(read_cpu_stream(r.sysprof_files[0]).samples.size() > 50);
    CHECK_FALSE(read_vm_stream(r.memprof_files.at(0)).events.empty());
  }
}

TEST_CASE("luajit e2e: where the VM cannot be read safely the module refuses in one line",
          "[luajit]") {
  use_module();
  const RunResult bare = run_bare({"luajit", kRfc, "100"});
  const RunResult r = run_under_agent(
      {PROF_NO_SAFE_READ, "luajit", "-e",
       "local p = require 'prof_luajit' io.write(tostring(p.enabled), '\\n')", kRfc, "100"});
  INFO(r.err);
  CHECK(r.exit_code == bare.exit_code);
  CHECK(r.out == "false\n" + bare.out);
  CHECK(r.err ==
        "prof_luajit: nothing will be recorded: cannot read memory safely "
        "(process_vm_readv is refused)\n");
  // The agent still records (luajit after the launcher's exec; the launcher
  // allocates nothing, so its stream never opens); no VM event reaches a stream.
  REQUIRE(!r.memprof_files.empty());
  for (const std::string &f : r.memprof_files) CHECK(read_vm_stream(f).events.empty());
}

TEST_CASE("luajit e2e: two threads' states loading the module at once: each is profiled, whole",
          "[luajit]") {
  // The loads race (a barrier starts both threads); before they were
  // serialized, the process could crash. Each state is its own universe,
  // walked as itself: every table of both carries its line.
  use_module();
  for (int run = 0; run < 10; run++) {
    const RunResult r = run_under_agent(
        {PROF_LUAJIT_TWO_STATES}, {"PROF_COMPRESS=0", "PROF_CPU=callgraph", "PROF_INTERVAL=100us"});
    INFO("run " << run << ": " << r.out << r.err);
    const VmStream s = stream_of(r);
    CHECK(r.err.empty());
    CHECK((r.out == "A true\nB true\n" || r.out == "B true\nA true\n"));
    CHECK(s.count(prof::MemprofRecord::Alloc, "worker:4", kTableBytes) == 2 * 2000);
  }
}

TEST_CASE("luajit e2e: a compact stream (the default) reports what a plain one does", "[luajit]") {
  use_module();
  const RunResult packed = run_under_agent({"luajit", kTables, "3000", "off"});
  const RunResult plain = run_plain({"luajit", kTables, "3000", "off"});
  REQUIRE(packed.memprof_files.size() == 1);
  REQUIRE(plain.memprof_files.size() == 1);
  const std::string report = analyze("report " + packed.memprof_files[0]);
  CHECK(report.find("luajit_tables.lua:6): ") != std::string::npos);
  CHECK(report == analyze("report " + plain.memprof_files[0]));
}
