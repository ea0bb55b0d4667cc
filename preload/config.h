// Config: the agent's settings, read once from the environment at start.
//
// Invariants: parse_config() neither allocates nor touches stdio, so it can run
// in the constructor before anything else is safe; a bad value is reported in
// `error` (one line, naming the variable) and the agent then stays off.
#pragma once

#include <cstdint>

namespace prof {

enum class CpuMode : uint8_t { Off, Default, Leaf, Callgraph };
enum class CpuBackend : uint8_t { Auto, Perf, Timer, Itimer };

struct Config {
  bool memory = true;            // PROF_MEMORY=0|1: record allocations
  CpuMode cpu = CpuMode::Off;    // PROF_CPU=off|default|leaf|callgraph (0: off, 1: callgraph)
  uint64_t interval_ns = 1000000;  // PROF_INTERVAL=<n>[ns|us|ms|s], default 1ms
  int cpu_signal = 0;            // PROF_CPU_SIGNAL=<n>, 0 = SIGPROF
  CpuBackend cpu_backend = CpuBackend::Auto;  // PROF_CPU_BACKEND=auto|perf|timer|itimer
  unsigned max_depth = 128;      // PROF_DEPTH=1..1024 host frames per stack
  uint64_t sample_bytes = 0;     // PROF_SAMPLE_BYTES=<n>[k|m], 0 = every event
  bool mmap = true;              // PROF_MMAP=0|1: record anonymous mmap
  bool free_stacks = false;      // PROF_FREE_STACKS=0|1: unwind on free too
  bool rule_walk = true;         // PROF_UNWIND=fast|libunwind (host_stack.h)
  int toggle_signal = 0;         // PROF_TOGGLE_SIGNAL=<n>, 0 = none
  bool follow_children = true;   // PROF_FOLLOW=0|1: profile forked children
  bool compress = true;          // PROF_COMPRESS=0|1: zstd-compress the streams
  bool lua = true;               // PROF_LUA=0|1: load the Lua adapter into states a shared VM makes
  int32_t root_pid = 0;          // PROF_FOLLOW=0:<pid>, by the agent: the one pid profiled
  char output[512] = "prof.%p";  // PROF_OUTPUT: path template, %p = pid
  char error[160] = "";          // set when a value is invalid
};

// Parses the PROF_* variables from envp (the process environment).
// Returns false, with cfg->error set, on an invalid value.
bool parse_config(char **envp, Config *cfg);

}  // namespace prof
