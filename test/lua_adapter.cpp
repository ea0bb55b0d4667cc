// The Lua 5.4 adapter in a host that embeds liblua5.4 and stands in for the
// agent: the backtracer's frames at known lines, from a C function called by
// Lua (as inside an allocation hook) and from a SIGPROF handler, across
// coroutines, errors and tail calls. Expected frames are written by hand from
// the Lua sources below ("chunk:linedefined:line", see lua_host.h).
#include <catch2/catch.hpp>

#include <csignal>
#include <cstring>
#include <string>
#include <sys/time.h>
#include <vector>

#include "lua_host.h"

namespace {

using Names = std::vector<std::string>;

std::vector<Names> g_probed;
std::vector<int> g_probed_vmstates;

// probe(): records the guest stack at the point of the call.
int probe(lua_State *) {
  prof_guest_frame frames[64];
  int vmstate = -2;
  const int n = registered_backtracer()(nullptr, frames, 64, &vmstate);
  g_probed.push_back(frame_names(frames, n));
  g_probed_vmstates.push_back(vmstate);
  return 0;
}

std::vector<Names> probe_run(const char *source) {
  g_probed.clear();
  g_probed_vmstates.clear();
  LuaHost host({{"probe", probe}});
  REQUIRE(host.module_enabled());
  REQUIRE(host.run(source) == "");
  return g_probed;
}

}  // namespace

TEST_CASE("lua: frames of nested calls at known lines", "[lua]") {
  const auto got = probe_run(R"(local function inner(x)
  local y = probe()
  return x
end
local function outer()
  local a = inner(1)
  return a
end
outer()
)");
  REQUIRE(got == std::vector<Names>{{"probe", "t:1:2", "t:5:6", "t:0:9"}});
  REQUIRE(g_probed_vmstates == std::vector<int>{PROF_VMST_CFUNC});
}

TEST_CASE("lua: a tail call replaces its caller, as lua_getstack shows", "[lua]") {
  const auto got = probe_run(R"(local function callee()
  probe()
  return 1
end
local function caller()
  return callee()
end
local function c_tail()
  return probe()
end
caller()
c_tail()
)");
  // Lua 5.4 calls a C function in tail position as a plain call: its caller stays.
  REQUIRE(got == std::vector<Names>{{"probe", "t:1:2", "t:0:11"},
                                    {"probe", "t:8:9", "t:0:12"}});
}

TEST_CASE("lua: a coroutine's frames come before its resumer's", "[lua]") {
  const auto got = probe_run(R"(local co = coroutine.create(function()
  probe()
  coroutine.yield()
  probe()
end)
coroutine.resume(co)
local w = coroutine.wrap(function()
  probe()
end)
w()
coroutine.resume(co)
local outer = coroutine.wrap(function()
  local inner = coroutine.create(function() probe() end)
  coroutine.resume(inner)
end)
outer()
probe()
)");
  REQUIRE(got == std::vector<Names>{
                     {"probe", "t:1:2", "coroutine.resume", "t:0:6"},
                     {"probe", "t:7:8", "coroutine.wrap()", "t:0:10"},
                     {"probe", "t:1:4", "coroutine.resume", "t:0:11"},
                     {"probe", "t:13:13", "coroutine.resume", "t:12:14", "coroutine.wrap()",
                      "t:0:16"},
                     {"probe", "t:0:17"},
                 });
}

TEST_CASE("lua: errors unwind the frames, and a message handler sees them", "[lua]") {
  const auto got = probe_run(R"(local function boom()
  error("boom")
end
local function handler(msg)
  probe()
  return msg
end
pcall(boom)
probe()
xpcall(boom, handler)
local co = coroutine.create(function() boom() end)
coroutine.resume(co)
probe()
local w = coroutine.wrap(boom)
pcall(w)
probe()
)");
  REQUIRE(got == std::vector<Names>{
                     {"probe", "t:0:9"},
                     {"probe", "t:4:5", "error", "t:1:2", "xpcall", "t:0:10"},
                     {"probe", "t:0:13"},
                     {"probe", "t:0:16"},
                 });
}

