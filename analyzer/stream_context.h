// StreamContext: one opened stream with what its records build up while it is
// read: guest symbols, the stack table, the module map (symbolizer), the
// writer's process, sampling mean and stats; and the names of its stacks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memprof.h"
#include "profile_file.h"
#include "stack_merge.h"
#include "stack_table.h"
#include "symbolizer.h"
#include "sysprof.h"

namespace prof {

struct StreamContext {
  explicit StreamContext(const std::string &path, uint32_t index)
      : file(path), index(index) {}

  ProfileFile file;
  uint32_t index;
  StackTable stacks;
  Symbolizer symbolizer;
  uint64_t pid = 0;
  std::string exe;
  uint64_t sampling_mean = 0;
  std::vector<std::pair<std::string, uint64_t>> stats;
  std::vector<std::pair<uint64_t, std::string>> markers;
  ReadEnd end;

  // Reads every memprof record; symbols, stack nodes, modules, process,
  // stats, markers and sampling are absorbed here, everything else goes to fn.
  void read_memprof(const std::function<void(const MemprofEvent &)> &fn);
  // Same for sysprof.
  void read_sysprof(const std::function<void(const SysprofSample &)> &fn);

  // Names of a stack, root first, guest frames merged (stack_merge.h).
  // `short_names` keeps function names only (for flame graphs).
  std::vector<std::string> stack_names(uint64_t host, uint64_t guest, bool short_names);
  // Same for a sample's inline stacks (innermost first). For genuine LuaJIT
  // streams host frames resolve through the symtab's C symbols.
  std::vector<std::string> sample_names(const SysprofSample &s, bool short_names);
  // The innermost host frame's name (native sites of the memprof report).
  std::string top_frame_name(uint64_t host);
  // Interns an event's guest location name (1-based) for streams without stacks.
  uint32_t site_of(const GuestLoc &loc);
  const std::string &site_name(uint32_t site) const { return sites_[site - 1]; }

 private:
  bool absorb(const ExtRecord &r);
  void host_names(uint64_t ip, uint32_t epoch, bool return_address, bool short_names,
                  std::vector<NamedFrame> &out);
  std::vector<StackFrame> frames_;
  std::vector<std::string> sites_;
  std::unordered_map<std::string, uint32_t> site_ids_;
};

}  // namespace prof
