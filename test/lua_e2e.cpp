// The Lua 5.4 adapter end to end: the stock lua5.4 interpreter with
// `-l prof_lua` under libprof.so, its streams decoded with the format
// readers. Guest stacks expected by construction from the scripts' lines
// ("chunk:linedefined:line", see e2e/lua_streams.h); every stack ends in "?",
// lua.c's own pmain, a C function no Lua table holds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "agent_run.h"
#include "lua_streams.h"

namespace {

const std::string kRfc = PROF_LUA_DEMO_DIR "/memprof_rfc.lua";
const std::string kFrames = PROF_LUA_TEST_DIR "/lua_frames.lua";
const std::string kStress = PROF_LUA_TEST_DIR "/lua_stress.lua";

// LUA_CPATH for the module (and the demo's cfib), inherited by the runs.
void use_module() {
  setenv("LUA_CPATH", PROF_LUA_MODULE_DIR "/?.so;" PROF_LUA_CFIB_DIR "/?.so", 1);
}

GuestProfile profile_of(const RunResult &r) {
  REQUIRE(r.signal == 0);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.memprof_files.size() == 1);
  return read_guest_memprof(r.memprof_files[0]);
}

// The allocation events (allocs and reallocs) at each guest stack.
std::map<GuestNames, std::vector<const GuestAlloc *>> by_stack(const GuestProfile &p) {
  std::map<GuestNames, std::vector<const GuestAlloc *>> out;
  for (const GuestAlloc &a : p.allocs) out[*a.stack].push_back(&a);
  return out;
}

}  // namespace

TEST_CASE("lua e2e: without the agent the module stays off, the program unchanged", "[lua]") {
  use_module();
  const RunResult on = run_bare({"lua5.4", "-l", "prof_lua", "-e",
                                 "print(prof_lua.enabled, prof_lua.reason)"});
  CHECK(on.exit_code == 0);
  CHECK(on.out == "false\tthe libprof agent is not loaded\n");
  CHECK(on.err == "");
  const RunResult with = run_bare({"lua5.4", "-l", "prof_lua", kStress, "0.2"});
  const RunResult without = run_bare({"lua5.4", kStress, "0.2"});
  CHECK(with.exit_code == 0);
  CHECK(without.exit_code == 0);
  CHECK(with.out.rfind("rounds\t", 0) == 0);
  CHECK(without.out.rfind("rounds\t", 0) == 0);
  CHECK(with.err == "");
}

TEST_CASE("lua e2e: the memprof RFC's example, each string charged to its Lua lines", "[lua]") {
  use_module();
  const int n = 300;
  const GuestProfile p =
      profile_of(run_under_agent({"lua5.4", "-l", "prof_lua", kRfc, std::to_string(n)}));
  CHECK_FALSE(p.truncated);
  const auto stacks = by_stack(p);

  // string.rep('q', k) makes one string of 24 + k + 1 bytes (header, bytes,
  // NUL); k = 1 is the constant 'q', which already exists.
  const GuestNames rep{"string.rep", "memprof_rfc.lua:3:4", "memprof_rfc.lua:0:10", "?"};
  REQUIRE(stacks.count(rep));
  std::map<uint64_t, int> sizes;
  for (const GuestAlloc *a : stacks.at(rep)) {
    sizes[a->nsize]++;
    // The memprof location is the Lua line that called string.rep.
    CHECK(a->loc.source == prof::kAsourceLfunc);
    CHECK(p.name_of(prof::kFrameLfunc, a->loc.addr, a->loc.line) == "memprof_rfc.lua:3:4");
  }
  for (int k = 2; k <= n; k++) {
    INFO("string.rep('q', " << k << ")");
    CHECK(sizes[24 + k + 1] == 1);
  }

  // table.insert grows t's array by doubling: 1, 2, ..., 512 slots of 16 bytes.
  const GuestNames insert{"table.insert", "memprof_rfc.lua:0:9", "?"};
  REQUIRE(stacks.count(insert));
  std::vector<uint64_t> grown;
  for (const GuestAlloc *a : stacks.at(insert)) {
    grown.push_back(a->nsize);
    CHECK(p.name_of(prof::kFrameLfunc, a->loc.addr, a->loc.line) == "memprof_rfc.lua:0:9");
  }
  std::sort(grown.begin(), grown.end());
  CHECK(grown == std::vector<uint64_t>{16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192});

  // `append` itself: one closure with one upvalue (32 + 8 bytes), made at
  // its `end`, as in the RFC's report ("line 5: 1 40").
  const GuestNames closure{"memprof_rfc.lua:0:5", "?"};
  REQUIRE(stacks.count(closure));
  const auto &made = stacks.at(closure);
  CHECK(std::count_if(made.begin(), made.end(), [](const GuestAlloc *a) {
          return a->nsize == 40 && a->loc.source == prof::kAsourceLfunc && a->loc.line == 5;
        }) == 1);
  CHECK(p.odd_stacks == 0);
}

