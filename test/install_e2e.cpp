// Installing, end to end: `cmake --install` of this build into a fresh
// prefix, then the installed tools alone, run from another directory with no
// PROF_* variable and no path into the build tree: prof-run finds the
// installed agents, analyzer and Lua adapter by its own location, and what
// it records is read back by the installed prof-analyze.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "agent_run.h"

namespace {

using Json = nlohmann::json;

// A fresh prefix with this build installed in it, and a directory beside it
// to run from; both removed at the end of the test. The environment loses
// what could point the tools elsewhere.
struct Installed {
  TempDir root{"install"};
  std::string prefix, work;

  explicit Installed(const std::string &prefix_name = "prefix") {
    prefix = root / prefix_name;
    work = root / "work";
    REQUIRE(mkdir(work.c_str(), 0755) == 0);
    for (const char *name : {"LUA_CPATH", "LUA_CPATH_5_2", "LUA_CPATH_5_3", "LUA_CPATH_5_4",
                             "LUA_INIT", "LUA_INIT_5_4"})
      unsetenv(name);
    const RunResult r = run_bare({PROF_CMAKE, "--install", PROF_BUILD_DIR, "--prefix", prefix});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(chdir(work.c_str()) == 0);
  }
  std::string bin(const std::string &tool) const { return prefix + "/bin/" + tool; }
  std::string lib(const std::string &file) const { return prefix + "/lib/" + file; }
};

// The value of NAME in `env`'s output, or "" when it is not set.
std::string env_value(const std::string &env_out, const std::string &name) {
  std::istringstream in(env_out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + "=", 0) == 0) return line.substr(name.size() + 1);
  return "";
}

Json summary(const Installed &at, const std::vector<std::string> &files) {
  std::vector<std::string> argv{at.bin("prof-analyze"), "summary", "--json"};
  argv.insert(argv.end(), files.begin(), files.end());
  const RunResult r = run_bare(argv);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return Json::parse(r.out);
}

std::vector<std::string> files_in(const std::string &dir, const char *kind) {
  const RunResult ls = run_bare({"find", dir, "-name", std::string("*") + kind});
  std::vector<std::string> files;
  std::istringstream in(ls.out);
  for (std::string line; std::getline(in, line);) files.push_back(line);
  return files;
}

// The leak table's row whose stack passes through `function`.
const Json *leak_of(const Json &s, const std::string &function) {
  for (const Json &row : s["memory"]["leaks"])
    for (const Json &frame : row["stack"])
      if (frame["function"] == function) return &row;
  return nullptr;
}

}  // namespace

TEST_CASE("cmake --install puts each file where its users look for it") {
  const Installed at;
  for (const char *tool : {"prof-run", "prof-analyze"})
    CHECK(access(at.bin(tool).c_str(), X_OK) == 0);
  for (const char *lib : {"libprof.so", "libprof-cpu.so", "lua/5.1/prof_lua.so", "lua/5.2/prof_lua.so",
                          "lua/5.3/prof_lua.so", "lua/5.4/prof_lua.so"})
    CHECK(access(at.lib(lib).c_str(), R_OK) == 0);
  CHECK(access((at.prefix + "/include/libprof.h").c_str(), R_OK) == 0);
}

TEST_CASE("the installed prof-run preloads the installed agents and adapter") {
  const Installed at;
  const RunResult mem = run_bare({at.bin("prof-run"), "-q", "-o", "out", "--", "env"});
  INFO(mem.err);
  REQUIRE(mem.exit_code == 0);
  CHECK(env_value(mem.out, "LD_PRELOAD") == at.lib("libprof.so"));
  CHECK(env_value(mem.out, "PROF_OUTPUT") == at.work + "/out/prof.%e.%p");
  // Each release's adapter where that release looks first: 5.2 to 5.4 in
  // their own variable, Lua 5.1's and LuaJIT's (one directory) in LUA_CPATH.
  CHECK(env_value(mem.out, "LUA_CPATH") == at.lib("lua/5.1/?.so") + ";;");
  for (const char *release : {"5.2", "5.3", "5.4"}) {
    INFO(release);
    std::string var = std::string("LUA_CPATH_") + release;
    var[var.size() - 2] = '_';
    CHECK(env_value(mem.out, var) == at.lib("lua/" + std::string(release) + "/?.so") + ";;");
  }

  const RunResult cpu = run_bare(
      {at.bin("prof-run"), "-q", "-o", "out-cpu", "--no-memory", "--cpu", "callgraph", "--", "env"});
  INFO(cpu.err);
  REQUIRE(cpu.exit_code == 0);
  CHECK(env_value(cpu.out, "LD_PRELOAD") == at.lib("libprof-cpu.so"));

  // A LUA_CPATH of the user's keeps its entries after the adapter's.
  setenv("LUA_CPATH", "/elsewhere/?.so", 1);
  const RunResult own = run_bare({at.bin("prof-run"), "-q", "-o", "out-own", "--", "env"});
  CHECK(env_value(own.out, "LUA_CPATH") == at.lib("lua/5.1/?.so") + ";/elsewhere/?.so");
  CHECK(env_value(own.out, "LUA_CPATH_5_4") == at.lib("lua/5.4/?.so") + ";/elsewhere/?.so");
}

