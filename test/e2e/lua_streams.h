// Guest stacks as libprof streams record them, for the Lua and CPU sampler
// end-to-end tests: symbols (initial symtab and in-stream), the guest stack
// tree, and each allocation event or CPU sample (with its weight and thread)
// with its guest stack named; the stream's process, sampler and stats.
//
// Names follow lua_host.h: "chunk:linedefined:line" with the chunk's
// directory and '@' dropped, C functions by their published name, "?" when
// the stream named nothing at that address.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "memprof.h"
#include "sysprof.h"

using GuestNames = std::vector<std::string>;

struct GuestAlloc {
  prof::MemprofRecord record;  // Alloc or Realloc
  uint64_t oaddr, nsize;
  prof::GuestLoc loc;
  const GuestNames *stack;  // innermost first; owned by GuestProfile
};

struct GuestSample {
  uint8_t vmstate;
  uint64_t weight;  // intervals the sample stands for (weight records)
  uint64_t tid;     // the thread it was taken on (thread records)
  GuestNames stack;                 // innermost first
  std::vector<uint64_t> host;       // innermost first (callgraph mode)
  std::vector<prof::GuestFrame> frames;
};

struct GuestProfile {
  std::vector<GuestAlloc> allocs;
  std::vector<GuestSample> samples;
  std::vector<prof::ext::ModuleLoad> modules;
  std::map<std::string, uint64_t> stats;
  uint64_t pid = 0, ppid = 0;
  prof::ext::Sampler sampler;  // sysprof
  bool truncated = false;
  // Stacks with a frame the stream never named, other than the outermost
  // (lua.c's own pmain, which no Lua table holds), or a Lua frame whose line
  // lies before its function's first line; the first one, for messages.
  uint64_t odd_stacks = 0;
  std::string first_odd_stack;

  struct Lfunc {
    std::string chunk;
    uint64_t line;
  };
  std::map<uint64_t, Lfunc> lfuncs;
  std::map<uint64_t, std::string> cfuncs;
  std::map<uint64_t, prof::ext::StackGuest> guest_nodes;
  std::deque<GuestNames> stack_names;  // what GuestAlloc::stack points to

  std::string name_of(uint8_t type, uint64_t addr, uint64_t line) const;
  GuestNames names(const std::vector<prof::GuestFrame> &frames);
};

GuestProfile read_guest_memprof(const std::string &path);
GuestProfile read_guest_sysprof(const std::string &path);
