// The analyzer's tables on real runs: a C++ program built -O2 -g
// (e2e/tables_cxx.cpp) and the stock lua5.4 under libprof.so, with figures
// known by construction: allocator frames folded into the allocation, C++
// names shortened, tables by function, functions in every sample left out,
// recursion collapsed, the mmap domain's peak holders, heaptrack's
// temporary allocations.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "agent_run.h"
#include "temp_files.h"

using Json = nlohmann::json;

namespace {

RunResult analyze(std::vector<std::string> args) {
  args.insert(args.begin(), PROF_ANALYZER_PATH);
  return run_bare(args);
}

Json summary(const std::vector<std::string> &args) {
  std::vector<std::string> all = {"summary", "--json", "--top", "1000"};
  all.insert(all.end(), args.begin(), args.end());
  const RunResult r = analyze(all);
  REQUIRE(r.exit_code == 0);
  return Json::parse(r.out);
}

// The run of tables_cxx in `mode`, its one memprof or sysprof stream.
std::string run_cxx(const std::string &mode, bool cpu, RunResult &run) {
  run = run_under_agent({PROF_TABLES_PROGRAM, mode},
                        cpu ? std::vector<std::string>{"PROF_CPU=callgraph", "PROF_MEMORY=0"}
                            : std::vector<std::string>{});
  REQUIRE(run.exit_code == 0);
  const std::vector<std::string> &files = cpu ? run.sysprof_files : run.memprof_files;
  REQUIRE(files.size() == 1);
  return files[0];
}

std::vector<std::string> functions(const Json &row) {
  std::vector<std::string> out;
  for (const Json &f : row["stack"]) out.push_back(f["function"]);
  return out;
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

// The frames of folded lines, each line's count.
std::vector<std::pair<std::vector<std::string>, double>> folded_lines(const std::string &text) {
  std::vector<std::pair<std::vector<std::string>, double>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.rfind(' ');
    std::vector<std::string> frames;
    std::istringstream stack(line.substr(0, space));
    for (std::string f; std::getline(stack, f, ';');) frames.push_back(f);
    out.emplace_back(frames, std::stod(line.substr(space + 1)));
  }
  return out;
}

const char *const kAllocatorNames[] = {"operator new", "allocator", "_M_allocate", "malloc"};

// What a Lua function's folded frames begin with ("down (@chunk:6)", which
// starts at line 6: "down (@chunk:"; "(main chunk) (@chunk)": "(main chunk)
// (@chunk:"); empty for a native function.
std::string lua_frames_of(const std::string &fn) {
  const size_t at = fn.rfind(" (@");
  if (at == std::string::npos || fn.back() != ')') return "";
  std::string stem = fn.substr(0, fn.size() - 1);
  const size_t colon = stem.rfind(':');
  if (colon != std::string::npos && colon > at &&
      stem.find_first_not_of("0123456789", colon + 1) == std::string::npos)
    stem.resize(colon);
  return stem + ":";
}

}  // namespace

TEST_CASE("C++ allocations are charged to the code that asked, not to operator new") {
  RunResult run;
  const std::string stream = run_cxx("vectors", false, run);
  const Json m = summary({stream})["memory"];
  // 100 vectors grown to 1000 ints: 11 blocks each; 50 nodes of 48 bytes.
  REQUIRE(m["calls"].size() == 2);
  const Json vectors = m["calls"][0], nodes = m["calls"][1];
  CHECK(vectors["alloc_count"] == 1100);
  CHECK(nodes["alloc_count"] == 50);
  const std::vector<std::string> v = functions(vectors), n = functions(nodes);
  INFO("vectors: " << vectors["stack"].dump(1));
  // Innermost first: the vector's own code, template arguments shortened.
  CHECK(contains(v[0], "std::vector<…>::_M_realloc_insert"));
  CHECK(std::find(v.begin(), v.end(), "grow_vectors()") != v.end());
  CHECK(n[0] == "make_nodes()");
  for (const auto &stack : {v, n})
    for (const std::string &f : stack) {
      CHECK_FALSE(contains(f, "<int"));
      for (const char *a : kAllocatorNames) CHECK_FALSE(contains(f, a));
    }

  // --full-names keeps the template arguments.
  const Json full = summary({"--full-names", stream})["memory"]["calls"][0];
  CHECK(contains(functions(full)[0], "std::vector<int, std::allocator<int> >::_M_realloc_insert"));

  // --stack-depth counts from the first frame that is not the allocator's.
  const RunResult text = analyze({"summary", "--stack-depth", "1", "--top", "1", stream});
  CHECK(contains(text.out, "\n      make_nodes() (tables_cxx.cpp:"));

  // The memprof report names each site by that frame too.
  const RunResult report = analyze({"report", stream});
  REQUIRE(report.exit_code == 0);
  CHECK_FALSE(contains(report.out, "operator new"));
  CHECK(contains(report.out, "\nmake_nodes() (tables_cxx.cpp:"));
  CHECK(contains(report.out, "std::vector<…>::_M_realloc_insert"));

  // Flame-graph stacks end in the caller: 50 x 48 bytes in make_nodes().
  const RunResult folded = analyze({"folded", stream});
  CHECK_FALSE(contains(folded.out, "operator new"));
  double in_make_nodes = 0;
  for (const auto &line : folded_lines(folded.out))
    if (line.first.back() == "make_nodes()") in_make_nodes += line.second;
  CHECK(in_make_nodes == 2400);
}

