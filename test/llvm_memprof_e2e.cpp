// clang's -fmemory-profile runtime, for real: e2e/llvm_memprof_sites.cpp is
// compiled at test time by each installed clang (14 writes raw version 1,
// 19 version 4), run, and its raw profile read by prof-analyze with
// --binary. Counts, sizes and accesses per call site are known by
// construction; the same program built without instrumentation and run
// under libprof.so must give the same allocations per call site. A clang
// that is not installed skips its tests (exit 4).
#include <catch2/catch.hpp>

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "agent_run.h"
#include "temp_files.h"

using Json = nlohmann::json;

namespace {

std::string clang_or_skip(int version) {
  const std::string path = "/usr/bin/clang++-" + std::to_string(version);
  if (access(path.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "SKIPPED: %s is not installed (scripts/setup.sh)\n", path.c_str());
    std::exit(4);
  }
  return path;
}

RunResult analyze(std::vector<std::string> args) {
  args.insert(args.begin(), PROF_ANALYZER_PATH);
  return run_bare(args);
}

// Compiles the sites program with `clang`, plus `flags`, into `exe`.
void compile(const std::string &clang, const std::string &exe, std::vector<std::string> flags) {
  std::vector<std::string> argv = {clang, "-O1", "-g", "-fno-omit-frame-pointer",
                                   "-fno-optimize-sibling-calls"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {PROF_MEMPROF_SITES, "-o", exe});
  const RunResult r = run_bare(argv);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

// A MemProf-instrumented build, run once: its binary and raw profile.
struct MemprofRun {
  TempDir dir{"memprof"};
  std::string exe, raw;
};

MemprofRun run_instrumented(int version) {
  MemprofRun run;
  run.exe = run.dir / "sites";
  compile(clang_or_skip(version), run.exe, {"-fmemory-profile"});
  const RunResult r = run_bare({"env", "MEMPROF_OPTIONS=log_path=" + (run.dir / "raw"), run.exe});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // The runtime appends the pid: raw.<pid>.
  DIR *d = opendir(run.dir.path.c_str());
  REQUIRE(d);
  while (dirent *e = readdir(d))
    if (std::string(e->d_name).rfind("raw.", 0) == 0) run.raw = run.dir / e->d_name;
  closedir(d);
  REQUIRE(!run.raw.empty());
  return run;
}

// Folded lines summed by their innermost frame (the call site).
std::map<std::string, double> by_site(const std::string &folded) {
  std::map<std::string, double> out;
  std::istringstream lines(folded);
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.rfind(' ');
    const std::string stack = line.substr(0, space);
    out[stack.substr(stack.rfind(';') + 1)] += std::stod(line.substr(space + 1));
  }
  return out;
}

std::map<std::string, double> sites_of(const std::map<std::string, double> &all) {
  std::map<std::string, double> out;
  for (const char *site : {"small_site", "big_site", "cold_site", "hot_site"}) {
    const auto it = all.find(site);
    out[site] = it == all.end() ? 0 : it->second;
  }
  return out;
}

std::map<std::string, double> folded(const MemprofRun &run, const std::string &metric) {
  const RunResult r = analyze({"folded", "--binary", run.exe, "--metric", metric, run.raw});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return by_site(r.out);
}

void check_by_construction(int version) {
  const MemprofRun run = run_instrumented(version);
  CHECK(sites_of(folded(run, "alloc-count")) ==
        std::map<std::string, double>{
            {"small_site", 1000}, {"big_site", 10}, {"cold_site", 5}, {"hot_site", 1}});
  CHECK(sites_of(folded(run, "alloc-bytes")) ==
        std::map<std::string, double>{
            {"small_site", 64000}, {"big_site", 40960}, {"cold_site", 5120}, {"hot_site", 64}});
  const auto accesses = sites_of(folded(run, "access-count"));
  CHECK(accesses.at("cold_site") == 0);                // never touched
  CHECK(accesses.at("hot_site") >= 200000);            // 100,000 reads and writes
  CHECK(accesses.at("small_site") >= 1000);            // one write a block
  const auto density = sites_of(folded(run, "access-density"));
  CHECK(density.at("hot_site") > density.at("small_site"));
  CHECK(density.at("cold_site") == 0);

  const RunResult s = analyze({"summary", "--json", "--binary", run.exe, run.raw});
  INFO(s.err);
  REQUIRE(s.exit_code == 0);
  const Json j = Json::parse(s.out);
  CHECK(j["streams"][0]["kind"] == "llvm-memprof");
  CHECK(j["memory"]["alloc_calls"] >= 1016);  // the runtime's and libstdc++'s own come on top
  const Json &hot = j["memory"]["measured"]["hot"][0];
  CHECK(hot["stack"][0]["function"] == "hot_site");
  CHECK(hot["measured"]["accesses"]["total"].get<double>() >= 200000);
  // Cold: bytes per access; cold_site's blocks are never touched (as is
  // libstdc++'s emergency pool), hot_site's all the time.
  size_t cold_rank = SIZE_MAX, hot_rank = SIZE_MAX;
  const Json &cold = j["memory"]["measured"]["cold"];
  for (size_t i = 0; i < cold.size(); i++) {
    if (cold[i]["stack"][0]["function"] == "cold_site") {
      cold_rank = i;
      CHECK(cold[i]["measured"]["accesses"]["max"] == 0);
    }
    if (cold[i]["stack"][0]["function"] == "hot_site") hot_rank = i;
  }
  CHECK(cold_rank < hot_rank);
  CHECK(hot_rank == cold.size() - 1);
}

void check_refusals(int version) {
  const MemprofRun run = run_instrumented(version);
  SECTION("another binary is refused in one line") {
    const RunResult r = analyze({"summary", "--binary", "/bin/true", run.raw});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--binary /bin/true"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  SECTION("no binary is refused in one line") {
    const RunResult r = analyze({"folded", run.raw});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--binary PATH"));
  }
  SECTION("report has no events to read") {
    const RunResult r = analyze({"report", run.raw});
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("try `summary`"));
  }
}

