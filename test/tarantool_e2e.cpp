// Tarantool end to end: Debian's tarantool 2.6 (its LuaJIT 2.1 built without
// GC64 into the executable) runs scripts that `require('prof_luajit')` under
// libprof.so. Memory on the scripts' lines with counts known by
// construction, as the analyzer's report (the reference memprof parser's
// format) shows them; CPU samples with the scripts' Lua frames; no object
// types. Tarantool starts threads of its own: the agent's output, the exit
// status and the streams must stay whole.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "agent_run.h"
#include "luajit_streams.h"

namespace {

const std::string kTables = PROF_LUAJIT_TEST_DIR "/tarantool_tables.lua";
const std::string kBurn = PROF_LUAJIT_TEST_DIR "/tarantool_burn.lua";
const std::string kFfi = PROF_LUAJIT_TEST_DIR "/tarantool_ffi.lua";
// sizeof(GCtab) without GC64: 32-bit references (lj_obj.h of Tarantool's
// fork, compiled with LUAJIT_DISABLE_GC64 semantics).
constexpr uint64_t kTableBytes = 32;

// Tarantool searches package.cpath, which LUA_CPATH replaces (";;": the
// default's entries after it).
void use_module() { setenv("LUA_CPATH", PROF_LUAJIT_MODULE_DIR "/?.so;;", 1); }

// prof-analyze's output for args.
std::string analyze(const std::vector<std::string> &args) {
  std::vector<std::string> argv{PROF_ANALYZER_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult r = run_bare(argv);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  return r.out;
}

// The first line of out.
std::string first_line(const std::string &out) { return out.substr(0, out.find('\n')); }

// The run's only memory stream, plain (its addresses tell the VM's blocks).
RunResult run_tables(int n, const std::vector<std::string> &env = {"PROF_COMPRESS=0"},
                     const std::string &jit = "off") {
  use_module();
  RunResult r = run_under_agent({"tarantool", kTables, std::to_string(n), jit}, env);
  INFO(r.out << r.err);
  REQUIRE(r.signal == 0);
  REQUIRE(r.exit_code == 0);
  REQUIRE(first_line(r.out) == "true\tnil");
  REQUIRE(r.memprof_files.size() == 1);
  return r;
}

// The events the report gives `line`'s row: "(main chunk) (@<path>:<line>): <count> events\t...".
uint64_t report_count(const std::string &report, const std::string &line) {
  const std::regex row("\\(@[^\n]*/tarantool_tables\\.lua:" + line + "\\): ([0-9]+) events\t");
  std::smatch m;
  if (!std::regex_search(report, m, row)) return 0;
  return std::stoull(m[1]);
}

}  // namespace

TEST_CASE("tarantool e2e: without the agent the module stays off, tarantool unchanged",
          "[tarantool]") {
  use_module();
  const RunResult r = run_bare({"tarantool", kTables, "100"});
  CHECK(r.exit_code == 0);
  CHECK(first_line(r.out) == "false\tthe libprof agent is not loaded");
  CHECK(r.err == "");
}

TEST_CASE("tarantool e2e: N tables made at one line are N events there, and in the report",
          "[tarantool]") {
  const int n = 5000;
  const RunResult r = run_tables(n);
  // Neither the agent nor the adapter says anything (a refusal would be a
  // line), Tarantool's threads notwithstanding.
  CHECK(r.err == "");
  const VmStream s = read_vm_stream(r.memprof_files[0]);
  CHECK_FALSE(s.truncated);
  CHECK(s.count(prof::MemprofRecord::Alloc, "tarantool_tables.lua:7", kTableBytes) == n);
  // The loop's frame sits above the script's main chunk.
  uint64_t in_chunk = 0;
  for (const VmEvent &e : s.events)
    in_chunk += e.site == "tarantool_tables.lua:7" && !e.stack.empty() &&
                e.stack[0] == "tarantool_tables.lua:7";
  CHECK(in_chunk >= uint64_t(n));
  CHECK(s.traces == 0);

  // The report, twice as many tables in a second run: the line's count grows
  // by n exactly (the tables; keep's array part is allocated there once and
  // grown by reallocations).
  const RunResult twice = run_tables(2 * n, {});
  const std::string small = analyze({"report", r.memprof_files[0]});
  const std::string large = analyze({"report", twice.memprof_files[0]});
  INFO(small);
  CHECK(small.find("ALLOCATIONS") != std::string::npos);
  const uint64_t at_small = report_count(small, "7"), at_large = report_count(large, "7");
  CHECK(at_small >= uint64_t(n));
  CHECK(at_large - at_small == uint64_t(n));
}

TEST_CASE("tarantool e2e: with the JIT on, the tables are charged to the line or its trace",
          "[tarantool]") {
  const int n = 5000;
  const RunResult r = run_tables(n, {"PROF_COMPRESS=0"}, "on");
  CHECK(r.err == "");
  const VmStream s = read_vm_stream(r.memprof_files[0]);
  CHECK_FALSE(s.truncated);
  const uint64_t interpreted =
      s.count(prof::MemprofRecord::Alloc, "tarantool_tables.lua:7", kTableBytes);
  const uint64_t traced =
      s.count(prof::MemprofRecord::Alloc, "TRACE@tarantool_tables.lua:7", kTableBytes);
  // As with the stock VM (luajit_e2e.cpp): a trace exit at each growth of
  // keep's array makes its table again in the interpreter.
  CHECK(interpreted + traced >= uint64_t(n));
  CHECK(interpreted + traced <= uint64_t(n) + 13);
  CHECK(traced > uint64_t(n) / 2);
  CHECK(s.traces >= 1);
  const std::regex trace_row(R"(TRACE \[[1-9][0-9]*\] started at @.*/tarantool_tables\.lua:7: ([0-9]+) events)");
  std::smatch m;
  const std::string report = analyze({"report", r.memprof_files[0]});
  REQUIRE(std::regex_search(report, m, trace_row));
  CHECK(std::stoull(m[1]) == traced);
}

TEST_CASE("tarantool e2e: CPU samples carry the Lua frames of the function that burns",
          "[tarantool]") {
  use_module();
  const RunResult r = run_under_agent({"tarantool", kBurn, "0.6"},
                                      {"PROF_CPU=callgraph", "PROF_MEMORY=0"});
  INFO(r.out << r.err);
  REQUIRE(r.signal == 0);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "true\ttrue\n");
  CHECK(r.err == "");
  REQUIRE(r.sysprof_files.size() == 1);
  const CpuStream s = read_cpu_stream(r.sysprof_files[0]);
  CHECK_FALSE(s.truncated);
  REQUIRE(s.samples.size() > 100);
  // The interpreter's registers name the loop's line; its caller is the
  // main chunk's loop.
  CHECK(s.at("tarantool_burn.lua:6") > s.samples.size() * 6 / 10);
  uint64_t called_from_chunk = 0;
  for (const CpuSample &c : s.samples)
    called_from_chunk += c.stack.size() >= 2 && c.stack[0] == "tarantool_burn.lua:6" &&
                         c.stack[1] == "tarantool_burn.lua:10";
  CHECK(called_from_chunk > s.samples.size() * 6 / 10);
  // The analyzer names both frames (the main chunk, made before the module
  // loaded, too) and puts them above the VM's host frame, in the fiber
  // Tarantool runs the script in.
  const std::string folded = analyze({"folded", r.sysprof_files[0]});
  uint64_t burning = 0, under_pcall = 0;
  std::istringstream lines(folded);
  const std::regex leaf(
      R"((.*;)?lj_vm;\(main chunk\) \(@.*/tarantool_burn\.lua:10\);burn \(@.*/tarantool_burn\.lua:6\) ([0-9]+))");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, leaf)) continue;
    burning += std::stoull(m[2]);
    if (m[1].str().find(";run_script_f;lua_main;luaT_call;lua_pcall;") != std::string::npos)
      under_pcall += std::stoull(m[2]);
  }
  CHECK(burning > s.samples.size() * 6 / 10);
  CHECK(under_pcall > 0);
}