TEST_CASE("a prefix LD_PRELOAD cannot name is refused in one line, before running") {
  const Installed at("a prefix");  // the loader splits LD_PRELOAD at spaces
  const RunResult r = run_bare({at.bin("prof-run"), "-o", "out", "--", "touch", "ran"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("LD_PRELOAD cannot hold a path with a space") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(access("ran", F_OK) != 0);
}

TEST_CASE("the installed prof-run profiles memory, and prof-analyze reads it") {
  const Installed at;
  copy_file(PROF_CTL_PROGRAM, at.work + "/ctl_prog", 0755);
  const RunResult r = run_bare({at.bin("prof-run"), "-o", "out", "--", "./ctl_prog", "leaks", "5"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // The launcher's own summary: it found the installed analyzer.
  CHECK(r.err.find("1 profile file(s) in " + at.work + "/out") != std::string::npos);
  CHECK(r.err.find("MEMORY") != std::string::npos);
  CHECK(access((at.work + "/out/memory.svg").c_str(), R_OK) == 0);

  const auto files = files_in(at.work + "/out", ".memprof");
  REQUIRE(files.size() == 1);
  // The agent that recorded is the installed one.
  bool installed_agent = false;
  for (const prof::ext::ModuleLoad &m : read_memprof(files[0]).modules)
    installed_agent |= m.path == at.lib("libprof.so");
  CHECK(installed_agent);

  const Json s = summary(at, files);
  // ctl_prog leaks: leak_one() 4 x 64 B, leak_two() 3 x 128 B, leak_n(5) 5 x 100 B.
  const Json *one = leak_of(s, "leak_one"), *two = leak_of(s, "leak_two"),
             *n = leak_of(s, "leak_n");
  REQUIRE(one);
  REQUIRE(two);
  REQUIRE(n);
  CHECK((*one)["live_blocks"] == 4);
  CHECK((*one)["live_bytes"] == 4 * 64);
  CHECK((*two)["live_blocks"] == 3);
  CHECK((*two)["live_bytes"] == 3 * 128);
  CHECK((*n)["live_blocks"] == 5);
  CHECK((*n)["live_bytes"] == 5 * 100);
}

TEST_CASE("the installed prof-run samples the CPU with the installed libprof-cpu.so") {
  const Installed at;
  copy_file(PROF_CTL_PROGRAM, at.work + "/ctl_prog", 0755);
  // 3 x 100 ms of CPU time: about 300 samples at 1 kHz.
  const RunResult r = run_bare({at.bin("prof-run"), "-q", "-o", "out", "--no-memory", "--cpu",
                                "callgraph", "--", "./ctl_prog", "cpu-phases", "100"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(files_in(at.work + "/out", ".memprof").empty());
  const auto files = files_in(at.work + "/out", ".sysprof");
  REQUIRE(files.size() == 1);
  const double samples = summary(at, files)["cpu"]["samples"];
  CHECK(samples > 150);
  CHECK(samples < 600);
}

TEST_CASE("lua5.4 finds the installed adapter, alone and under the installed prof-run") {
  const Installed at;
  const std::string adapter = at.lib("lua/5.4/prof_lua.so");
  const char *report = "print(prof_lua.enabled, package.searchpath('prof_lua', package.cpath))";

  // LUA_CPATH names the installed directory only (no `;;`, so no default path).
  setenv("LUA_CPATH", (at.lib("lua/5.4/?.so")).c_str(), 1);
  const RunResult bare = run_bare({"lua5.4", "-l", "prof_lua", "-e", report});
  INFO(bare.err);
  CHECK(bare.exit_code == 0);
  CHECK(bare.out == "false\t" + adapter + "\n");  // no agent: inert
  unsetenv("LUA_CPATH");

  // Under the installed prof-run, with no LUA_CPATH: the allocations of
  // string.rep carry the script's Lua frame.
  std::ofstream(at.work + "/strings.lua") << "local t = {}\n"
                                             "for i = 1, 50 do t[i] = string.rep('x', 4000 + i) end\n"
                                          << report << "\n";
  const RunResult r = run_bare(
      {at.bin("prof-run"), "-q", "-o", "out", "--", "lua5.4", "-l", "prof_lua", "strings.lua"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "true\t" + adapter + "\n");
  const Json s = summary(at, files_in(at.work + "/out", ".memprof"));
  bool lua_frame = false;
  for (const Json &row : s["memory"]["allocated"])
    for (const Json &frame : row["stack"])
      lua_frame |= frame["kind"] == "guest" &&
                   frame["function"].get<std::string>().find("strings.lua:2") != std::string::npos;
  CHECK(lua_frame);
}

TEST_CASE("each of lua5.1 to lua5.4 loads its own release's adapter under the installed prof-run") {
  const Installed at;
  std::ofstream(at.work + "/which.lua")
      << "local p = require('prof_lua')\n"
         "local function search(path)\n"  // package.searchpath, which 5.1 lacks
         "  for t in path:gmatch('[^;]+') do\n"
         "    local f = t:gsub('%?', 'prof_lua')\n"
         "    local h = io.open(f)\n"
         "    if h then h:close() return f end\n"
         "  end\n"
         "end\n"
         "print(p.enabled, search(package.cpath))\n";
  for (const std::string release : {"5.1", "5.2", "5.3", "5.4"}) {
    INFO("lua" << release);
    const RunResult r = run_bare(
        {at.bin("prof-run"), "-q", "-o", "out-" + release, "--", "lua" + release, "which.lua"});
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "true\t" + at.lib("lua/" + release + "/prof_lua.so") + "\n");
  }
}