TEST_CASE("temporary allocations are counted as heaptrack counts them, realloc included") {
  RunResult run;
  const Json m = summary({run_cxx("realloc", false, run)})["memory"];
  // 100 x (malloc, realloc, realloc, free): each release follows the
  // allocation of the very block it releases: 3 temporary allocations a turn.
  CHECK(m["alloc_calls"] == 100);
  CHECK(m["realloc_calls"] == 200);
  CHECK(m["temporary_allocations"] == 300);
  REQUIRE(m["temporary"].size() == 3);
  for (const Json &row : m["temporary"]) {
    CHECK(row["temporary"] == 100);
    CHECK(functions(row)[0] == "churn()");
  }
}

TEST_CASE("sampled streams estimate the calls made, not the calls sampled") {
  const RunResult run =
      run_under_agent({PROF_TABLES_PROGRAM, "small"}, {"PROF_SAMPLE_BYTES=4096"});
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.memprof_files.size() == 1);
  const Json m = summary({run.memprof_files[0]})["memory"];
  // 100000 blocks of 64 bytes, each sampled with p = 1 - exp(-64 / 4096):
  // about 1550 recorded, so the estimate is within 2.5% at one standard
  // deviation; 15% is six.
  CHECK(m["calls_estimated"] == true);
  const double recorded = m["recorded_calls"]["alloc"];
  CHECK(recorded > 0);
  CHECK(recorded < 10000);
  CHECK(m["alloc_calls"].get<double>() == Approx(100000).epsilon(0.15));
  CHECK(m["free_calls"].get<double>() == Approx(100000).epsilon(0.15));
  const RunResult text = analyze({"summary", run.memprof_files[0]});
  CHECK(contains(text.out, "  calls:         ~"));
  CHECK(contains(text.out, "calls sampled)"));
}

TEST_CASE("the mmap domain names the stacks holding its peak") {
  RunResult run;
  const Json mm = summary({run_cxx("mmap", false, run)})["memory"]["mmap"];
  // map_big() holds 1 + 2 + 4 MiB at once; map_small() 64 KiB, later.
  CHECK(mm["peak_bytes"] == 7 << 20);
  REQUIRE(mm["peak"].size() == 3);
  const double sizes[] = {4 << 20, 2 << 20, 1 << 20};
  for (size_t i = 0; i < 3; i++) {
    CHECK(mm["peak"][i]["peak_bytes"] == sizes[i]);
    const std::vector<std::string> f = functions(mm["peak"][i]);
    CHECK(std::find(f.begin(), f.end(), "map_big()") != f.end());
  }
  REQUIRE(mm["still_mapped"].size() == 1);
  CHECK(mm["still_mapped"][0]["live_bytes"] == 64 << 10);
}

