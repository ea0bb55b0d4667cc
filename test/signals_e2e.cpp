// End-to-end tests of the agent beside the program's own signals: handlers
// that allocate, free or siglongjmp while the thread is inside the agent
// (test/e2e/sig_*.c), the signal settings, and what CPU sampling does to
// the program's sleeps (test/e2e/cpu_sleepers.c).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <sstream>
#include <string>

#include "agent_run.h"
#include "lua_streams.h"

namespace {

std::string program(const char *name) { return std::string(PROF_E2E_BIN_DIR) + "/" + name; }

uint64_t count(const std::map<uint64_t, uint64_t> &m, uint64_t key) {
  auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

// The number after `key` in the program's output (-1 when absent).
long printed(const std::string &out, const std::string &key) {
  std::istringstream in(out);
  std::string word;
  long value;
  while (in >> word >> value)
    if (word == key) return value;
  return -1;
}

// `prof-analyze summary FILE`, its text.
std::string summary(const std::string &file) {
  std::string text;
  FILE *f = popen((std::string(PROF_ANALYZER_PATH) + " summary " + file + " 2>&1").c_str(), "r");
  REQUIRE(f);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  pclose(f);
  return text;
}

Recorded only_file(const RunResult &r) {
  REQUIRE(r.memprof_files.size() == 1);
  return read_memprof(r.memprof_files[0]);
}

}  // namespace

TEST_CASE("signals: a handler freeing blocks while its thread is inside the agent has every free "
          "recorded") {
  const int n = 1000;
  const RunResult r = run_under_agent({program("sig_frees"), std::to_string(n)});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);  // the handler ran once per 777 B allocation
  const Recorded rec = only_file(r);
  CHECK_FALSE(rec.truncated);
  CHECK(count(rec.allocs_by_size, 1234) == n);
  CHECK(count(rec.frees_by_size, 1234) == n);
  CHECK(count(rec.leaks_by_size, 1234) == 0);
  CHECK(count(rec.allocs_by_size, 777) == n);
  CHECK(count(rec.frees_by_size, 777) == n);
  CHECK(rec.unknown_frees == 0);
  // Every signal came while the thread was in the agent, and waited.
  CHECK(stat_counter(rec, "signals_deferred") == n);
  CHECK(stat_counter(rec, "signal_handlers_in_agent") == 0);
  // Nothing missed: the analyzer vouches for the leak figures.
  const std::string text = summary(r.memprof_files[0]);
  CHECK(text.find("leaked:        0B in 0 blocks") != std::string::npos);
  CHECK(text.find("uncertain") == std::string::npos);
}

namespace {
// sig_longjmp: the known blocks (and the second thread's) all recorded, in
// bounded time; returns the stream, how many jumps the program made and
// the analyzer's summary.
Recorded check_known_blocks_after_jumps(const char *how, bool thread, long *jumps,
                                        std::string *text) {
  const int n = 5000;
  std::vector<std::string> argv{program("sig_longjmp"), how, std::to_string(n)};
  if (thread) argv.push_back("thread");
  const RunResult r = run_under_agent(argv);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);  // not the watchdog's 99: no wait hung
  *jumps = printed(r.out, "jumps");
  CHECK(*jumps >= 20);
  const Recorded rec = only_file(r);
  CHECK_FALSE(rec.truncated);
  CHECK(count(rec.allocs_by_size, 555) == n);
  CHECK(count(rec.frees_by_size, 555) == n);
  if (thread) {
    CHECK(count(rec.allocs_by_size, 666) == 200000);
    CHECK(count(rec.frees_by_size, 666) == 200000);
  }
  CHECK(rec.unknown_frees == 0);
  *text = summary(r.memprof_files[0]);
  return rec;
}
}  // namespace

