// Whole host stacks in CPU samples, end to end: under node (JIT code and
// assembly without unwind tables on the way to the root), and in samples
// that interrupt the agent itself ("[libprof]" at the leaf, the program's
// callers below it), on a C program and on the stock lua5.4 with prof_lua.
// Stacks are read with `prof-analyze folded`.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "agent_run.h"

namespace {

std::string program(const char *name) { return std::string(PROF_E2E_BIN_DIR) + "/" + name; }

using Frames = std::vector<std::string>;

// `prof-analyze ARGS`, its standard output.
std::string analyze(const std::string &args) {
  std::string out;
  FILE *f = popen((std::string(PROF_ANALYZER_PATH) + " " + args + " 2>/dev/null").c_str(), "r");
  REQUIRE(f);
  char buf[1 << 16];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  pclose(f);
  return out;
}

// `prof-analyze folded FILE`: each stack, root first, with its samples.
std::vector<std::pair<Frames, double>> folded(const std::string &file) {
  std::vector<std::pair<Frames, double>> stacks;
  std::istringstream in(analyze("folded " + file));
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    Frames frames;
    std::istringstream names(line.substr(0, space));
    for (std::string f; std::getline(names, f, ';');) frames.push_back(f);
    stacks.emplace_back(frames, std::stod(line.substr(space + 1)));
  }
  return stacks;
}

bool starts_with(const std::string &s, const std::string &prefix) { return s.rfind(prefix, 0) == 0; }

// The outermost frame is where the thread began: the program's entry point
// or the clone that started the thread.
bool at_root(const Frames &f) {
  return !f.empty() && (f[0] == "_start" || starts_with(f[0], "__clone") || starts_with(f[0], "clone"));
}

bool has_frame(const Frames &f, const std::string &prefix) {
  for (const std::string &name : f)
    if (starts_with(name, prefix)) return true;
  return false;
}

bool contains(const Frames &f, const std::string &part) {
  for (const std::string &name : f)
    if (name.find(part) != std::string::npos) return true;
  return false;
}

constexpr const char *kAgent = "[libprof]";

// Checks the rules of samples in the agent: no prof:: frame in any stack,
// "[libprof]" only as a leaf, and never alone. Returns the samples in it.
double check_agent_frames(const std::vector<std::pair<Frames, double>> &stacks) {
  double in_agent = 0;
  for (const auto &s : stacks) {
    INFO(s.first.size() << " frames, leaf " << s.first.back());
    CHECK_FALSE(contains(s.first, "prof::"));
    for (size_t i = 0; i + 1 < s.first.size(); i++) CHECK(s.first[i] != kAgent);
    if (s.first.back() != kAgent) continue;
    in_agent += s.second;
    CHECK(s.first.size() >= 2);  // the program's caller below it
  }
  return in_agent;
}

// The summary's "in the profiler ([libprof]): N (P%)" figure N.
double summary_in_agent(const std::string &file) {
  const std::string text = analyze("summary " + file);
  const std::string key = "in the profiler ([libprof]): ";
  const size_t at = text.find(key);
  REQUIRE(at != std::string::npos);
  return std::stod(text.substr(at + key.size()));
}

}  // namespace

TEST_CASE("cpu stacks: under node, 90% of samples reach the thread's root, JS functions inside them",
          "[cpu]") {
  if (system("node --version >/dev/null 2>&1") != 0) {
    std::fprintf(stderr, "SKIPPED: no node (scripts/setup.sh installs nodejs)\n");
    std::exit(4);
  }
  // Native code without frame pointers (OpenSSL's assembly, V8's C++) under
  // JIT code and V8's builtins, which have no unwind tables.
  const std::string script =
      "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }"
      "let s = 0; for (let i = 0; i < 20; i++) s += fib(30);"
      "require('crypto').pbkdf2Sync('a', 'b', 100000, 64, 'sha512');"
      "console.log(s);";
  for (const char *memory : {"PROF_MEMORY=0", "PROF_MEMORY=1"}) {
    SECTION(memory) {
      const RunResult r = run_under_agent({"node", "--perf-basic-prof", "-e", script},
                                          {"PROF_CPU=callgraph", memory});
      REQUIRE(r.exit_code == 0);
      CHECK(r.out == "16640800\n");  // 20 fib(30)
      REQUIRE(r.sysprof_files.size() == 1);
      const auto stacks = folded(r.sysprof_files[0]);
      double all = 0, rooted = 0, js = 0, js_rooted = 0;
      for (const auto &s : stacks) {
        all += s.second;
        const bool root = at_root(s.first);
        if (root) rooted += s.second;
        if (!has_frame(s.first, "JS:") || !contains(s.first, "fib")) continue;
        js += s.second;
        if (root) js_rooted += s.second;
      }
      INFO(rooted << " of " << all << " samples reach the root; " << js_rooted << " of " << js
                  << " in fib");
      CHECK(all >= 200);
      CHECK(rooted >= 0.9 * all);
      CHECK(js >= 50);
      CHECK(js_rooted >= 0.9 * js);
      check_agent_frames(stacks);
      // The perf map node wrote for this run.
      const size_t dot = r.sysprof_files[0].rfind(".sysprof");
      const size_t pid_at = r.sysprof_files[0].rfind('.', dot - 1) + 1;
      unlink(("/tmp/perf-" + r.sysprof_files[0].substr(pid_at, dot - pid_at) + ".map").c_str());
    }
  }
}

