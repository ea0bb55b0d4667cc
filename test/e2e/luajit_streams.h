// A LuaJIT run's memory stream as the LuaJIT end-to-end tests read it: each
// allocator call of the VM (told from the C allocator's by its address, in
// a region the VM mapped), its memprof site named; and its CPU samples,
// their guest stacks named.
#pragma once

#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "memprof.h"
#include "sysprof.h"

struct VmEvent {
  prof::MemprofRecord record;  // Alloc, Realloc or Free
  uint64_t oaddr, osize, naddr, nsize;
  std::string site;  // "chunk:line", "TRACE@chunk:line", "INTERNAL", a C name or "?"
  std::vector<std::string> stack;  // guest frames, innermost first: "chunk:line" or a name
};

struct VmStream {
  std::vector<VmEvent> events;
  uint64_t traces = 0;  // trace symbols
  bool truncated = false;
  // Events with site s and, for allocations, nsize.
  uint64_t count(prof::MemprofRecord record, const std::string &site, uint64_t nsize) const;
};

// parent_path: for a fork child's stream, its parent's, whose VM regions the
// child inherited.
VmStream read_vm_stream(const std::string &path, const std::string &parent_path = "");

struct CpuSample {
  uint8_t vmstate;
  // guest frames as VmEvent's; a TRACE sample: "TRACE@chunk:line", then its callers
  std::vector<std::string> stack;
  size_t host_frames;
  uint64_t traceno;  // a TRACE sample's trace number (0: not known)
};

struct CpuStream {
  std::vector<CpuSample> samples;
  bool truncated = false;
  // Samples whose innermost guest frame is `frame`.
  uint64_t at(const std::string &frame) const;
  // Samples in VM state vmstate.
  uint64_t in_state(uint8_t vmstate) const;
};

CpuStream read_cpu_stream(const std::string &path);

// Among the folded stacks (prof-analyze folded: root first, ';'-separated,
// a space, the count) that run `callee` and whose host part reaches `root`,
// the samples in all of them and in those where a frame matching `middle`
// lies between the first matching `caller` and the callee's: native code
// (qsort) that a Lua caller called and that called back into Lua.
struct Placement {
  uint64_t whole = 0, placed = 0;
};
Placement placement(const std::string &folded, const std::regex &callee,
                    const std::regex &caller, const std::regex &middle, const std::regex &root);
