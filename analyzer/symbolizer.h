// Symbolizer: host addresses of a libprof stream to names, offline.
//
// Order of preference for a frame: DWARF (function, file:line and the chain of
// inlined calls, via libdw) > ELF .symtab/.dynsym (via libdw) > JIT code from
// /tmp/perf-<pid>.map > "module+0xoffset" > "0xaddr".
// Invariants: an address is resolved against the modules loaded when its
// stack node was written (epochs), so code of a dlclose'd object keeps its
// name; results are cached per (module, address), so memory grows with
// unique frames only; each module with a build-id other than the stream's,
// or that cannot be read, yields one warning line on stderr.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ext.h"

namespace prof {

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer &) = delete;
  Symbolizer &operator=(const Symbolizer &) = delete;

  void module_load(const ExtRecord &r);
  void module_unload(uint64_t base);
  // Increments with every load and unload; stack nodes remember it.
  uint32_t epoch() const { return epoch_; }
  void load_perf_map(uint64_t pid);

  // Names of the frame at `ip`, outermost function first then the functions
  // inlined into it, innermost last. A return address is looked up at ip-1.
  const std::vector<std::string> &frame(uint64_t ip, uint32_t epoch, bool return_address);

 private:
  struct Module;
  Module *find(uint64_t ip, uint32_t epoch);
  std::vector<std::string> resolve(Module *m, uint64_t ip, bool return_address);

  std::vector<std::unique_ptr<Module>> modules_;
  uint32_t epoch_ = 0;
  std::map<uint64_t, std::pair<uint64_t, std::string>> perf_map_;  // start -> (end, name)
  std::unordered_map<uint64_t, std::vector<std::string>> cache_;
};

// The C++ demangled form of a symbol name, or the name itself.
std::string demangle(const char *name);

}  // namespace prof
