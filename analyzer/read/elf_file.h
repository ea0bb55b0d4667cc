// ElfFile: an ELF file on disk opened with libdw for offline lookups, at its
// link-time addresses (a module's address minus its load bias), so that
// every module record naming the file shares it, whatever its base.
//
// Invariants: a file is open once while anything holds it: open() finds it
// by its identity on disk (device, inode, size, modification time), under
// whatever path; the memory libdw takes for it (symbols, line tables, DWARF
// units) is paid once. Not thread-safe: the analyzer names stacks on one
// thread.
#pragma once

#include <elfutils/libdwfl.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "read/inline_scopes.h"

namespace prof {

class ElfFile {
 public:
  // The file at `path`, or nullptr if it is not a regular file libdw reads.
  static std::shared_ptr<ElfFile> open(const std::string &path);
  ~ElfFile();
  ElfFile(const ElfFile &) = delete;
  ElfFile &operator=(const ElfFile &) = delete;

  Dwfl_Module *module() const { return module_; }
  // The raw bytes of its GNU build-id note (empty if it has none).
  const std::string &build_id() const { return build_id_; }
  // The first address of the function around link-time address `at`, by
  // the unwind tables' index (.eh_frame_hdr), which stripped objects keep:
  // each entry begins one function. 0 where the index says nothing.
  uint64_t function_start(uint64_t at) const;
  // The functions of compile unit `cu` (one of this file's), indexed at
  // the first call for that unit.
  const InlineScopes &inline_scopes(Dwarf_Die *cu);

 private:
  ElfFile() = default;

  Dwfl *dwfl_ = nullptr;
  Dwfl_Module *module_ = nullptr;
  std::string build_id_;
  std::vector<uint64_t> function_starts_;  // ascending
  std::unordered_map<const void *, std::unique_ptr<InlineScopes>> units_;  // by the unit DIE's bytes
};

}  // namespace prof