namespace {

// half_return(): stops in the middle of its own return, where moveresults has
// copied its result's value (2.5) over its function slot but not yet the tag,
// and records the guest stack there, as a signal landing then would. Then
// finishes the stack as it was.
// Lua 5.4.4's lua_State and CallInfo up to the fields it moves: a stack
// slot is a value, then its tag.
struct Slot54 {
  void *value;
  unsigned char tt;
};
struct CallInfo54 {
  Slot54 *func;
};
struct State54 {
  void *next;
  unsigned char tt, marked, status, allowhook;
  unsigned short nci;
  Slot54 *top;
  void *l_G;
  CallInfo54 *ci;
};

int half_return(lua_State *L) {
  probe(L);
  lua_pushnumber(L, 2.5);
  State54 *state = reinterpret_cast<State54 *>(L);
  Slot54 *func = state->ci->func;
  void *const whole = func->value;
  func->value = state->top[-1].value;
  probe(L);
  func->value = whole;
  return 1;
}

}  // namespace

TEST_CASE("lua: a C function caught returning is left out, not named from its result", "[lua]") {
  g_probed.clear();
  LuaHost host({{"probe", probe}, {"half_return", half_return}});
  REQUIRE(host.module_enabled());
  REQUIRE(host.run("local x = half_return()\nassert(x == 2.5)\n") == "");
  REQUIRE(g_probed == std::vector<Names>{{"half_return", "t:0:1"}, {"t:0:1"}});
}

TEST_CASE("lua: where the check cannot run, the module says why and stays off", "[lua]") {
  // Inside a finalizer the collector refuses lua_gc, which the layout check
  // needs: the module must decline in one line, not crash or register.
  LuaHost host({}, nullptr, nullptr, false);
  REQUIRE(host.run(R"lua(setmetatable({}, {__gc = function()
  local m = require("prof_lua")
  enabled, reason = m.enabled, m.reason
end})
collectgarbage()
assert(enabled == false, "enabled")
assert(reason == "cannot run the collector here (inside a finalizer?)", reason)
)lua") == "");
}

namespace {

// A host allocator that walks the guest stack of every new string of the
// sizes string.rep("x", 101..150) makes, as the agent's allocation hook does.
std::vector<std::pair<size_t, Names>> g_string_allocs;

void *walking_alloc(void *, void *ptr, size_t osize, size_t nsize) {
  if (nsize == 0) {
    free(ptr);
    return nullptr;
  }
  const size_t kHeader = 24;  // a string is its header, its bytes and a NUL
  if (!ptr && osize == LUA_TSTRING && nsize >= kHeader + 101 + 1 && nsize <= kHeader + 150 + 1 &&
      registered_backtracer()) {
    prof_guest_frame frames[16];
    int vmstate;
    const int n = registered_backtracer()(nullptr, frames, 16, &vmstate);
    g_string_allocs.emplace_back(nsize, frame_names(frames, n));
  }
  return realloc(ptr, nsize);
}

}  // namespace