TEST_CASE("tarantool e2e: an FFI callback's frames sit above the C code that called it",
          "[tarantool]") {
  use_module();
  const RunResult r = run_under_agent({"tarantool", kFfi, "200000"},
                                      {"PROF_CPU=callgraph", "PROF_MEMORY=0"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "true\n");
  CHECK(r.err == "");
  REQUIRE(r.sysprof_files.size() == 1);
  // Every whole stack through the comparator (lines 8-9) has, from the root:
  // the main chunk's call at line 13, qsort, then the comparator.
  const Placement p = placement(analyze({"folded", r.sysprof_files[0]}),
                                std::regex(R"(@.*/tarantool_ffi\.lua:(8|9))"),
                                std::regex(R"(\(main chunk\) \(@.*/tarantool_ffi\.lua:13\))"),
                                std::regex("qsort.*"), std::regex("lua_main"));
  CHECK(p.whole > 20);
  CHECK(p.placed == p.whole);
}

TEST_CASE("tarantool e2e: LuaJIT's events carry no object type", "[tarantool]") {
  // As for the stock LuaJIT (docs/luajit.md): the allocator is not told
  // what an object is, nothing is inferred, and the summary has no table.
  const RunResult r = run_tables(1000, {});
  const std::string summary = analyze({"summary", "--json", r.memprof_files[0]});
  REQUIRE_FALSE(summary.empty());
  const nlohmann::json j = nlohmann::json::parse(summary);
  REQUIRE(j.contains("memory"));
  const nlohmann::json &memory = j.at("memory");
  CHECK((!memory.contains("object_types") || memory.at("object_types").is_null() ||
         memory.at("object_types").empty()));
  CHECK(analyze({"summary", r.memprof_files[0]}).find("OBJECT TYPES") == std::string::npos);
}
