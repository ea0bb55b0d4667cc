// End-to-end tests of the agent's life in the program it profiles: the
// descriptors it holds (never the program's), how each process's streams
// end (exit from several threads, exit_group, a kill), and forked children
// (test/e2e/mem_*.c and cpu_*.c, counts known by construction).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "agent_run.h"

namespace {

std::string program(const char *name) { return std::string(PROF_E2E_BIN_DIR) + "/" + name; }

size_t lines(const std::string &s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("after a failed start, forked children leave the program's descriptors alone") {
  // Each process's stream fails at once; the descriptor the agent closed
  // then is the pipe's, in the program, and the child must still read it.
  const RunResult r = run_under_agent({program("mem_full_disk")}, {"PROF_OUTPUT=/dev/full"});
  CHECK(r.out == "child read: from parent\n");
  CHECK(r.exit_code == 3);
  CHECK(lines(r.err) == 1);  // the parent's; the child of a switched-off agent stays off
  CHECK(r.err.rfind("libprof: cannot write /dev/full: No space left on device", 0) == 0);
}