TEST_CASE("hottest functions add up their lines, with their share of the samples") {
  RunResult run;
  const std::string stream = run_cxx("spin", true, run);
  const Json by_function = summary({stream})["cpu"], by_line = summary({"--lines", stream})["cpu"];
  const double all = by_function["samples"];
  REQUIRE(all > 0);
  CHECK(by_function["by"] == "function");
  CHECK(by_line["by"] == "line");
  double burn = 0, burn_lines = 0, lines = 0;
  for (const Json &row : by_function["self"]) {
    CHECK(row["percent"].get<double>() == Approx(100 * row["samples"].get<double>() / all));
    if (row["function"] == "burn()") burn = row["samples"];
  }
  for (const Json &row : by_line["self"])
    if (row["function"].get<std::string>().rfind("burn() (tables_cxx.cpp:", 0) == 0) {
      burn_lines += row["samples"].get<double>();
      lines++;
    }
  CHECK(burn > 0);
  CHECK(burn == burn_lines);
  CHECK(lines >= 2);  // its two loops
}

TEST_CASE("Lua: functions by where they start, every-sample frames left out, recursion collapsed",
          "[lua]") {
  setenv("LUA_CPATH", PROF_LUA_MODULE_DIR "/?.so", 1);
  const RunResult run = run_under_agent(
      {"lua5.4", "-l", "prof_lua", PROF_TABLES_LUA}, {"PROF_CPU=callgraph", "PROF_MEMORY=0"});
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.sysprof_files.size() == 1);
  const std::string &stream = run.sysprof_files[0];
  const Json cpu = summary({stream})["cpu"], lines = summary({"--lines", stream})["cpu"];
  const double all = cpu["samples"];
  REQUIRE(all > 0);

  // leaf() starts at line 1 of tables_cpu.lua; its lines are 2 to 4.
  double leaf = 0, leaf_lines = 0;
  for (const Json &row : cpu["self"])
    if (row["function"] == "leaf (@" PROF_TABLES_LUA ":1)") leaf = row["samples"];
  for (const Json &row : lines["self"]) {
    const std::string f = row["function"];
    for (const char *line : {":2)", ":3)", ":4)"})
      if (f == "leaf (@" PROF_TABLES_LUA + std::string(line)) leaf_lines += row["samples"].get<double>();
  }
  CHECK(leaf > 0);
  CHECK(leaf == leaf_lines);

  // What is in nearly every sample (95% or more) is named apart, and is in
  // that many of the folded stacks' samples, where a Lua function's frames
  // carry their current line instead of the line it starts at
  // ("down (@chunk:8)" is a frame of "down (@chunk:6)").
  const RunResult folded = analyze({"folded", stream});
  const auto stacks = folded_lines(folded.out);
  CHECK_FALSE(cpu["in_nearly_every_sample"].empty());
  for (const Json &name : cpu["in_nearly_every_sample"]) {
    const std::string fn = name;
    INFO(fn);
    const std::string frames = lua_frames_of(fn);
    double with = 0;
    for (const auto &s : stacks) {
      bool found = false;
      for (const std::string &f : s.first)
        found = found || f == fn || f.rfind(fn + " (", 0) == 0 ||
                (!frames.empty() && f.rfind(frames, 0) == 0);
      with += found ? s.second : 0;
    }
    CHECK(with >= 0.95 * all);
  }
  // Kept: what is in fewer, or runs itself in half the samples or more (leaf()).
  std::map<std::string, double> self_of;
  for (const Json &row : cpu["self"]) self_of[row["function"]] = row["samples"];
  for (const Json &row : cpu["total"])
    CHECK((row["samples"].get<double>() < 0.95 * all || self_of[row["function"]] >= 0.5 * all));

  // down() recurses 24 times through line 8: one text line, one flame frame.
  const RunResult text = analyze({"summary", "--full", stream});
  CHECK(contains(text.out, "down (@" PROF_TABLES_LUA ":8) ×24\n"));
  const std::string twice = "down (@" PROF_TABLES_LUA ":8);down (@" PROF_TABLES_LUA ":8)";
  CHECK(contains(folded.out, twice));
  const RunResult collapsed = analyze({"folded", "--collapse-recursion", stream});
  CHECK_FALSE(contains(collapsed.out, twice));
  double before = 0, after = 0;
  for (const auto &s : stacks) before += s.second;
  for (const auto &s : folded_lines(collapsed.out)) after += s.second;
  CHECK(before == after);
}