TEST_CASE("cpu stacks: a sample inside the agent is [libprof] above the C program's caller", "[cpu]") {
  const RunResult r = run_under_agent({program("cpu_alloc"), "0.5", "2"}, {"PROF_CPU=callgraph"});
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.sysprof_files.size() == 1);
  REQUIRE(r.memprof_files.size() == 1);
  const auto stacks = folded(r.sysprof_files[0]);
  double all = 0, in_churn = 0;
  for (const auto &s : stacks) {
    all += s.second;
    const Frames &f = s.first;
    if (f.back() == kAgent && f.size() >= 2 && f[f.size() - 2] == "churn") in_churn += s.second;
    // The program never asks for a block's size: the heap count's queries
    // are the agent's.
    CHECK_FALSE(has_frame(f, "malloc_usable_size"));
  }
  const double in_agent = check_agent_frames(stacks);
  INFO(in_agent << " of " << all << " samples in the agent, " << in_churn << " called from churn");
  // The threads do little but call malloc and free: the agent's share is large.
  CHECK(in_agent >= 0.1 * all);
  CHECK(in_churn >= 0.95 * in_agent);
  CHECK(summary_in_agent(r.sysprof_files[0]) == in_agent);
  // Memory stacks show the program's frames only.
  for (const auto &s : folded(r.memprof_files[0])) {
    CHECK_FALSE(contains(s.first, "prof::"));
    CHECK_FALSE(has_frame(s.first, kAgent));
  }
}

TEST_CASE("cpu stacks: samples on a coroutine's stack and on a sigaltstack reach the root, inside the agent too",
          "[cpu]") {
  // makecontext()'s stack comes from malloc; the handler's alternate stack
  // too, and its frames lead through the signal frame to the program's.
  const std::string mode = GENERATE("coroutine", "altstack");
  const std::string root = mode == "coroutine" ? "__start_context" : "_start";
  INFO(mode);
  const RunResult r = run_under_agent({program("cpu_other_stacks"), mode, "0.5"}, {"PROF_CPU=callgraph"});
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.sysprof_files.size() == 1);
  const auto stacks = folded(r.sysprof_files[0]);
  double all = 0, churning = 0, agent_rooted = 0, agent_churning = 0;
  for (const auto &s : stacks) {
    all += s.second;
    const Frames &f = s.first;
    const bool churns = has_frame(f, "churn_off_stack");
    if (churns) churning += s.second;
    if (churns && mode == "altstack") CHECK(has_frame(f, "on_usr1"));
    if (f.back() != kAgent) continue;
    // (The agent also runs outside the other stack: the program's first
    // malloc, the handler's way in.)
    if (f[0] == root || f[0] == "_start") agent_rooted += s.second;
    if (churns && f[0] == root && f[f.size() - 2] == "churn_off_stack") agent_churning += s.second;
  }
  const double in_agent = check_agent_frames(stacks);
  INFO(churning << " of " << all << " samples in churn_off_stack; of " << in_agent << " in the agent, "
                << agent_rooted << " reach the root, " << agent_churning << " from churn_off_stack on "
                << root);
  CHECK(churning >= 0.95 * all);
  CHECK(in_agent >= 0.1 * all);
  CHECK(agent_rooted == in_agent);
  CHECK(agent_churning >= 0.95 * in_agent);
}

