// The line that says a program has Lua built in that no adapter attaches to
// (preload/static_lua_notice.h), end to end: e2e/lua_built_in.c linked with
// Lua 5.1's and LuaJIT's archives, nothing exported, says it once, fork
// children included; the stock lua5.4 (which exports the API) says it
// without the adapter, not with `-l prof_lua`; the same program on the
// shared liblua5.3.so.0 does not; the program's output and exit status are
// its own.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "agent_run.h"

namespace {

// What the program prints each time its Lua code has run.
const std::string kOk = "ok 5050\n";

std::string notice(const std::string &program, const std::string &release,
                   const std::string &why = "without its API exported") {
  return "libprof: " + program + " has " + release + " built in " + why +
         ": its Lua code shows as native frames only (see docs/lua.md)\n";
}

// Lua code for lua5.4 -e that makes strings for 1.2 s of CPU time, then prints `last`.
std::string busy_lua(const std::string &last) {
  return "local stop = os.clock() + 1.2 "
         "repeat local t = {} for i = 1, 100 do t[i] = string.rep('x', i) end "
         "until os.clock() >= stop print(" + last + ")";
}

}  // namespace

TEST_CASE("static lua: Lua 5.1 built in, nothing exported: one line, the program unchanged",
          "[static-lua]") {
  const RunResult bare = run_bare({PROF_LUA51_BUILT_IN, "1.2"});
  REQUIRE(bare.exit_code == 3);
  REQUIRE(bare.out == kOk);
  CHECK(bare.err.empty());
  const RunResult r = run_under_agent({PROF_LUA51_BUILT_IN, "1.2"});
  CHECK(r.exit_code == 3);
  CHECK(r.out == bare.out);
  CHECK(r.err == notice("lua51_built_in", "Lua 5.1"));
}

TEST_CASE("static lua: said once by a process that forks, not again by its child",
          "[static-lua]") {
  // The parent forks after 0.1 s, and both then run Lua for more than 1 s.
  const RunResult r = run_under_agent({PROF_LUA51_BUILT_IN, "1.2", "fork"});
  CHECK(r.exit_code == 3);
  CHECK(r.out == kOk + kOk + kOk);
  CHECK(r.err == notice("lua51_built_in", "Lua 5.1"));
  CHECK(r.memprof_files.size() == 2);
}

TEST_CASE("static lua: the CPU agent says it too, as the process ends", "[static-lua]") {
  const RunResult r = run_under(PROF_CPU_AGENT_PATH, {PROF_LUA51_BUILT_IN, "1.2"});
  CHECK(r.exit_code == 3);
  CHECK(r.out == kOk);
  CHECK(r.err == notice("lua51_built_in", "Lua 5.1"));
}

TEST_CASE("static lua: LuaJIT built in, nothing exported: one line", "[static-lua]") {
  const RunResult r = run_under_agent({PROF_LUAJIT_BUILT_IN, "1.2"});
  CHECK(r.exit_code == 3);
  CHECK(r.out == kOk);
  CHECK(r.err == notice("luajit_built_in", "LuaJIT 2.1"));
}

TEST_CASE("static lua: a process shorter than 1 s that never forks is not probed",
          "[static-lua]") {
  const RunResult r = run_under_agent({PROF_LUA51_BUILT_IN, "0.2"});
  CHECK(r.exit_code == 3);
  CHECK(r.out == kOk);
  CHECK(r.err.empty());
}

TEST_CASE("static lua: nothing said of a program on the shared liblua5.3.so.0", "[static-lua]") {
  // (Its states are attached; long enough and forking, so it was probed.)
  const RunResult r = run_under_agent({PROF_LUA53_SHARED, "1.2", "fork"});
  CHECK(r.exit_code == 3);
  CHECK(r.out == kOk + kOk + kOk);
  CHECK(r.err.empty());
}

TEST_CASE("static lua: nothing said of lua5.4 -l prof_lua, which exports its API",
          "[static-lua]") {
  // Its lua_ident is in its .rodata as in the programs above.
  setenv("LUA_CPATH_5_4", PROF_LUA54_MODULE_DIR "/?.so", 1);
  const RunResult r =
      run_under_agent({"lua5.4", "-l", "prof_lua", "-e", busy_lua("prof_lua.enabled")});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "true\n");
  CHECK(r.err.empty());
}

TEST_CASE("static lua: lua5.4 run for 1 s without the adapter: one line", "[static-lua]") {
  const RunResult r = run_under_agent({"lua5.4", "-e", busy_lua("'done'")});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "done\n");
  CHECK(r.err == notice("lua5.4", "Lua 5.4", "and no Lua adapter loaded"));
}