TEST_CASE("diff matches stacks by function: a line added above moves none of them", "[lua]") {
  // The same script twice, the second with two lines added at its top: every
  // line number of build() moves, its 2000 allocations do not.
  const std::string script =
      "local function build(n)\n"
      "  local t = {}\n"
      "  for i = 1, n do t[i] = string.rep('x', 100) .. i end\n"
      "  return t\n"
      "end\n"
      "keep = build(2000)\n";
  TempDir before, after;
  std::ofstream(before / "x.lua") << script;
  std::ofstream(after / "x.lua") << "-- a comment\nlocal unused = 1\n" << script;
  setenv("LUA_CPATH", PROF_LUA_MODULE_DIR "/?.so", 1);
  // (A run's files live as long as it.)
  const RunResult run_before = run_under_agent({"lua5.4", "-l", "prof_lua", before / "x.lua"});
  const RunResult run_after = run_under_agent({"lua5.4", "-l", "prof_lua", after / "x.lua"});
  std::string files[2];
  for (const RunResult *run : {&run_before, &run_after}) {
    REQUIRE(run->exit_code == 0);
    REQUIRE(run->memprof_files.size() == 1);
  }
  files[0] = run_before.memprof_files[0];
  files[1] = run_after.memprof_files[0];
  // The rows of stacks through build(), and their change of calls.
  auto build_rows = [&](const std::vector<std::string> &extra) {
    std::vector<std::string> args{"diff", "--json", "--top", "100000", files[0], files[1]};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = analyze(args);
    REQUIRE(r.exit_code == 0);
    const Json diff = Json::parse(r.out);
    std::vector<double> deltas;
    for (const Json &s : diff["stacks"])
      for (const Json &f : s["stack"])
        if (f["function"].get<std::string>().rfind("build (@", 0) == 0) {
          deltas.push_back(s["alloc_count"]["delta"].get<double>());
          break;
        }
    std::sort(deltas.begin(), deltas.end());
    return deltas;
  };
  const std::vector<double> by_function = build_rows({});
  // No row of build()'s 2000 allocations: what is left is the two runs' own
  // differences (a call or two of the VM's, the peak's moment).
  for (const double d : by_function) CHECK(std::abs(d) < 100);
  // By line, the same stacks are a minus and a plus.
  const std::vector<double> by_line = build_rows({"--by-line"});
  REQUIRE(by_line.size() >= 2);
  CHECK(by_line.front() == -2000);
  CHECK(by_line.back() == 2000);
}

namespace {

// The row of `function` (whose name holds it, with `prefix`) in a
// memory-by-function list.
Json function_row(const Json &rows, const std::string &function, bool prefix = false) {
  for (const Json &r : rows)
    if (r["function"] == function ||
        (prefix && r["function"].get<std::string>().find(function) != std::string::npos))
      return r;
  FAIL("no row for " << function);
  return Json();
}

}  // namespace

