// Lua frames named by their function on the stock lua5.4 (`-l prof_lua`
// under libprof.so), as prof-analyze prints them: e2e/lua_names.lua defines
// a function in each form the analyzer reads names from (`function M.f(`,
// `local function f(`, `f = function(`, `function o:m(`), each making N
// tables at its own line, and the main chunk makes N more: the stacks and
// their counts are known by construction. The script runs by a relative
// path and the analyzer from elsewhere, so its source is found through the
// working directory the stream records. C functions are named as Lua names
// them (string.rep), and no frame or site is a bare `CFUNC 0x...`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "agent_run.h"
#include "folded_stacks.h"

namespace {

// A Lua frame of lua_names.lua, named or not.
bool is_names_frame(const std::string &frame) {
  return frame.find("@lua_names.lua:") != std::string::npos;
}

// The Lua frames of a stack, root first.
std::vector<std::string> lua_frames(const FoldedStack &s) {
  std::vector<std::string> out;
  for (const std::string &f : s)
    if (is_names_frame(f)) out.push_back(f);
  return out;
}

}  // namespace

TEST_CASE("lua e2e names: Lua frames carry their function's name", "[lua]") {
  // The script runs by a relative path from e2e/, the analyzer from /.
  char back[PATH_MAX];
  REQUIRE(getcwd(back, sizeof back));
  REQUIRE(chdir(PROF_LUA_TEST_DIR) == 0);
  setenv("LUA_CPATH", PROF_LUA_MODULE_DIR "/?.so", 1);
  const int n = 1000;
  const RunResult r = run_under_agent({"lua5.4", "-l", "prof_lua", "lua_names.lua",
                                       std::to_string(n), "0.5"},
                                      {"PROF_CPU=callgraph"});
  REQUIRE(chdir("/") == 0);
  REQUIRE(r.signal == 0);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.memprof_files.size() == 1);
  REQUIRE(r.sysprof_files.size() == 1);
  const auto memory = folded("--metric alloc-count " + r.memprof_files[0]);

  // Memory: each form's frame (at the allocating line), with its count.
  std::map<std::vector<std::string>, double> by_lua;
  for (const auto &kv : memory) by_lua[lua_frames(kv.first)] += kv.second;
  const std::map<std::vector<std::string>, double> want = {
      {{"(main chunk) (@lua_names.lua:34)", "M.make_module (@lua_names.lua:7)"}, n},
      {{"(main chunk) (@lua_names.lua:35)", "make_local (@lua_names.lua:11)"}, n},
      {{"(main chunk) (@lua_names.lua:36)", "make_assigned (@lua_names.lua:15)"}, n},
      {{"(main chunk) (@lua_names.lua:37)", "object:make_method (@lua_names.lua:20)"}, n},
      {{"(main chunk) (@lua_names.lua:38)"}, n},
  };
  for (const auto &kv : want) {
    INFO(Catch::Detail::stringify(kv.first));
    CHECK(by_lua[kv.first] == kv.second);
  }

  // Memory: a C function by its Lua name, right above the Lua frame that
  // called it; each call's result is a fresh long string, one allocation
  // in lua_pushlstring.
  double rep = 0;
  for (const auto &kv : memory) {
    const FoldedStack &s = kv.first;
    const auto at = std::find(s.begin(), s.end(), "string.rep");
    if (at != s.begin() && at != s.end() && at[-1] == "repeated (@lua_names.lua:24)" &&
        std::find(at, s.end(), "lua_pushlstring") != s.end())
      rep += kv.second;
  }
  CHECK(rep == n);

  // CPU: the burning line under its function's name, in most samples (the
  // rest are start-up and the allocating loops).
  double total = 0, spin = 0;
  for (const auto &kv : folded(r.sysprof_files[0])) {
    total += kv.second;
    if (lua_frames(kv.first) ==
        std::vector<std::string>{"(main chunk) (@lua_names.lua:40)", "spin (@lua_names.lua:29)"})
      spin += kv.second;
  }
  INFO(spin << " of " << total << " samples");
  CHECK(spin > total / 3);

  // No C function is left unnamed: lua.c's pmain, which no table holds, is
  // named as its host code is.
  for (const std::string &file : {r.memprof_files[0], r.sysprof_files[0]}) {
    const RunResult out = run_bare({PROF_ANALYZER_PATH, "folded", file});
    REQUIRE(out.exit_code == 0);
    CHECK(out.out.find("CFUNC 0x") == std::string::npos);
  }
  // (The whole summary: the default one shows the top three stacks alone.)
  for (const std::vector<std::string> &command :
       {std::vector<std::string>{"report"}, std::vector<std::string>{"summary", "--full"}}) {
    std::vector<std::string> argv{PROF_ANALYZER_PATH};
    argv.insert(argv.end(), command.begin(), command.end());
    argv.push_back(r.memprof_files[0]);
    const RunResult out = run_bare(argv);
    REQUIRE(out.exit_code == 0);
    CHECK(out.out.find("CFUNC 0x") == std::string::npos);
    CHECK(out.out.find("make_local (@lua_names.lua:11)") != std::string::npos);
  }
  REQUIRE(chdir(back) == 0);
}
