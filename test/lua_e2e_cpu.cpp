// The sysprof RFC's example end to end: scripts/demo/sysprof_fib.lua (a Lua
// fibonacci and cfib.so's C one) on the stock lua5.4 with `-l prof_lua`,
// under libprof.so in callgraph mode. Each sample must have one of the
// shapes the script allows, and the C fibonacci's samples must merge its
// host frames (inside cfib.so) with the Lua frames that called it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "agent_run.h"
#include "lua_streams.h"

namespace {

const std::string kFib = PROF_LUA_DEMO_DIR "/sysprof_fib.lua";

// "sysprof_fib.lua:6:L", L within lua_payload (lines 6-11).
bool in_lua_payload(const std::string &frame) {
  const std::string prefix = "sysprof_fib.lua:6:";
  if (frame.rfind(prefix, 0) != 0) return false;
  const int line = std::stoi(frame.substr(prefix.size()));
  return line >= 6 && line <= 11;
}

}  // namespace

TEST_CASE("lua e2e: the sysprof RFC's fibonacci, Lua and C frames in one stack", "[lua]") {
  setenv("LUA_CPATH", PROF_LUA_MODULE_DIR "/?.so;" PROF_LUA_CFIB_DIR "/?.so", 1);
  const RunResult r = run_under_agent({"lua5.4", "-l", "prof_lua", kFib, "2"},
                                      {"PROF_CPU=callgraph", "PROF_MEMORY=0"});
  REQUIRE(r.signal == 0);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.sysprof_files.size() == 1);
  const std::string &path = r.sysprof_files[0];
  GuestProfile p = read_guest_sysprof(path);
  CHECK_FALSE(p.truncated);

  uint64_t cfib_base = 0, cfib_end = 0;
  for (const prof::ext::ModuleLoad &m : p.modules)
    if (m.path.size() >= 8 && m.path.compare(m.path.size() - 8, 8, "/cfib.so") == 0)
      cfib_base = m.base, cfib_end = m.base + m.size;
  REQUIRE(cfib_end > cfib_base);

  int lua_fib = 0, c_fib = 0, c_fib_merged = 0;
  uint64_t loading_unnamed = 0;
  for (size_t i = 0; i < p.samples.size(); i++) {
    const GuestSample &s = p.samples[i];
    if (!prof::vmstate_has_guest(s.vmstate)) continue;
    const GuestNames &g = s.stack;
    INFO("sample " << i << ": " << Catch::Detail::stringify(g));
    REQUIRE(!g.empty());
    CHECK(g.back() == "?");  // lua.c's pmain
    if (g.size() == 1) continue;  // pmain alone: loading modules, compiling the script
    const std::string &main = g[g.size() - 2];
    if (g.size() >= 3 && in_lua_payload(g[0])) {
      lua_fib++;
      CHECK(main == "sysprof_fib.lua:0:20");
      for (size_t k = 0; k + 2 < g.size(); k++) CHECK(in_lua_payload(g[k]));
    } else if (g.size() == 3 && g[0] == "cfib.fib") {
      c_fib++;
      CHECK(main == "sysprof_fib.lua:0:18");
      for (uint64_t ip : s.host)
        if (ip >= cfib_base && ip < cfib_end) {
          c_fib_merged++;
          break;
        }
    } else if (g.size() >= 3 && g[g.size() - 3] == "prof_lua.require") {
      // `require("cfib")` (line 4), through the adapter's require: the
      // module's opener is named only once require returns, so it may show
      // unnamed. Inside it: the original require, or, once that returned,
      // the adapter's scan naming the new module's C functions (Lua code
      // of the chunk "=prof_lua").
      CHECK(main == "sysprof_fib.lua:0:4");
      if (g.size() >= 4) {
        const std::string &inside = g[g.size() - 4];
        INFO("inside the adapter's require: " << inside);
        CHECK((inside == "require" || inside.rfind("prof_lua:", 0) == 0));
      }
      if (std::find(g.begin(), g.end() - 1, "?") != g.end() - 1) loading_unnamed++;
    } else if (g.size() == 3 && g[1] == "require" && g[0] == "luaopen_prof_lua") {
      // `-l prof_lua` itself: the adapter, registered in its opener, sees
      // the rest of its own load (its layout check, before the script).
    } else if (g.size() == 3) {
      CHECK(g[0] == "os.clock");  // the start time (line 14) or the loop's test (16)
      CHECK((main == "sysprof_fib.lua:0:14" || main == "sysprof_fib.lua:0:16"));
    } else {
      // Between the calls: the main chunk alone, on one of its lines.
      CHECK(g.size() == 2);
      CHECK(main.rfind("sysprof_fib.lua:0:", 0) == 0);
    }
  }
  CHECK(lua_fib > 0);
  CHECK(c_fib > 0);
  // A sample in cfib.fib has its C recursion in the host stack, but for
  // one taken in the few instructions between the VM pushing the call and
  // jumping to it (or returning and popping it): at most 1%, or one.
  CHECK(c_fib - c_fib_merged <= std::max(1, c_fib / 100));
  CHECK(p.odd_stacks == loading_unnamed);
}
