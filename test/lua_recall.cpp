// The Lua 5.4 adapter's remembered walks (lua54_recall), in a host standing
// in for the agent: inside every allocation the recaller and a fresh walk
// (the plain backtracer) run one after the other, over every stack shape of
// the Lua tests: binary trees, coroutines nested and wrapped, errors, tail
// calls, fresh chunks and collector switches (lua_stress.lua), C functions,
// metamethods and coroutines re-entering the interpreter (lua_merge.lua),
// message handlers and pcall (lua_frames.lua), and frames kept above callers
// or resumers that changed (lua_recall_shapes.lua) or that another thread
// changed. A remembered walk must give exactly the fresh walk's frames, and
// what it vouches for as unchanged must be the outer frames it shares with
// the recaller's previous result.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "lua_host.h"

namespace {

constexpr int kMax = 256;

struct Tally {
  uint64_t walks = 0, recalled = 0, wrong = 0, overclaimed = 0;
  std::string first_wrong;
  std::vector<prof_guest_frame> previous;  // the recaller's previous result
};
Tally g_tally;

bool same(const prof_guest_frame &a, const prof_guest_frame &b) {
  return a.type == b.type && a.addr == b.addr && a.line == b.line;
}

// Outer frames a and b share.
int common_outer(const std::vector<prof_guest_frame> &a, const prof_guest_frame *b, int nb) {
  int k = 0;
  while (k < int(a.size()) && k < nb && same(a[a.size() - 1 - k], b[nb - 1 - k])) k++;
  return k;
}

void *checking_alloc(void *, void *ptr, size_t, size_t nsize) {
  prof_guest_stack_recaller recall = registered_recaller();
  prof_guest_backtracer fresh = registered_backtracer();
  if (recall && fresh) {
    prof_guest_frame room[kMax], walked[kMax];
    int vm_remembered, vm_walked, n = -1, unchanged = -1;
    // Read after the fresh walk: that one must leave them as they are.
    const prof_guest_frame *remembered = recall(nullptr, room, kMax, &n, &vm_remembered, &unchanged);
    const int m = fresh(nullptr, walked, kMax, &vm_walked);
    Tally &t = g_tally;
    t.walks++;
    if (unchanged > 0) t.recalled++;
    bool right = n == m && vm_remembered == vm_walked;
    for (int i = 0; right && i < n; i++) right = same(remembered[i], walked[i]);
    if (!right && t.wrong++ == 0)
      t.first_wrong = Catch::Detail::stringify(frame_names(remembered, n)) + " but a fresh walk: " +
                      Catch::Detail::stringify(frame_names(walked, m));
    if (unchanged < 0 || unchanged > common_outer(t.previous, remembered, n)) t.overclaimed++;
    t.previous.assign(remembered, remembered + n);
  }
  if (nsize == 0) {
    free(ptr);
    return nullptr;
  }
  return realloc(ptr, nsize);
}

std::string read_file(const std::string &path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Checks the walks made in the allocations of what run() runs.
void check_tally(const std::string &name) {
  INFO(name << ": first wrong remembered walk: " << g_tally.first_wrong);
  CHECK(g_tally.walks > 0);
  CHECK(g_tally.wrong == 0);
  CHECK(g_tally.overclaimed == 0);
  // The remembered walks are taken: each one is checked above.
  CHECK(g_tally.recalled > 0);
  WARN(name << ": " << g_tally.recalled << " of " << g_tally.walks << " walks remembered");
}

// Runs the script with arg[1] = argument in a fresh universe under checking_alloc.
void run_checked(const std::string &script, const std::string &argument) {
  g_tally = Tally();
  LuaHost host({}, checking_alloc, nullptr);
  REQUIRE(host.module_enabled());
  REQUIRE(registered_recaller());
  lua_newtable(host.L());
  lua_pushstring(host.L(), argument.c_str());
  lua_rawseti(host.L(), -2, 1);
  lua_setglobal(host.L(), "arg");
  const std::string name = script.substr(script.rfind('/') + 1);
  const std::string err = host.run(read_file(script), name);
  CHECK(err == "");
  check_tally(name);
}

}  // namespace

TEST_CASE("lua: remembered walks name exactly a fresh walk's frames, churn", "[lua]") {
  run_checked(PROF_LUA_TEST_DIR "/lua_stress.lua", "2");
}

TEST_CASE("lua: remembered walks name exactly a fresh walk's frames, re-entries", "[lua]") {
  run_checked(PROF_LUA_TEST_DIR "/lua_merge.lua", "2000");
}

TEST_CASE("lua: remembered walks name exactly a fresh walk's frames, errors", "[lua]") {
  run_checked(PROF_LUA_TEST_DIR "/lua_frames.lua", "");
}

TEST_CASE("lua: remembered walks name exactly a fresh walk's frames, changed callers", "[lua]") {
  run_checked(PROF_LUA_TEST_DIR "/lua_recall_shapes.lua", "50");
}

// A coroutine resumed in turn by two OS threads (one at a time), each with
// its own remembered walk: between two walks of one thread, the other pops
// and pushes frames of the coroutine and marks them (puc_walk.h); the
// coroutine then allocates below frames at the same places from another
// caller (via_b where this thread last saw via_a).
TEST_CASE("lua: remembered walks name exactly a fresh walk's frames, two threads", "[lua]") {
  g_tally = Tally();
  LuaHost host({}, checking_alloc, nullptr);
  REQUIRE(host.module_enabled());
  REQUIRE(host.run("local function leaf()\n"
                   "  local t = {}\n"
                   "  coroutine.yield()\n"
                   "  local u = {}\n"
                   "  return t, u\n"
                   "end\n"
                   "local function shared() local t = leaf() return t end\n"
                   "local function via_a() local t = shared() return t end\n"
                   "local function via_b() local t = shared() return t end\n"
                   "local co = coroutine.create(function() while true do via_a() via_b() end end)\n"
                   "function step() assert(coroutine.resume(co)) end\n",
                   "threads.lua") == "");
  std::string err;
  const auto step = [&host, &err] {
    lua_getglobal(host.L(), "step");
    if (lua_pcall(host.L(), 0, 0, 0) != LUA_OK) {
      err = lua_tostring(host.L(), -1);
      lua_pop(host.L(), 1);
    }
  };
  for (int i = 0; i < 20; i++) {
    step();
    std::thread(step).join();
  }
  CHECK(err == "");
  check_tally("threads.lua");
}