TEST_CASE("memory by function: in the function itself and with what it calls") {
  RunResult run;
  const std::string stream = run_cxx("vectors", false, run);
  const Json f = summary({stream})["memory"]["functions"];
  CHECK(f["by"] == "function");
  // 100 vectors grown to 1000 ints: 11 allocations each, 4 x (2^11 - 1) B.
  const Json grow =
      function_row(f["by_self"], "std::vector<…>::_M_realloc_insert", true);
  CHECK(grow["self"]["alloc_count"] == 1100);
  CHECK(grow["self"]["alloc_bytes"] == 100 * 8188);
  CHECK(grow["self"]["leaked_bytes"] == 0);
  // The peak: the last vector's 4096 B block made while its 2048 B one lives.
  CHECK(grow["self"]["peak_bytes"] == 4096 + 2048);
  const Json nodes = function_row(f["by_self"], "make_nodes()");
  CHECK(nodes["self"]["alloc_count"] == 50);
  CHECK(nodes["self"]["alloc_bytes"] == 50 * 48);
  CHECK(nodes["self"]["leaked_bytes"] == 50 * 48);
  CHECK(nodes["self"]["peak_bytes"] == 0);  // made after the peak
  CHECK(nodes["total"] == nodes["self"]);
  // With what it calls, once a stack: grow_vectors has its vectors' and
  // allocates nothing itself.
  const Json caller = function_row(f["by_total"], "grow_vectors()");
  CHECK(caller["total"]["alloc_count"] == 1100);
  CHECK(caller["total"]["alloc_bytes"] == 100 * 8188);
  CHECK(caller["self"]["alloc_count"] == 0);
  const Json main_row = function_row(f["by_total"], "main");
  CHECK(main_row["total"]["alloc_count"].get<double>() >= 1150);
  CHECK(main_row["total"]["leaked_bytes"].get<double>() >= 50 * 48);
  // In text, a row a function, its columns under their heads.
  const RunResult text = analyze({"summary", "--top", "10", stream});
  REQUIRE(contains(text.out, "FUNCTIONS: by bytes allocated in the function itself\n"));
  std::istringstream lines(text.out.substr(text.out.find("FUNCTIONS: by bytes")));
  std::string title, head, line;
  std::getline(lines, title);
  std::getline(lines, head);
  bool found = false;
  while (std::getline(lines, line) && !line.empty())
    if (contains(line, "  make_nodes()")) {
      found = true;
      std::istringstream cells(line);
      std::vector<std::string> c;
      for (std::string w; cells >> w;) c.push_back(w);
      REQUIRE(c.size() == 9);  // 8 figures, the name
      CHECK(c[0] == "2.34KiB");  // self bytes
      CHECK(c[1] == "50");       // self calls
    }
  CHECK(found);
}

TEST_CASE("memory by function: a Lua function is one row for all of its lines", "[lua]") {
  TempDir dir;
  std::ofstream(dir / "x.lua") << "local function build(n)\n"
                                  "  local t = {}\n"
                                  "  for i = 1, n do t[i] = string.rep('x', 100) .. i end\n"
                                  "  for i = 1, n do t[n + i] = {} end\n"
                                  "  return t\n"
                                  "end\n"
                                  "keep = build(2000)\n";
  setenv("LUA_CPATH", PROF_LUA_MODULE_DIR "/?.so", 1);
  const RunResult run = run_under_agent({"lua5.4", "-l", "prof_lua", dir / "x.lua"});
  REQUIRE(run.exit_code == 0);
  REQUIRE(run.memprof_files.size() == 1);
  const std::string &stream = run.memprof_files[0];
  const Json by_function = summary({stream})["memory"]["functions"];
  const Json by_line = summary({"--by-line", stream})["memory"]["functions"];
  CHECK(by_line["by"] == "line");
  const std::string chunk = "@" + dir / "x.lua";
  const Json build = function_row(by_function["by_self"], "build (" + chunk + ":1)");
  // 2000 concatenations on line 3 and 2000 tables on line 4, in build itself.
  CHECK(build["self"]["alloc_count"].get<double>() >= 4000);
  double lines_calls = 0, lines_bytes = 0;
  size_t lines = 0;
  for (const Json &r : by_line["by_self"]) {
    const std::string name = r["function"];
    if (name.rfind("build (", 0) != 0) continue;
    lines++;
    lines_calls += r["self"]["alloc_count"].get<double>();
    lines_bytes += r["self"]["alloc_bytes"].get<double>();
  }
  CHECK(lines >= 2);
  CHECK(lines_calls == build["self"]["alloc_count"].get<double>());
  CHECK(lines_bytes == build["self"]["alloc_bytes"].get<double>());
  for (const Json &r : by_function["by_self"])
    if (r["function"].get<std::string>().rfind("build (", 0) == 0)
      CHECK(r["function"] == build["function"]);
}

TEST_CASE("allocations made before the agent started are counted and named as missed") {
  // libstdc++'s constructor allocates its emergency exception pool (GCC 12:
  // 64 objects of 1024 B and 64 dependent exceptions of 112 B) before the
  // agent's runs.
  RunResult run;
  const std::string stream = run_cxx("vectors", false, run);
  const Json before = summary({stream})["memory"]["before_start"];
  REQUIRE(before.is_object());
  CHECK(before["allocations"].get<double>() >= 1);
  CHECK(before["bytes"].get<double>() >= 64 * 1024 + 64 * 112);
  const RunResult text = analyze({"summary", stream});
  CHECK(contains(text.out, "  before start:  "));
  CHECK(contains(text.out, "made before the agent started"));
}
