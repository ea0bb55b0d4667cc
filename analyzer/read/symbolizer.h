// Symbolizer: host addresses of a libprof stream to frames, offline.
//
// Order of preference for an address: the module that covered it when its
// stack was written (the stream's module-load records), read with libdw:
// DWARF gives the function, file:line and the chain of inlined calls; else
// the ELF .symtab/.dynsym name; else "module+0xoffset". An address no module
// covers is looked up in /tmp/perf-<pid>.map (JIT code), else shown as
// "0xaddr". Stripped code is named by its function's first address. Code of
// the agent itself (libprof.so, libprof-cpu.so, and the guest adapters
// prof_lua.so, prof_luajit.so) is one frame, "[libprof]": a CPU sample that
// interrupted the agent carries it at its leaf, above the program's frames
// that called into the agent; elsewhere its frames are left out.
//
// Invariants: an address is resolved against the modules loaded at an epoch
// (every load and unload starts one), so code of a dlclose'd object keeps its
// name; the modules that map one file share its reader (elf_file.h), however
// many load records of however many streams name it; what a reader resolved
// is cached per (module, pc), and per (file, path, offset) for every stream
// of the process, so memory grows with unique frames only (names made
// without a reader, offsets and addresses, are made again when asked); a
// path that cannot be read, or a build-id that differs from the file's on
// disk, gives one warning line on stderr, once (an unreadable path once in
// the process).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ext.h"
#include "model/frame.h"
#include "read/elf_file.h"

namespace prof {

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer &) = delete;
  Symbolizer &operator=(const Symbolizer &) = delete;

  void module_load(const ext::ModuleLoad &r);
  void module_unload(uint64_t base);
  // Increments with every load and unload; stack nodes remember it.
  uint32_t epoch() const { return epoch_; }
  void load_perf_map(uint64_t pid);

  // Frames of the code at return address `ip` (looked up at ip-1, in the
  // call instruction), or with `exact` at instruction `ip` (where a CPU
  // sample interrupted): the function first, then the functions inlined
  // into it, innermost last; valid until the next call.
  const std::vector<Frame> &frames(uint64_t ip, uint32_t epoch, bool exact = false);

  // Every module the stream loaded, unloaded ones included (exporters name
  // their mappings with them).
  struct ModuleInfo {
    uint64_t base, size;
    std::string path, build_id;  // build_id: raw bytes
  };
  std::vector<ModuleInfo> modules() const;

 private:
  struct Module;
  struct Key {
    const Module *module;
    uint64_t pc;
    bool operator==(const Key &o) const { return module == o.module && pc == o.pc; }
  };
  struct KeyHash {
    size_t operator()(const Key &k) const {
      return std::hash<uint64_t>()(k.pc * 0x9E3779B97F4A7C15ull ^ uintptr_t(k.module));
    }
  };
  Module *find(uint64_t ip, uint32_t epoch);
  void open(Module &m);
  std::vector<Frame> resolve(const Module &m, uint64_t ip, uint64_t pc) const;
  // resolve(), once in the process for a place in a file, whatever stream asks.
  std::vector<Frame> resolve_shared(const Module &m, uint64_t ip, uint64_t pc) const;
  std::vector<Frame> resolve_unmapped(uint64_t ip, uint64_t pc) const;

  std::vector<std::unique_ptr<Module>> modules_;
  // modules_ by base, in load order for one base; and the largest size, so
  // that a search stops where no module further down reaches the address.
  std::multimap<uint64_t, Module *> by_base_;
  uint64_t max_size_ = 0;
  uint32_t epoch_ = 0;
  std::map<uint64_t, std::pair<uint64_t, std::string>> perf_map_;  // start -> (end, name)
  std::unordered_map<Key, std::vector<Frame>, KeyHash> cache_;
  std::vector<Frame> uncached_;
  std::vector<Frame> agent_frame_;  // [libprof]
  std::set<std::pair<std::string, std::string>> build_id_warned_;  // (path, build-id)
};

// The one frame that stands for the agent's code.
extern const char *const kAgentFrame;

// The C++ demangled form of a symbol name, or the name itself.
std::string demangle(const char *name);

}  // namespace prof
