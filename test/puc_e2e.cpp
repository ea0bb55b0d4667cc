// A PUC Lua adapter end to end, built once per release (5.1, 5.2, 5.3):
// Debian's stock lua5.x with `-l prof_lua` under libprof.so, its streams
// decoded with the format readers and prof-analyze. Guest stacks expected by
// construction from the scripts' lines ("chunk:linedefined:line", see
// e2e/lua_streams.h); every stack of lua.c ends in "?", its own pmain, a C
// function no Lua table holds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "agent_run.h"
#include "lua_folded.h"
#include "lua_streams.h"

namespace {

const std::string kLua = LUA_BIN;

void use_module() {
  setenv("LUA_CPATH", PROF_LUA_MODULE_DIR "/?.so;" PROF_LUA_CFIB_DIR "/?.so", 1);
}

GuestProfile memprof_of(const RunResult &r) {
  REQUIRE(r.signal == 0);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.memprof_files.size() == 1);
  return read_guest_memprof(r.memprof_files[0]);
}

}  // namespace

TEST_CASE("puc e2e: without the agent the module stays off, the program unchanged", "[puc]") {
  use_module();
  const RunResult on = run_bare({kLua, "-l", "prof_lua", "-e",
                                 "local p = require('prof_lua') print(p.enabled, p.reason)"});
  CHECK(on.exit_code == 0);
  CHECK(on.out == "false\tthe libprof agent is not loaded\n");
  CHECK(on.err == "");
}

TEST_CASE("puc e2e: the memprof RFC's example, each string charged to its Lua lines", "[puc]") {
  use_module();
  const int n = 300;
  const GuestProfile p = memprof_of(
      run_under_agent({kLua, "-l", "prof_lua", PROF_LUA_DEMO_DIR "/memprof_rfc.lua",
                       std::to_string(n)}));
  CHECK_FALSE(p.truncated);
  // string.rep('q', k) makes one string of 24 + k + 1 bytes (header, bytes,
  // NUL) in `append` (line 4, defined at 3), called from the main chunk at
  // line 10; k = 1 is the constant 'q', which already exists.
  const GuestNames rep{"string.rep", "memprof_rfc.lua:3:4", "memprof_rfc.lua:0:10", "?"};
  std::map<uint64_t, int> sizes;
  for (const GuestAlloc &a : p.allocs) {
    if (*a.stack != rep) continue;
    sizes[a.nsize]++;
    CHECK(a.loc.source == prof::kAsourceLfunc);
    CHECK(p.name_of(prof::kFrameLfunc, a.loc.addr, a.loc.line) == "memprof_rfc.lua:3:4");
  }
  for (int k = 2; k <= n; k++) {
    INFO("string.rep('q', " << k << ")");
    CHECK(sizes[24 + k + 1] == 1);
  }
  INFO(p.first_odd_stack);
  CHECK(p.odd_stacks == 0);
}

TEST_CASE("puc e2e: each way into Lua code, its frames above the interpreter", "[puc]") {
  use_module();
  const int n = 1000;
  const RunResult r = run_under_agent(
      {kLua, "-l", "prof_lua", PROF_LUA_TEST_DIR "/lua_merge.lua", std::to_string(n)});
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.memprof_files.size() == 1);
  // e2e/lua_merge.lua: each section makes N tables at its own line,
  // reached by plain calls, from C (string.gsub), from a metamethod and in a
  // coroutine: the Lua lines, root first, of each (main chunk, caller,
  // allocating line). XXX: the first calls at a new depth may also grow the
  // Lua stack or add CallInfos there (a block each, the release's own choice
  // of when; Lua 5.2 grows a fresh coroutine's in steps): at most four more
  // blocks per section.
  std::map<std::vector<int>, double> by_lines;
  for (const auto &[s, count] : folded("--metric alloc-count " + r.memprof_files[0])) {
    std::vector<int> lines;
    for (const std::string &f : s)
      if (is_lua(f, "lua_merge.lua")) lines.push_back(std::atoi(f.c_str() + f.rfind(':') + 1));
    if (lines.empty()) continue;
    INFO(Catch::Detail::stringify(s));
    CHECK(merged_right(s, "lua_merge.lua"));
    by_lines[lines] += count;
  }
  for (const std::vector<int> &lines : std::vector<std::vector<int>>{
           {15, 6, 5}, {16, 7, 7}, {17, 9, 8}, {18, 13, 10}}) {
    INFO(Catch::Detail::stringify(lines));
    CHECK(by_lines[lines] >= n);
    CHECK(by_lines[lines] <= n + 4);
  }
}