TEST_CASE("lua: inside the allocator, each string is charged to its caller's line", "[lua]") {
  g_string_allocs.clear();
  {
    LuaHost host({}, walking_alloc, nullptr);
    REQUIRE(host.module_enabled());
    g_string_allocs.clear();  // whatever loading the module made
    REQUIRE(host.run(R"(local function make(n)
  return string.rep("x", n)
end
local keep = {}
for i = 101, 150 do
  keep[#keep + 1] = make(i)
end
)") == "");
  }
  REQUIRE(g_string_allocs.size() == 50);
  for (size_t i = 0; i < g_string_allocs.size(); i++) {
    INFO("allocation " << i);
    CHECK(g_string_allocs[i].first == 24 + 101 + i + 1);
    CHECK(g_string_allocs[i].second == Names{"string.rep", "t:1:2", "t:0:6"});
  }
}

namespace {

// SIGPROF samples, taken in the handler into fixed storage.
constexpr int kMaxSamples = 4096;
constexpr int kSampleFrames = 12;
struct Sample {
  int n;
  int vmstate;
  prof_guest_frame frames[kSampleFrames];
};
Sample g_samples[kMaxSamples];
volatile sig_atomic_t g_nsamples = 0;

void on_sigprof(int) {
  if (g_nsamples >= kMaxSamples) return;
  Sample &s = g_samples[g_nsamples];
  s.n = registered_backtracer()(nullptr, s.frames, kSampleFrames, &s.vmstate);
  g_nsamples = g_nsamples + 1;
}

int samples(lua_State *L) {
  lua_pushinteger(L, g_nsamples);
  return 1;
}

// A busy Lua function, lines 1-7 of the sampled chunks.
const char kSpin[] = R"(local function spin(n)
  local s = 0
  for i = 1, n do
    s = s + i % 7
  end
  return s
end
)";

// Runs kSpin + rest under a 1 ms ITIMER_PROF; returns each sample's frame names.
std::vector<Names> sample_run(const char *rest, std::vector<int> *vmstates) {
  g_nsamples = 0;
  LuaHost host({{"samples", samples}});
  REQUIRE(host.module_enabled());
  SigprofHandler handler(on_sigprof);
  REQUIRE(handler.installed());
  itimerval every_ms{{0, 1000}, {0, 1000}}, off{};
  REQUIRE(setitimer(ITIMER_PROF, &every_ms, nullptr) == 0);
  const std::string err = host.run(std::string(kSpin) + rest);
  setitimer(ITIMER_PROF, &off, nullptr);
  REQUIRE(err == "");
  std::vector<Names> out;
  for (int i = 0; i < g_nsamples; i++) {
    out.push_back(frame_names(g_samples[i].frames, g_samples[i].n));
    vmstates->push_back(g_samples[i].vmstate);
  }
  return out;
}

bool is_spin_frame(const std::string &name) {
  // spin is defined at line 1 and ends at line 7 (the first line: just entered).
  if (name.rfind("t:1:", 0) != 0) return false;
  const int line = std::stoi(name.substr(4));
  return line >= 1 && line <= 7;
}

}  // namespace

TEST_CASE("lua: SIGPROF samples show the running Lua line and its callers", "[lua]") {
  std::vector<int> vmstates;
  const auto got = sample_run(R"(local total = 0
while samples() < 200 do
  total = total + spin(20000)
end
)", &vmstates);
  REQUIRE(got.size() >= 200);
  int in_spin = 0;
  for (size_t i = 0; i < got.size(); i++) {
    const Names &s = got[i];
    INFO("sample " << i << ": " << Catch::Detail::stringify(s) << " vmstate " << vmstates[i]);
    // By construction: in spin, in samples(), or the main chunk between them
    // (a call or return under way).
    if (s.size() == 2 && is_spin_frame(s[0]) && s[1] == "t:0:10") {
      in_spin++;
      CHECK(vmstates[i] == PROF_VMST_LFUNC);
    } else if (s.size() == 2 && s[0] == "samples" && s[1] == "t:0:9") {
      CHECK(vmstates[i] == PROF_VMST_CFUNC);
    } else {
      CHECK((s == Names{"t:0:9"} || s == Names{"t:0:10"}));
      CHECK(vmstates[i] == PROF_VMST_LFUNC);
    }
  }
  CHECK(in_spin > 0);
}

TEST_CASE("lua: SIGPROF samples inside a coroutine include its resumer", "[lua]") {
  std::vector<int> vmstates;
  const auto got = sample_run(R"(local total = 0
local run = coroutine.wrap(function()
  while samples() < 200 do
    total = total + spin(20000)
  end
end)
run()
)", &vmstates);
  REQUIRE(got.size() >= 200);
  const Names resumer{"coroutine.wrap()", "t:0:14"};
  int in_spin = 0;
  for (size_t i = 0; i < got.size(); i++) {
    const Names &s = got[i];
    INFO("sample " << i << ": " << Catch::Detail::stringify(s));
    // By construction: the coroutine's frames, then its resumer's; between
    // resumes (entering or leaving run()) only the main chunk.
    if (s.back() == "t:0:14" && s.size() <= 2) {
      CHECK((s.size() == 1 || s[0] == "coroutine.wrap()"));
      continue;
    }
    REQUIRE(s.size() >= 3);
    CHECK(Names(s.end() - 2, s.end()) == resumer);
    const Names co(s.begin(), s.end() - 2);
    if (co.size() == 2 && is_spin_frame(co[0]) && co[1] == "t:9:11")
      in_spin++;
    else
      CHECK((co == Names{"samples", "t:9:10"} || co == Names{"t:9:10"} ||
             co == Names{"t:9:11"} || co == Names{"t:9:9"}));
  }
  CHECK(in_spin > 0);
}
