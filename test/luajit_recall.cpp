// The LuaJIT adapter's remembered walks (frame_trail.h), end to end: under
// PROF_LUAJIT_CHECK_WALKS=1 the module takes every allocation's capture over
// its trail and again with a fresh walk, and reports at exit how many it
// checked, how many the trail served in part and how many differed, and how
// many of the frames it told the agent unchanged were not. Every
// stack shape of the scripts (recursion past the frame limit, coroutines,
// vararg calls, metamethods, errors, closures dropped and remade, C and FFI
// callbacks re-entering Lua), JIT on and off: none may differ, and the
// trail must serve most of them (else the check checks nothing).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "agent_run.h"

namespace {

struct WalkCheck {
  bool reported = false;
  uint64_t checked = 0, served = 0, differ = 0, told_unchanged = 0, changed = 0;
};

WalkCheck walk_check_of(const std::string &err) {
  static const std::regex line(
      "prof_luajit walk check: ([0-9]+) checked, ([0-9]+) served by the trail, ([0-9]+) differ"
      "[^;]*; ([0-9]+) frames told unchanged, ([0-9]+) of them changed");
  std::smatch m;
  WalkCheck w;
  if (!std::regex_search(err, m, line)) return w;
  w.reported = true;
  w.checked = std::stoull(m[1]);
  w.served = std::stoull(m[2]);
  w.differ = std::stoull(m[3]);
  w.told_unchanged = std::stoull(m[4]);
  w.changed = std::stoull(m[5]);
  return w;
}

void check_walks(const std::vector<std::string> &args) {
  setenv("LUA_CPATH", PROF_LUAJIT_MODULE_DIR "/?.so", 1);
  std::vector<std::string> argv{"luajit", "-l", "prof_luajit"};
  argv.insert(argv.end(), args.begin(), args.end());
  const RunResult r = run_under_agent(argv, {"PROF_LUAJIT_CHECK_WALKS=1"});
  INFO(r.err);
  REQUIRE(r.signal == 0);
  CHECK(r.exit_code == 0);
  const WalkCheck w = walk_check_of(r.err);
  REQUIRE(w.reported);
  CHECK(w.differ == 0);
  CHECK(w.checked > 1000);
  CHECK(w.served > w.checked / 2);
  // The agent compares only the frames not told unchanged (libprof.h,
  // prof_guest_walk): none of those may have changed, and most are told.
  CHECK(w.changed == 0);
  CHECK(w.told_unchanged > w.checked);
}

}  // namespace

TEST_CASE("luajit recall: remembered walks name exactly a fresh walk's frames, stack shapes",
          "[luajit]") {
  for (const char *jit : {"off", "on"}) {
    INFO("JIT " << jit);
    check_walks({PROF_LUAJIT_TEST_DIR "/luajit_recall.lua", jit, "200"});
  }
}

TEST_CASE("luajit recall: remembered walks name exactly a fresh walk's frames, FFI callbacks",
          "[luajit]") {
  for (const char *jit : {"off", "on"}) {
    INFO("JIT " << jit);
    check_walks({PROF_LUAJIT_TEST_DIR "/luajit_ffi.lua", jit, "10"});
  }
}

TEST_CASE("luajit recall: remembered walks name exactly a fresh walk's frames, binary trees",
          "[luajit]") {
  for (const char *jit : {"-joff", "-jon"}) {
    INFO(jit);
    check_walks({jit, PROF_LUAJIT_DEMO_DIR "/../bench/binarytrees.lua", "10"});
  }
}