TEST_CASE("puc e2e: the sysprof RFC's fibonacci, Lua and C frames in one stack", "[puc]") {
  use_module();
  const RunResult r = run_under_agent(
      {kLua, "-l", "prof_lua", PROF_LUA_DEMO_DIR "/sysprof_fib.lua", "2"},
      {"PROF_CPU=callgraph", "PROF_MEMORY=0"});
  REQUIRE(r.signal == 0);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.sysprof_files.size() == 1);
  const GuestProfile p = read_guest_sysprof(r.sysprof_files[0]);
  CHECK_FALSE(p.truncated);
  uint64_t cfib_base = 0, cfib_end = 0;
  for (const prof::ext::ModuleLoad &m : p.modules)
    if (m.path.size() >= 8 && m.path.compare(m.path.size() - 8, 8, "/cfib.so") == 0)
      cfib_base = m.base, cfib_end = m.base + m.size;
  REQUIRE(cfib_end > cfib_base);
  int lua_fib = 0, c_fib = 0, c_fib_merged = 0;
  for (const GuestSample &s : p.samples) {
    const GuestNames &g = s.stack;
    if (g.size() < 3) continue;
    INFO(Catch::Detail::stringify(g));
    // lua_payload (lines 6-11) recursing, called from the main chunk at 20.
    if (g[0].rfind("sysprof_fib.lua:6:", 0) == 0) {
      lua_fib++;
      CHECK(g[g.size() - 2] == "sysprof_fib.lua:0:20");
    } else if (g[0] == "cfib.fib") {
      c_fib++;
      CHECK(g[1] == "sysprof_fib.lua:0:18");
      for (uint64_t ip : s.host)
        if (ip >= cfib_base && ip < cfib_end) {
          c_fib_merged++;
          break;
        }
    }
  }
  CHECK(lua_fib > 0);
  CHECK(c_fib > 0);
  CHECK(c_fib - c_fib_merged <= std::max(1, c_fib / 100));
  // As prof-analyze shows them: Lua frames right above the interpreter.
  double lua = 0, merged = 0;
  for (const auto &[s, count] : folded(r.sysprof_files[0])) {
    if (std::none_of(s.begin(), s.end(), [](const std::string &f) { return is_lua(f, "sysprof_fib.lua"); }))
      continue;
    lua += count;
    if (merged_right(s, "sysprof_fib.lua")) merged += count;
  }
  CHECK(lua > 0);
  CHECK(merged >= 0.95 * lua);
}

TEST_CASE("puc e2e: coroutines' allocations on their own lines, under their resumers", "[puc]") {
  use_module();
  const int n = 500;
  const GuestProfile p = memprof_of(run_under_agent(
      {kLua, "-l", "prof_lua", "-e",
       "local n = " + std::to_string(n) + "\n"
       "local function body()\n"                                 // 2
       "  for i = 1, n do coroutine.yield(string.rep('c', 100 + i)) end\n"  // 3
       "end\n"                                                   // 4
       "local co = coroutine.wrap(body)\n"                       // 5
       "for _ = 1, n do co() end\n"                              // 6
       "local co2 = coroutine.create(body)\n"                    // 7
       "for _ = 1, n do coroutine.resume(co2) end\n"}));         // 8
  // Each string.rep makes one string of 24 + 100 + i + 1 bytes.
  const GuestNames wrapped{"string.rep", "(command line):2:3", "coroutine.wrap()", "(command line):0:6",
                           "?"};
  const GuestNames resumed{"string.rep", "(command line):2:3", "coroutine.resume",
                           "(command line):0:8", "?"};
  std::map<GuestNames, std::map<uint64_t, int>> sizes;
  for (const GuestAlloc &a : p.allocs) sizes[*a.stack][a.nsize]++;
  for (int i = 1; i <= n; i++) {
    INFO("string.rep('c', " << 100 + i << ")");
    CHECK(sizes[wrapped][125 + i] == 1);
    CHECK(sizes[resumed][125 + i] == 1);
  }
}

#if PROF_LUA_TYPED
TEST_CASE("puc e2e: N tables and M strings, by object type in the summary", "[puc]") {
  use_module();
  auto types = [](int ntables, int nstrings) {
    const RunResult r = run_under_agent({kLua, "-l", "prof_lua", PROF_LUA_TEST_DIR "/object_types.lua",
                                         std::to_string(ntables), std::to_string(nstrings)});
    REQUIRE(r.exit_code == 0);
    REQUIRE(r.memprof_files.size() == 1);
    const RunResult s = run_bare({PROF_ANALYZER_PATH, "summary", "--json", r.memprof_files[0]});
    REQUIRE(s.exit_code == 0);
    std::map<std::string, double> counts;
    const nlohmann::json j = nlohmann::json::parse(s.out);
    for (const auto &row : j["memory"]["object_types"]) {
      const std::string type = row["type"];
      counts[type + " count"] = row["alloc_count"].get<double>();
      counts[type + " bytes"] = row["alloc_bytes"].get<double>();
    }
    REQUIRE(counts.count("table count"));
    return counts;
  };
  // XXX: arguments of one width: Lua 5.2 makes its arg strings after the
  // module is loaded, so they are typed too.
  auto small = types(1000, 1500), large = types(3000, 3500);
  // A Table is 56 bytes in 5.2 and 5.3; each string of 40 characters one
  // 65-byte block (24 of header, 40, the NUL).
  CHECK(large["table count"] - small["table count"] == 2000);
  CHECK(large["table bytes"] - small["table bytes"] == 2000 * 56);
  CHECK(large["string count"] - small["string count"] == 2000);
  CHECK(large["string bytes"] - small["string bytes"] == 2000 * 65);
}
#endif