TEST_CASE("signals: a handler that siglongjmps out of the allocation hooks leaves recording "
          "whole") {
  for (bool thread : {false, true}) {
    INFO("thread " << thread);
    long jumps;
    std::string text;
    const Recorded rec = check_known_blocks_after_jumps("sigaction", thread, &jumps, &text);
    // The handler never ran inside the agent: nothing was left half-done.
    CHECK(stat_counter(rec, "signals_deferred") >= 20);
    CHECK(stat_counter(rec, "guards_abandoned") == 0);
    CHECK(stat_counter(rec, "ring_records_abandoned") == 0);
    CHECK(text.find("uncertain") == std::string::npos);
  }
}

TEST_CASE("signals: a handler the agent never saw (raw rt_sigaction) that siglongjmps out of it: "
          "the guard it left is found and recording goes on") {
  for (bool thread : {false, true}) {
    INFO("thread " << thread);
    long jumps;
    std::string text;
    const Recorded rec = check_known_blocks_after_jumps("raw", thread, &jumps, &text);
    CHECK(stat_counter(rec, "guards_abandoned") == jumps);  // each found by the next allocation
    CHECK(stat_counter(rec, "signals_deferred") == 0);
    // Events were missed (the 333 B block of each jump): the analyzer says so.
    CHECK(text.find("uncertain:     leaks and frees, the agent having missed events "
                    "(guards_abandoned " + std::to_string(jumps) + ")") != std::string::npos);
  }
}

TEST_CASE("signals: jumps out of the agent from the first allocation on leave the profile whole") {
  // Some land while the first allocation opens the profile.
  for (int run = 0; run < 3; run++) {
    const RunResult r = run_under_agent({program("sig_first_jump")});
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "jumps 3\n");
    CHECK(r.err.empty());
    const Recorded rec = only_file(r);
    CHECK_FALSE(rec.truncated);
    CHECK(count(rec.allocs_by_size, 555) == 10);
    CHECK(stat_counter(rec, "events_while_opening") == 0);
  }
}

TEST_CASE("signals: a vfork child that resets a handler leaves its parent's in place") {
  // The child shares the parent's memory, the trampoline's table of
  // handlers with it (gdb hung on its inferior's first stop: its SIGCHLD
  // handler no longer ran). With the agent recording and switched off.
  for (const char *setting : {"PROF_MEMORY=1", "PROF_BOGUS=1"}) {
    INFO(setting);
    const RunResult r = run_under_agent({program("sig_vfork")}, {setting});
    CHECK(r.signal == 0);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("signals: a signal no handler can catch is refused as a toggle or sampling signal") {
  for (const char *setting : {"PROF_TOGGLE_SIGNAL", "PROF_CPU_SIGNAL"}) {
    for (const char *sig : {"9", "19", "32", "33"}) {
      INFO(setting << "=" << sig);
      const RunResult r = run_under_agent({program("cpu_sleepers"), "10", "100"},
                                          {std::string(setting) + "=" + sig, "PROF_CPU=default"});
      CHECK(r.exit_code == 0);
      CHECK(printed(r.out, "poll_eintr") == 0);  // the program ran unharmed
      CHECK(r.err == "libprof: invalid " + std::string(setting) + "='" + sig +
                         "' (expected a signal a handler can catch: 1..64 but 9, 19, 32, 33); "
                         "profiling disabled\n");
      CHECK(r.memprof_files.empty());
      CHECK(r.sysprof_files.empty());
    }
  }
  // Catchable ones are taken.
  const RunResult r = run_under_agent({program("cpu_sleepers"), "10", "100"},
                                      {"PROF_TOGGLE_SIGNAL=34", "PROF_CPU_SIGNAL=10", "PROF_CPU=default"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.memprof_files.size() == 1);
  CHECK(r.sysprof_files.size() == 1);
}

TEST_CASE("signals: the sampling signal, as the program sees it, is what it found or set") {
  const std::vector<std::string> sampling = {"PROF_CPU=callgraph", "PROF_MEMORY=0"};
  SECTION("a save-all, restore-all of the handlers keeps sampling") {
    const RunResult r = run_under_agent({program("sig_view"), "restore"}, sampling);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "found DFL\nrestored\n");
    CHECK(r.err.empty());
    REQUIRE(r.sysprof_files.size() == 1);
    CHECK(read_guest_sysprof(r.sysprof_files[0]).samples.size() > 100);  // of 300 ms
  }
  SECTION("a thread blocking every signal is not handed the clock's") {
    const RunResult r = run_under_agent({program("sig_view"), "wait"}, sampling);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "found DFL\npending 0\nwaited -1 " + std::to_string(EAGAIN) + "\n");
    CHECK(r.err.empty());
  }
  SECTION("an ignored signal stays ignored, through exec, with the agent or without") {
    for (const char *follow : {"PROF_FOLLOW=1", "PROF_FOLLOW=0"}) {
      INFO(follow);
      std::vector<std::string> env = sampling;
      env.push_back(follow);
      const RunResult r = run_under_agent(
          {"sh", "-c", "trap '' PROF; exec \"$0\" exec", program("sig_view")}, env);
      CHECK(r.exit_code == 0);
      CHECK(r.out == "found IGN\nfound IGN\nchild exit 0\n");
      CHECK(r.err.empty());
    }
  }
  SECTION("an ignored toggle signal is refused in one line") {
    const RunResult r = run_under_agent(
        {"sh", "-c", "trap '' HUP; trap '' PROF; exec \"$0\" found", program("sig_view")},
        {"PROF_TOGGLE_SIGNAL=1"});
    CHECK(r.exit_code == 0);
    CHECK(r.out == "found IGN\n");
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("PROF_TOGGLE_SIGNAL 1 is ignored") != std::string::npos);
  }
}

