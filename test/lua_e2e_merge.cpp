// Guest frames merged into host stacks on Debian's stock, stripped lua5.4
// (`-l prof_lua` under libprof.so, memory and CPU recorded together), as
// prof-analyze prints them: every run of Lua frames sits right above the
// host frame of the interpreter that runs it (luaV_execute, which the
// stripped binary does not name: the adapter finds it), and between two Lua
// frames there is either nothing or the native code that re-entered the
// interpreter, ending in luaV_execute. e2e/lua_merge.lua reaches Lua code
// in four ways, each allocating N tables at its own line: the stacks and
// their counts are known by construction.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "agent_run.h"
#include "lua_folded.h"

namespace {

const std::string kMerge = PROF_LUA_TEST_DIR "/lua_merge.lua";
const std::string kBinaryTrees = PROF_LUA_BENCH_DIR "/binarytrees.lua";

using Stack = FoldedStack;

// The line of a Lua frame.
int line_of(const std::string &frame) {
  const size_t colon = frame.rfind(':');
  return std::atoi(frame.c_str() + colon + 1);
}

// The lines of the Lua frames, root first.
std::vector<int> lua_lines(const Stack &s, const std::string &script) {
  std::vector<int> lines;
  for (const std::string &f : s)
    if (is_lua(f, script)) lines.push_back(line_of(f));
  return lines;
}

// Whether native code re-entered the interpreter between the last two Lua frames.
bool reentered_at_top(const Stack &s, const std::string &script) {
  size_t last = s.size(), before = s.size();
  for (size_t i = 0; i < s.size(); i++)
    if (is_lua(s[i], script)) before = last, last = i;
  return before < last && last - before > 1 && s[last - 1] == kVm;
}

}  // namespace

TEST_CASE("lua e2e merge: each way into Lua code, its frames above the interpreter", "[lua]") {
  setenv("LUA_CPATH", PROF_LUA_MODULE_DIR "/?.so", 1);
  const int n = 1000;
  const RunResult r = run_under_agent({"lua5.4", "-l", "prof_lua", kMerge, std::to_string(n)},
                                      {"PROF_CPU=callgraph"});
  REQUIRE(r.signal == 0);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.memprof_files.size() == 1);
  const auto stacks = folded("--metric alloc-count " + r.memprof_files[0]);
  REQUIRE(!stacks.empty());

  // Lua lines root first (main chunk, caller, allocating line) of each section.
  struct Section {
    const char *name;
    std::vector<int> lines;
    bool reentered;  // native code between the last two Lua frames
    int expected;
    double count = 0;
  };
  // XXX: the coroutine's first call (coroutine.yield, line 10) also gives
  // its fresh thread its second CallInfo, one more block at that line.
  std::vector<Section> sections = {
      {"plain calls", {15, 6, 5}, false, n},
      {"a C function calling Lua", {16, 7, 7}, true, n},
      {"a metamethod", {17, 9, 8}, true, n},
      {"a coroutine", {18, 13, 10}, true, n + 1},
  };
  double with_lua = 0;
  for (const auto &[s, count] : stacks) {
    const std::vector<int> lines = lua_lines(s, "lua_merge.lua");
    if (lines.empty()) continue;
    INFO(Catch::Detail::stringify(s));
    CHECK(merged_right(s, "lua_merge.lua"));
    with_lua += count;
    for (Section &sec : sections)
      if (lines == sec.lines) {
        CHECK(reentered_at_top(s, "lua_merge.lua") == sec.reentered);
        sec.count += count;
      }
  }
  for (const Section &sec : sections) {
    INFO(sec.name);
    CHECK(sec.count == sec.expected);
  }
  CHECK(with_lua >= 4 * n);
}

TEST_CASE("lua e2e merge: binary-trees, memory and CPU together, Lua frames above the interpreter",
          "[lua]") {
  setenv("LUA_CPATH", PROF_LUA_MODULE_DIR "/?.so", 1);
  const RunResult r = run_under_agent({"lua5.4", "-l", "prof_lua", kBinaryTrees, "13"},
                                      {"PROF_CPU=callgraph"});
  REQUIRE(r.signal == 0);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.memprof_files.size() == 1);
  REQUIRE(r.sysprof_files.size() == 1);

  // Memory: every allocation made under Lua code, its Lua frames merged right.
  double lua_allocs = 0;
  for (const auto &[s, count] : folded("--metric alloc-count " + r.memprof_files[0])) {
    if (lua_lines(s, "binarytrees.lua").empty()) continue;
    INFO(Catch::Detail::stringify(s));
    CHECK(merged_right(s, "binarytrees.lua"));
    lua_allocs += count;
  }
  CHECK(lua_allocs > 100000);

  // CPU, by VM state (the root frame): samples outside the agent (whose own
  // are NATIVE) have Lua frames right above the interpreter, GC ones too.
  double program = 0, merged = 0, gc = 0, gc_merged = 0;
  for (const auto &[s, count] : folded("--by-vmstate " + r.sysprof_files[0])) {
    REQUIRE(!s.empty());
    if (s[0] == "NATIVE") continue;
    program += count;
    const bool lua = !lua_lines(s, "binarytrees.lua").empty();
    INFO(Catch::Detail::stringify(s));
    if (lua) CHECK(merged_right(s, "binarytrees.lua"));
    if (lua && merged_right(s, "binarytrees.lua")) merged += count;
    if (s[0] == "GC") {
      gc += count;
      if (lua) gc_merged += count;
    }
  }
  REQUIRE(program > 0);
  CHECK(merged >= 0.95 * program);
  CHECK(gc_merged >= 0.95 * gc);
}

TEST_CASE("lua e2e merge: a cut guest stack shows its cut frame right above the interpreter", "[lua]") {
  setenv("LUA_CPATH", PROF_LUA_MODULE_DIR "/?.so", 1);
  const RunResult r = run_under_agent({"lua5.4", "-l", "prof_lua", PROF_LUA_TEST_DIR "/lua_deep.lua", "400"});
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.memprof_files.size() == 1);
  int cut_stacks = 0;
  for (const auto &[s, count] : folded("--metric alloc-count " + r.memprof_files[0])) {
    const auto cut = std::find(s.begin(), s.end(), "[… more frames]");
    if (cut == s.end()) continue;
    INFO(Catch::Detail::stringify(s));
    cut_stacks++;
    CHECK(std::count(s.begin(), s.end(), "[… more frames]") == 1);
    REQUIRE(cut != s.begin());
    CHECK(*(cut - 1) == kVm);
    // Then the innermost Lua frames the walk kept (255 less a string.rep
    // the host shows): calls of down, or the main chunk when only lua.c's
    // pmain was cut.
    REQUIRE(s.end() - cut > 254);
    for (auto f = cut + 1; f != cut + 255; f++) CHECK(f->find("lua_deep.lua:") != std::string::npos);
  }
  CHECK(cut_stacks > 0);
}
