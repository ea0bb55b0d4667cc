// The LuaJIT adapter attached with no edit: a program that embeds LuaJIT
// through libluajit-5.1.so.2 and never names the profiler (e2e/luajit_embed.c)
// gets its Lua allocations and CPU frames, on Debian's stock library and on
// OpenResty's (the one nginx's Lua module runs, unpacked by setup.sh).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <regex>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "agent_run.h"
#include "luajit_streams.h"

namespace {

constexpr uint64_t kTableBytes = 64;  // sizeof(GCtab), GC64
const std::string kEmbed = PROF_LUAJIT_EMBED;
const std::string kOpenResty = PROF_OPENRESTY_DIR "/usr/lib/x86_64-linux-gnu";

// Neither LUA_CPATH nor a require: the agent finds the adapter itself.
RunResult run_embed(const std::vector<std::string> &args, std::vector<std::string> env = {}) {
  unsetenv("LUA_CPATH");
  std::vector<std::string> argv{kEmbed};
  argv.insert(argv.end(), args.begin(), args.end());
  env.push_back("PROF_COMPRESS=0");
  return run_under_agent(argv, env);
}

std::string openresty_library_path() {
  struct stat st;
  INFO("setup.sh unpacks OpenResty's LuaJIT into " PROF_OPENRESTY_DIR);
  REQUIRE(stat((kOpenResty + "/libluajit-5.1.so.2").c_str(), &st) == 0);
  return "LD_LIBRARY_PATH=" + kOpenResty;
}

}  // namespace

TEST_CASE("luajit attach: a program that links libluajit is profiled with no edit and no flag",
          "[luajit]") {
  for (const bool openresty : {false, true}) {
    INFO((openresty ? "OpenResty's LuaJIT" : "Debian's libluajit"));
    std::vector<std::string> env;
    if (openresty) env.push_back(openresty_library_path());
    const RunResult r = run_embed({"3000"}, env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "3000\n");
    CHECK(r.err.empty());
    REQUIRE(r.memprof_files.size() == 1);
    const VmStream s = read_vm_stream(r.memprof_files[0]);
    CHECK(s.count(prof::MemprofRecord::Alloc, "embed:3", kTableBytes) == 3000);
  }
}

TEST_CASE("luajit attach: PROF_LUA=0 leaves the state alone", "[luajit]") {
  const RunResult r = run_embed({"3000"}, {"PROF_LUA=0"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  REQUIRE(r.memprof_files.size() == 1);
  const VmStream s = read_vm_stream(r.memprof_files[0]);
  CHECK(s.count(prof::MemprofRecord::Alloc, "embed:3", kTableBytes) == 0);
}

TEST_CASE("luajit attach: a state made before fork charges the child's allocations to the child",
          "[luajit]") {
  // nginx's shape: the master makes the state, its workers run it.
  const RunResult r = run_embed({"2000", "fork"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "2000\n");
  CHECK(r.err.empty());
  REQUIRE(r.memprof_files.size() == 2);
  // The child is the process whose parent made the other stream.
  const Recorded a = read_memprof(r.memprof_files[0]), b = read_memprof(r.memprof_files[1]);
  REQUIRE((a.ppid == b.pid || b.ppid == a.pid));
  const std::string &child = r.memprof_files[a.ppid == b.pid ? 0 : 1];
  const std::string &parent = r.memprof_files[a.ppid == b.pid ? 1 : 0];
  CHECK(read_vm_stream(parent).count(prof::MemprofRecord::Alloc, "embed:3", kTableBytes) == 0);
  CHECK(read_vm_stream(child, parent).count(prof::MemprofRecord::Alloc, "embed:3", kTableBytes) ==
        2000);
}

TEST_CASE("luajit attach: CPU samples of an embedded state carry its Lua frames", "[luajit]") {
  for (const bool openresty : {false, true}) {
    INFO((openresty ? "OpenResty's LuaJIT" : "Debian's libluajit"));
    std::vector<std::string> env{"PROF_CPU=callgraph", "PROF_MEMORY=0"};
    if (openresty) env.push_back(openresty_library_path());
    const RunResult r = run_embed({"10", "burn", "300"}, env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    REQUIRE(r.sysprof_files.size() == 1);
    const CpuStream cpu = read_cpu_stream(r.sysprof_files[0]);
    uint64_t in_loop = 0;
    for (const CpuSample &s : cpu.samples)
      for (const std::string &f : s.stack)
        if (f == "embed:5" || f == "embed:6") {
          in_loop++;
          break;
        }
    // 300 ms of CPU at 1 kHz, nearly all of it in lines 5-6.
    CHECK(cpu.samples.size() > 150);
    CHECK(in_loop * 10 >= cpu.samples.size() * 8);
  }
}

TEST_CASE("luajit attach: states past the adapter's slots are said once, counted, and unharmed",
          "[luajit]") {
  // 1 + 40 states live at once: 32 are profiled, 9 are not.
  const RunResult r = run_embed({"1000", "states", "40"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "1000\n");
  // One line, naming the library as the loader found it.
  CHECK(std::regex_match(r.err, std::regex("libprof: a Lua state of /[^ ]*/libluajit-5\\.1\\.so\\.2 is "
                                           "not profiled: every slot for a LuaJIT state is taken "
                                           "\\(any more such states are counted: "
                                           "lua_states_not_profiled\\)\n")));
  REQUIRE(r.memprof_files.size() == 1);
  CHECK(stat_counter(read_memprof(r.memprof_files[0]), "lua_states_not_profiled") == 9);
  // The first state, made first, is profiled.
  const VmStream s = read_vm_stream(r.memprof_files[0]);
  CHECK(s.count(prof::MemprofRecord::Alloc, "embed:3", kTableBytes) == 1000);
}

TEST_CASE("luajit attach: with the JIT on, an embedded state's trace samples keep their callers "
          "and native stack", "[luajit]") {
  for (const bool openresty : {false, true}) {
    INFO((openresty ? "OpenResty's LuaJIT" : "Debian's libluajit"));
    std::vector<std::string> env{"PROF_CPU=callgraph", "PROF_MEMORY=0"};
    if (openresty) env.push_back(openresty_library_path());
    const RunResult r = run_embed({"10", "burn", "300", "jit"}, env);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    REQUIRE(r.sysprof_files.size() == 1);
    const CpuStream cpu = read_cpu_stream(r.sysprof_files[0]);
    // The spin is a trace started in the loop (line 5 or 6): its samples
    // name it, then the chunk's caller frames are none (it is the main
    // chunk), and their native stacks reach the program's main.
    uint64_t traced = 0, whole = 0;
    for (const CpuSample &s : cpu.samples) {
      if (s.vmstate != prof::kVmstTrace || s.stack.empty()) continue;
      if (s.stack[0] != "TRACE@embed:5" && s.stack[0] != "TRACE@embed:6") continue;
      traced++;
      whole += s.host_frames > 3;
    }
    CHECK(cpu.samples.size() > 150);
    CHECK(traced * 10 >= cpu.samples.size() * 6);
    CHECK(whole * 10 >= traced * 9);
  }
}