TEST_CASE("lua e2e: coroutines, errors and tail calls on the stock interpreter", "[lua]") {
  use_module();
  const GuestProfile p = profile_of(run_under_agent({"lua5.4", "-l", "prof_lua", kFrames}));
  const std::map<uint64_t, GuestNames> expected{
      {401, {"string.rep", "lua_frames.lua:3:4", "lua_frames.lua:16:17", "coroutine.resume",
             "lua_frames.lua:0:19", "?"}},
      {402, {"string.rep", "lua_frames.lua:3:4", "lua_frames.lua:20:21", "coroutine.wrap()",
             "lua_frames.lua:0:23", "?"}},
      {403, {"string.rep", "lua_frames.lua:3:4", "lua_frames.lua:0:25", "?"}},
      {404, {"string.rep", "lua_frames.lua:3:4", "lua_frames.lua:12:13", "error",
             "lua_frames.lua:9:10", "xpcall", "lua_frames.lua:0:26", "?"}},
      // via_tail vanished: mk was tail-called from it.
      {405, {"string.rep", "lua_frames.lua:3:4", "lua_frames.lua:0:27", "?"}},
  };
  for (const auto &e : expected) {
    INFO("mk(" << e.first << ")");
    std::vector<GuestNames> seen;
    for (const GuestAlloc &a : p.allocs)
      if (a.nsize == 24 + e.first + 1) seen.push_back(*a.stack);
    CHECK(seen == std::vector<GuestNames>{e.second});
  }
  CHECK(p.odd_stacks == 0);
}

TEST_CASE("lua e2e: coroutine.close runs the coroutine's __close handlers on its own stack",
          "[lua]") {
  use_module();
  const GuestProfile p =
      profile_of(run_under_agent({"lua5.4", "-l", "prof_lua", PROF_LUA_TEST_DIR "/lua_close.lua"}));
  // Closing resets the coroutine to its base, then calls the handler there.
  const GuestNames in_handler{"string.rep", "lua_close.lua:3:3", "lua_close.lua:5:6",
                              "coroutine.close", "lua_close.lua:0:11", "?"};
  for (uint64_t n = 601; n <= 603; n++) {
    INFO("mk(" << n << ")");
    std::vector<GuestNames> seen;
    for (const GuestAlloc &a : p.allocs)
      if (a.nsize == 24 + n + 1) seen.push_back(*a.stack);
    CHECK(seen == std::vector<GuestNames>{in_handler});
  }
}

TEST_CASE("lua e2e: churn under the agent, every allocation's stack named", "[lua]") {
  use_module();
  const RunResult r = run_under_agent({"lua5.4", "-l", "prof_lua", kStress, "1"});
  CHECK(r.out.rfind("rounds\t", 0) == 0);
  const GuestProfile p = profile_of(r);
  CHECK_FALSE(p.truncated);
  CHECK(p.allocs.size() > 0);
  INFO("first odd stack: " << p.first_odd_stack);
  CHECK(p.odd_stacks == 0);
}

TEST_CASE("lua e2e: a guest stack deeper than the limit ends in one cut frame, counted", "[lua]") {
  use_module();
  const std::string deep = PROF_LUA_TEST_DIR "/lua_deep.lua";
  const std::string cut_frame = "[… more frames]";
  // 802 bytes: string.rep's 777 bytes, the header (24) and the NUL.
  const auto bottom_allocs = [](const GuestProfile &p) {
    std::vector<const GuestAlloc *> out;
    for (const GuestAlloc &a : p.allocs)
      if (a.nsize == 802 && !a.stack->empty() && a.stack->front() == "string.rep") out.push_back(&a);
    return out;
  };
  SECTION("400 calls deep: 255 frames walked, then the cut frame") {
    const GuestProfile p = profile_of(run_under_agent({"lua5.4", "-l", "prof_lua", deep, "400"}));
    const auto allocs = bottom_allocs(p);
    REQUIRE(allocs.size() == 5);
    for (const GuestAlloc *a : allocs) {
      const GuestNames &s = *a->stack;
      REQUIRE(s.size() == 256);
      CHECK(s.back() == cut_frame);
      for (size_t i = 1; i + 1 < s.size(); i++) CHECK(s[i].rfind("lua_deep.lua:5:", 0) == 0);
    }
    CHECK(p.stats.at("guest_stacks_cut") >= 5);
  }
  SECTION("100 calls deep: the whole stack, no cut") {
    const GuestProfile p = profile_of(run_under_agent({"lua5.4", "-l", "prof_lua", deep, "100"}));
    const auto allocs = bottom_allocs(p);
    REQUIRE(allocs.size() == 5);
    for (const GuestAlloc *a : allocs) {
      const GuestNames &s = *a->stack;
      // string.rep, 101 frames of down, the main chunk, lua.c's pmain.
      CHECK(s.size() == 104);
      CHECK(std::count(s.begin(), s.end(), cut_frame) == 0);
    }
    CHECK(p.stats.at("guest_stacks_cut") == 0);
  }
}