TEST_CASE("signals: a handler on an 8 KiB alternate stack allocates and is sampled, unharmed") {
  for (const char *cpu : {"PROF_CPU=0", "PROF_CPU=callgraph"}) {
    INFO(cpu);
    const RunResult r = run_under_agent({program("sig_altstack")}, {cpu});
    CHECK(r.signal == 0);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "handled 3\n");
    CHECK(r.err.empty());
    REQUIRE(r.memprof_files.size() == 1);
    const Recorded rec = read_memprof(r.memprof_files[0]);
    CHECK(count(rec.allocs_by_size, 4444) == 3000);
    CHECK(count(rec.frees_by_size, 4444) == 3000);
  }
}

TEST_CASE("signals: CPU sampling does not cut the program's sleeps short (EINTR)") {
  // 1500 polls of 1 ms and 1500 sleeps of 100 us, each after ~300 us of
  // user-mode CPU. A sampling signal makes them fail with EINTR only when
  // it is raised while the thread runs kernel code on its way to sleep:
  // the perf clock signals only in user mode, and the tick-driven clocks
  // land there in well under 0.1% of the calls. A bound of 0.3% (4 of 1500)
  // leaves room for noise; a clock that signals in kernel mode fails many
  // times more of the polls, the more so at short intervals.
  const long calls = 1500, bound = 4;
  for (const char *backend : {"perf", "timer", "itimer"}) {
    for (const char *interval : {"1ms", "100us"}) {
      const RunResult r = run_under_agent(
          {program("cpu_sleepers"), std::to_string(calls), "300"},
          {"PROF_MEMORY=0", "PROF_CPU=default", std::string("PROF_CPU_BACKEND=") + backend,
           std::string("PROF_INTERVAL=") + interval});
      REQUIRE(r.exit_code == 0);
      CHECK(r.err.empty());
      REQUIRE(r.sysprof_files.size() == 1);
      const GuestProfile p = read_guest_sysprof(r.sysprof_files[0]);
      const long polls = printed(r.out, "poll_eintr"), sleeps = printed(r.out, "nanosleep_eintr");
      std::printf("EINTR with %s at %s: poll %ld of %ld (%.2f%%), nanosleep %ld of %ld (%.2f%%); "
                  "%zu signals\n",
                  backend, interval, polls, calls, 100.0 * double(polls) / double(calls), sleeps,
                  calls, 100.0 * double(sleeps) / double(calls), p.samples.size());
      INFO(backend << " at " << interval);
      CHECK(p.samples.size() >= 100);  // the clock did signal, often
      CHECK(polls <= bound);
      CHECK(sleeps <= bound);
    }
  }
}