void check_exports(int version) {
  const MemprofRun run = run_instrumented(version);
  TempDir out;
  for (const char *cmd : {"pprof", "speedscope", "html", "flamegraph"}) {
    CAPTURE(cmd);
    const std::string file = out / cmd;
    std::vector<std::string> args = {cmd, "--binary", run.exe, "-o", file, run.raw};
    if (std::string(cmd) == "flamegraph") args.insert(args.end(), {"--metric", "access-density"});
    const RunResult r = analyze(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::string text = read_text(file);
    if (std::string(cmd) == "pprof") text = run_bare({"gzip", "-dc", file}).out;
    CHECK_THAT(text, Catch::Contains("hot_site"));
    if (std::string(cmd) == "html")
      CHECK_THAT(text, Catch::Contains("MemProf: accesses per byte per second"));
    else if (std::string(cmd) != "flamegraph")
      CHECK_THAT(text, Catch::Contains("access_density"));
  }
  // Two runs of one binary: the same contexts, the same allocations.
  const RunResult again = run_bare({"env", "MEMPROF_OPTIONS=log_path=" + (out / "again"), run.exe});
  REQUIRE(again.exit_code == 0);
  DIR *d = opendir(out.path.c_str());
  REQUIRE(d);
  std::string raw2;
  while (dirent *e = readdir(d))
    if (std::string(e->d_name).rfind("again.", 0) == 0) raw2 = out / e->d_name;
  closedir(d);
  const RunResult diff = analyze({"diff", "--json", "--binary", run.exe, run.raw, raw2});
  INFO(diff.err);
  REQUIRE(diff.exit_code == 0);
  const Json dj = Json::parse(diff.out);
  for (const Json &s : dj["stacks"])
    if (!s["stack"].empty() && s["stack"][0]["function"] == "small_site")
      CHECK(s["alloc_count"]["delta"] == 0);
}

// The same program, uninstrumented, under libprof.so.
void check_against_libprof(int version) {
  const MemprofRun run = run_instrumented(version);
  const std::string plain = run.dir / "plain";
  compile(clang_or_skip(version), plain, {});
  const RunResult traced = run_under_agent({plain});
  REQUIRE(traced.exit_code == 0);
  REQUIRE(traced.memprof_files.size() == 1);
  const RunResult r = analyze({"folded", "--metric", "alloc-count", traced.memprof_files[0]});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto libprof = sites_of(by_site(r.out));
  CHECK(libprof.at("small_site") == 1000);
  CHECK(libprof == sites_of(folded(run, "alloc-count")));
}

}  // namespace

TEST_CASE("clang 14 MemProf (raw v1): counts, sizes and accesses per site", "[llvm_memprof_e2e]") {
  check_by_construction(14);
}
TEST_CASE("clang 19 MemProf (raw v4): counts, sizes and accesses per site", "[llvm_memprof_e2e]") {
  check_by_construction(19);
}
TEST_CASE("clang 14 MemProf: wrong or missing binary refused", "[llvm_memprof_e2e]") {
  check_refusals(14);
}
TEST_CASE("clang 19 MemProf: wrong or missing binary refused", "[llvm_memprof_e2e]") {
  check_refusals(19);
}
TEST_CASE("clang 19 MemProf: exports and diff carry the measures", "[llvm_memprof_e2e]") {
  check_exports(19);
}
TEST_CASE("clang 14 build: libprof and MemProf count the same allocations per site",
          "[llvm_memprof_e2e]") {
  check_against_libprof(14);
}
TEST_CASE("clang 19 build: libprof and MemProf count the same allocations per site",
          "[llvm_memprof_e2e]") {
  check_against_libprof(19);
}