TEST_CASE("cpu stacks: a stripped program's functions are one frame each, named by their first address",
          "[cpu]") {
  // The functions' addresses from the copy that kept its symbols.
  std::map<std::string, std::string> function_at;  // "0x1189" -> "spin"
  FILE *nm = popen(("nm " + program("cpu_burn")).c_str(), "r");
  REQUIRE(nm);
  char line[512];
  while (fgets(line, sizeof line, nm)) {
    unsigned long long addr;
    char type, name[400];
    if (sscanf(line, "%llx %c %399s", &addr, &type, name) == 3 && (type == 't' || type == 'T')) {
      char hex[32];
      snprintf(hex, sizeof hex, "0x%llx", addr);
      function_at[hex] = name;
    }
  }
  pclose(nm);
  // The PLT's stubs are code too, one unwind entry for the section.
  FILE *sections = popen(("readelf -SW " + program("cpu_burn")).c_str(), "r");
  REQUIRE(sections);
  while (fgets(line, sizeof line, sections)) {
    char name[64], type[64];
    unsigned long long addr;
    const char *at = strchr(line, ']');
    if (at && sscanf(at + 1, "%63s %63s %llx", name, type, &addr) == 3 && !strncmp(name, ".plt", 4) &&
        strcmp(name, ".plt") * strcmp(name, ".plt.got") * strcmp(name, ".plt.sec") == 0) {
      char hex[32];
      snprintf(hex, sizeof hex, "0x%llx", addr);
      function_at[hex] = name;
    }
  }
  pclose(sections);
  bool named_burn = false;
  for (const auto &f : function_at) named_burn |= f.second == "burn_main";
  REQUIRE(named_burn);
  const RunResult r = run_under_agent({program("cpu_burn_stripped"), "0.5", "1"}, {"PROF_CPU=callgraph", "PROF_MEMORY=0"});
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.sysprof_files.size() == 1);
  double all = 0, in_program = 0;
  std::map<std::string, double> leaves;
  for (const auto &s : folded(r.sysprof_files[0])) {
    all += s.second;
    const std::string &leaf = s.first.back();
    const std::string prefix = "cpu_burn_stripped+";
    if (!starts_with(leaf, prefix)) continue;
    in_program += s.second;
    leaves[leaf.substr(prefix.size())] += s.second;
  }
  INFO(in_program << " of " << all << " samples with the leaf in the program, in " << leaves.size()
                  << " functions");
  CHECK(in_program >= 0.5 * all);
  // Every leaf is a function's (or the PLT's) first address: the spinning
  // loop's samples (at many addresses) are one frame.
  for (const auto &leaf : leaves) {
    INFO("leaf at " << leaf.first);
    CHECK(function_at.count(leaf.first) == 1);
  }
  CHECK(leaves.size() <= 3);
}

TEST_CASE("cpu stacks: the kernel's vDSO code is named (clock_gettime)", "[cpu]") {
  const RunResult r = run_under_agent({program("cpu_clock"), "0.3"}, {"PROF_CPU=callgraph", "PROF_MEMORY=0"});
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.sysprof_files.size() == 1);
  double all = 0, in_vdso = 0;
  for (const auto &s : folded(r.sysprof_files[0])) {
    all += s.second;
    INFO("leaf " << s.first.back());
    CHECK_FALSE(has_frame(s.first, "linux-vdso"));
    if (has_frame(s.first, "__vdso_clock_gettime")) in_vdso += s.second;
  }
  INFO(in_vdso << " of " << all << " samples in __vdso_clock_gettime");
  CHECK(in_vdso >= 0.1 * all);
}

TEST_CASE("cpu stacks: on lua5.4 with prof_lua, samples in the agent keep the Lua stack", "[cpu]") {
  setenv("LUA_CPATH", PROF_LUA_MODULE_DIR "/?.so", 1);
  const RunResult r = run_under_agent({"lua5.4", "-l", "prof_lua", PROF_BENCH_DIR "/binarytrees.lua", "12"},
                                      {"PROF_CPU=callgraph"});
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.sysprof_files.size() == 1);
  const auto stacks = folded(r.sysprof_files[0]);
  // The stripped lua5.4 names its _start by address: the root most samples share.
  std::map<std::string, double> by_root;
  for (const auto &s : stacks) by_root[s.first[0]] += s.second;
  std::string root;
  for (const auto &kv : by_root)
    if (root.empty() || kv.second > by_root[root]) root = kv.first;
  CHECK((starts_with(root, "lua5.4+") || root == "_start"));
  double all = 0, rooted = 0, with_lua = 0;
  const double in_agent = check_agent_frames(stacks);
  for (const auto &s : stacks) {
    all += s.second;
    // The adapter's backtracer runs only inside the agent (its hooks, the
    // sampler): its frames are the agent's.
    CHECK_FALSE(contains(s.first, "puc_backtrace"));
    CHECK_FALSE(contains(s.first, "puc_walk"));
    CHECK_FALSE(contains(s.first, "profiling_alloc"));  // the adapter's allocator wrapper
    if (s.first.back() != kAgent) continue;
    if (s.first[0] == root) rooted += s.second;
    if (contains(s.first, "binarytrees.lua:")) with_lua += s.second;
  }
  INFO(in_agent << " of " << all << " samples in the agent; " << rooted << " reach the root, "
                << with_lua << " with Lua frames");
  CHECK(in_agent >= 0.05 * all);  // every allocation recorded, with its stacks
  CHECK(rooted == in_agent);
  CHECK(with_lua >= 0.8 * in_agent);
  CHECK(summary_in_agent(r.sysprof_files[0]) == in_agent);
  // Memory stacks neither: the wrappers are transparent there.
  REQUIRE(r.memprof_files.size() == 1);
  for (const auto &s : folded(r.memprof_files[0])) {
    CHECK_FALSE(contains(s.first, "profiling_alloc"));
  }
}
