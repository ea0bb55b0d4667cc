// Hostile input: thousands of randomly corrupted and cut streams go through
// every subcommand in-process, under a hard address-space limit. Each must end
// in exit code 0 or 2, never a crash, a hang or a memory blow-up.
#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "fixture_path.h"

namespace {

std::vector<uint8_t> slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// Runs every subcommand on mutations of `seed`; returns the number of runs.
int fuzz(const std::vector<uint8_t> &seed, int iterations, uint64_t rng_seed) {
  std::mt19937_64 rng(rng_seed);
  char path[] = "/tmp/libprof-fuzz-XXXXXX";
  const int fd = mkstemp(path);
  close(fd);
  int runs = 0;
  for (int i = 0; i < iterations; i++) {
    std::vector<uint8_t> b = seed;
    const int flips = 1 + int(rng() % 8);
    for (int k = 0; k < flips; k++) {
      // Half the damage lands in the events, past the leading symbol table.
      const size_t at = rng() % 2 ? rng() % b.size() : b.size() / 2 + rng() % (b.size() / 2);
      switch (rng() % 3) {
        case 0: b[at] = uint8_t(rng()); break;           // any byte
        case 1: b[at] = 0xff; break;                      // long ULEB128 runs
        case 2: b.resize(at ? at : 1); break;             // a cut
      }
    }
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(b.data()),
                                                std::streamsize(b.size()));
    prof::CommandOptions opt;
    opt.files = {path};
    std::ostringstream sink;
    std::streambuf *saved = std::cerr.rdbuf(sink.rdbuf());
    for (int cmd = 0; cmd < 3; cmd++) {
      int rc = cmd == 0 ? prof::run_report(opt, sink)
                        : cmd == 1 ? prof::run_summary(opt, sink) : prof::run_folded(opt, sink);
      if (rc != 0 && rc != 2) {
        std::cerr.rdbuf(saved);
        return -1;
      }
      runs++;
    }
    std::cerr.rdbuf(saved);
  }
  unlink(path);
  return runs;
}

}  // namespace

TEST_CASE("randomly corrupted streams never crash or exhaust memory") {
  const std::vector<std::string> seeds = {fixture("m3_cfuncs_leaks.memprof.bin"),
                                          fixture("s_lua_C.sysprof.bin")};
  for (size_t s = 0; s < seeds.size(); s++) {
    const std::vector<uint8_t> seed = slurp(seeds[s]);
    const pid_t pid = fork();
    if (pid == 0) {
      // XXX: a limit the analyzer must never need; bad_alloc would surface
      // as exit code 2 and is caught by the peak-RSS check below.
      rlimit lim{uint64_t(1) << 31, uint64_t(1) << 31};
      setrlimit(RLIMIT_AS, &lim);
      const int runs = fuzz(seed, 1000, 1000 + s);
      rusage ru;
      getrusage(RUSAGE_SELF, &ru);
      _exit(runs == 3000 && ru.ru_maxrss < 512 * 1024 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    INFO(seeds[s]);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}
