// MemprofReport: the memprof report of LuaJIT's parser (ALLOCATIONS,
// REALLOCATIONS, DEALLOCATIONS with their Overrides, HEAP SUMMARY), computed
// in one pass with memory proportional to sites and live blocks.
//
// Differences from the reference, on purpose:
// - Rows with equal event counts are ordered by name (the reference leaves
//   their order to Lua's table traversal).
// - HEAP SUMMARY by default credits every live block to the site that last
//   (re)allocated it: "holds" is the bytes of its blocks still alive, "allocs"
//   the blocks it created, "frees" how many of those were freed or
//   reallocated since. The reference credits a realloc's new size to the
//   block's original site while ownership moves on, which can show false
//   leaks; `compat_heap_summary` reproduces it exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "live_heap.h"
#include "memprof.h"

namespace prof {

struct ReportOptions {
  bool leak_only = false;
  bool human_readable = false;
  bool compat_heap_summary = false;
};

class MemprofReport {
 public:
  // Identifies a site as the reference does: guest (addr, line, trace) or,
  // for native events of libprof streams, the innermost host frame.
  using SiteKey = std::tuple<uint8_t, uint64_t, uint64_t, uint64_t>;
  // Names an event's site at the moment it is read.
  using Namer = std::function<std::string(const MemprofEvent &)>;

  MemprofReport(Namer namer, SiteKey (*key_of)(const MemprofEvent &));

  void add(const MemprofEvent &ev);  // Alloc, Realloc and Free records

  void render(std::ostream &out, const ReportOptions &opt) const;
  nlohmann::json to_json(const ReportOptions &opt) const;

  uint64_t unknown_frees() const { return unknown_frees_; }

 private:
  struct Override {
    uint32_t name = 0;
    uint64_t allocated = 0, freed = 0, count = 0;
  };
  struct Site {
    uint32_t name = 0;
    uint64_t num = 0, alloc = 0, free = 0;
    std::map<SiteKey, Override> overrides;
  };
  struct Block {
    uint64_t size;
    SiteKey key;
    uint32_t name;
  };
  struct HeapRow {
    std::string name;
    int64_t bytes = 0;
    uint64_t allocs = 0, frees = 0;
  };
  enum Kind { kAlloc, kRealloc, kFree };

  uint32_t intern(const std::string &name);
  Site &site(Kind kind, const SiteKey &key, uint32_t name);
  void link(Site &s, const Block *old, uint64_t nsize);
  std::vector<const Site *> sorted(Kind kind) const;
  std::vector<HeapRow> heap_summary(bool compat) const;

  Namer namer_;
  SiteKey (*key_of_)(const MemprofEvent &);
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> name_ids_;
  std::map<SiteKey, Site> sites_[3];
  LiveHeap<Block> heap_;
  // Default HEAP SUMMARY: blocks created and retired per owning name.
  std::unordered_map<uint32_t, std::pair<uint64_t, uint64_t>> born_died_;
  uint64_t unknown_frees_ = 0;
};

// "%dB", or with human units "%d%s" / "%.2f%s" (KiB, MiB, GiB) as the reference.
std::string format_bytes(int64_t bytes, bool human);

}  // namespace prof
