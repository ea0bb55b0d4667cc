// Running a program under libprof.so and reading back what it recorded, for
// the end-to-end tests. Decoding uses the format readers only (not the
// analyzer), pairing frees with the oldest live block at their address.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ext.h"
#include "memprof.h"
#include "temp_files.h"

struct RunResult {
  int exit_code = -1;    // -1 when killed by a signal
  int signal = 0;
  std::string out, err;  // the program's stdout and stderr
  TempDir dir;           // where PROF_OUTPUT pointed
  std::vector<std::string> memprof_files, sysprof_files;  // sorted by name
  // Ring files (format/ring_file.h) left beside them: a stream not ended.
  std::vector<std::string> ring_files;
};

// Runs argv with LD_PRELOAD=libprof.so, PROF_OUTPUT=<fresh dir>/prof.%p and
// `env` ("NAME=value") added; waits for it, and for what outlives it (the
// agent's writer ending the stream of a process that died: this process is
// their subreaper).
RunResult run_under_agent(const std::vector<std::string> &argv,
                          const std::vector<std::string> &env = {});
// The same with another build of the agent (libprof-cpu.so).
RunResult run_under(const std::string &agent, const std::vector<std::string> &argv,
                    const std::vector<std::string> &env = {});
// The same without the agent.
RunResult run_bare(const std::vector<std::string> &argv);

struct Recorded {
  bool truncated = false;     // the stream ended before its epilogue
  bool unclean_end = false;   // the process died; the agent's writer ended it
  uint64_t lost_bytes = 0;    // (unclean-end) what dying threads were writing
  uint64_t pid = 0, ppid = 0;
  std::map<uint64_t, uint64_t> allocs_by_size;  // alloc + realloc results
  std::map<uint64_t, uint64_t> frees_by_size;   // frees/reallocs, sized by their block
  std::map<uint64_t, uint64_t> leaks_by_size;
  uint64_t unknown_frees = 0;
  uint64_t events = 0;
  std::vector<prof::ext::ModuleLoad> modules;
  std::vector<prof::ext::ModuleUnload> unloads;
  std::vector<prof::ext::Stats> stats;
  std::vector<prof::ext::HeapTotal> heap_totals;  // the writer's heap count, in stream order
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> nodes;  // id -> (parent, ip)
  std::map<uint64_t, std::vector<uint64_t>> stacks_by_size;  // host stack ids per alloc size
  std::map<uint64_t, std::vector<prof::GuestLoc>> locs_by_size;     // guest locations per alloc size
  std::map<uint64_t, std::vector<uint64_t>> guest_stacks_by_size;  // guest stack ids per alloc size
  std::map<uint64_t, prof::ext::StackGuest> guest_nodes;           // by id
  std::map<uint64_t, std::string> symbols;                          // in-stream symbols: addr -> name
  // The host frames (innermost first) of a stack id.
  std::vector<uint64_t> frames(uint64_t id) const;
};

Recorded read_memprof(const std::string &path);

// The value at `key` (a size), 0 if absent.
uint64_t count_at(const std::map<uint64_t, uint64_t> &by_size, uint64_t key);

// The one memprof stream of a run; throws unless there is exactly one.
Recorded read_only_memprof(const RunResult &r);
// A counter of the stream's stats record (-1 when absent).
int64_t stat_counter(const Recorded &rec, const std::string &name);

// The memprof streams of a run that forked once, told apart by their ppid;
// throws unless there are exactly two.
struct ForkedRun {
  Recorded parent, child;
};
ForkedRun read_forked(const RunResult &r);

// A fresh directory that any user can enter and write, holding a copy of
// the agent as `libprof.so`, for programs run as another user (the
// checkout's directories may be closed to them). Skips the test (exit 4)
// unless it runs as root, who alone can switch users.
TempDir agent_dir_for_other_users(const std::string &kind);

// The memory profiles in dir, sorted by name.
std::vector<std::string> memprof_files_in(const std::string &dir);
// A stream's file name (with kind ".memprof" or ".sysprof"), not its ring file's.
bool is_stream_name(const char *name, const char *kind);

// A whole text file ("" if it cannot be read).
std::string read_text(const std::string &path);
