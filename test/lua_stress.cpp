// Stress for the Lua 5.4 adapter in a host standing in for the agent: the
// backtracer runs inside every allocation (as the memory agent's hook does)
// and from a 1 kHz SIGPROF timer (as the CPU sampler does) while
// e2e/lua_stress.lua churns binary trees, coroutines, errors, tail calls and
// fresh chunks. Nothing may crash, and every frame must be one the module
// named, at a line inside its function.
//
// PROF_LUA_STRESS_SECONDS sets the CPU seconds of Lua work (default 20).
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>

#include "lua_host.h"

namespace {

int g_chunk_lines = 0;

// Allocation-side walks: every allocation walks; every 16th is checked.
uint64_t g_alloc_walks = 0, g_alloc_bad = 0;
std::string g_alloc_first_bad;

void *walking_alloc(void *, void *ptr, size_t, size_t nsize) {
  if (prof_guest_backtracer bt = registered_backtracer()) {
    prof_guest_frame frames[64];
    int vmstate;
    const int n = bt(nullptr, frames, 64, &vmstate);
    if (g_alloc_walks++ % 16 == 0)
      for (int i = 0; i < n; i++)
        if (!frame_plausible(frames[i], g_chunk_lines)) {
          if (g_alloc_bad++ == 0)
            g_alloc_first_bad = Catch::Detail::stringify(frame_names(frames, n));
          break;
        }
  }
  if (nsize == 0) {
    free(ptr);
    return nullptr;
  }
  return realloc(ptr, nsize);
}

constexpr int kKeptSamples = 16384;
constexpr int kSampleFrames = 48;
struct Sample {
  int n;
  prof_guest_frame frames[kSampleFrames];
};
Sample g_samples[kKeptSamples];
volatile sig_atomic_t g_nsamples = 0;

void on_sigprof(int) {
  prof_guest_backtracer bt = registered_backtracer();
  int vmstate;
  if (g_nsamples < kKeptSamples) {
    Sample &s = g_samples[g_nsamples];
    s.n = bt(nullptr, s.frames, kSampleFrames, &vmstate);
  } else {
    prof_guest_frame frames[kSampleFrames];
    bt(nullptr, frames, kSampleFrames, &vmstate);
  }
  g_nsamples = g_nsamples + 1;
}

int count_lines(const std::string &path) {
  std::ifstream f(path);
  std::string line;
  int n = 0;
  while (std::getline(f, line)) n++;
  return n;
}

}  // namespace

TEST_CASE("lua: 1 kHz samples and walks in every allocation over churn", "[lua][stress]") {
  const std::string script = PROF_LUA_TEST_DIR "/lua_stress.lua";
  g_chunk_lines = count_lines(script);
  REQUIRE(g_chunk_lines > 0);
  const char *env = getenv("PROF_LUA_STRESS_SECONDS");
  const std::string seconds = env && *env ? env : "20";

  LuaHost host({}, walking_alloc, nullptr);
  REQUIRE(host.module_enabled());
  lua_newtable(host.L());
  lua_pushstring(host.L(), seconds.c_str());
  lua_rawseti(host.L(), -2, 1);
  lua_setglobal(host.L(), "arg");

  SigprofHandler handler(on_sigprof);
  REQUIRE(handler.installed());
  // XXX: a monotonic-clock timer, not ITIMER_PROF: CPU-time timers fire only
  // on scheduler ticks (CONFIG_HZ); this one reaches 1 kHz.
  sigevent sev{};
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGPROF;
  timer_t timer;
  REQUIRE(timer_create(CLOCK_MONOTONIC, &sev, &timer) == 0);
  const itimerspec every_ms{{0, 1000000}, {0, 1000000}};
  REQUIRE(timer_settime(timer, 0, &every_ms, nullptr) == 0);

  std::ifstream f(script);
  const std::string source((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string err = host.run(source, "lua_stress.lua");

  timer_delete(timer);
  REQUIRE(err == "");
  INFO("first implausible allocation stack: " << g_alloc_first_bad);
  CHECK(g_alloc_walks > 0);
  CHECK(g_alloc_bad == 0);

  const int kept = g_nsamples < kKeptSamples ? int(g_nsamples) : kKeptSamples;
  CHECK(kept > 0);
  // A signal can land while a call or return half-writes the innermost
  // frame (docs/lua.md: "skips at most the frames in flux"): every frame kept
  // must be right, the innermost one too.
  int bad = 0;
  for (int i = 0; i < kept; i++)
    for (int k = 0; k < g_samples[i].n; k++)
      if (!frame_plausible(g_samples[i].frames[k], g_chunk_lines)) {
        if (bad++ == 0)
          FAIL_CHECK("implausible sample " << i << ": "
                     << Catch::Detail::stringify(frame_names(g_samples[i].frames, g_samples[i].n)));
        break;
      }
  CHECK(bad == 0);
  WARN("stress: " << g_nsamples << " samples, " << g_alloc_walks << " allocation walks");
}
