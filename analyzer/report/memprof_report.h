// MemprofReport: the memprof report of LuaJIT's parser (ALLOCATIONS,
// REALLOCATIONS, DEALLOCATIONS with their Overrides, HEAP SUMMARY, ALIASES),
// computed in one pass with memory proportional to sites and live blocks.
//
// Semantics, as tools/memprof/{parse,process,humanize}.lua of the reference:
// - A site is a guest location (prototype address, line, trace number), named
//   ("@chunk:line", "INTERNAL", "name:0xaddr", "CFUNC 0x..", "TRACE [n]
//   started at ...") with the symbols known at its first event of each kind.
//   Events of libprof streams without a guest location are named by their
//   innermost host frame that is not the allocator's (frame_names.h), C++
//   template arguments shortened unless `full_names`.
// - A realloc or free "overrides" the site that made the block it releases;
//   pairing takes the oldest live block at the address (LiveHeap).
// Differences, on purpose:
// - Rows with equal event counts are ordered by name, HEAP SUMMARY rows with
//   equal bytes too (the reference leaves both to Lua's table traversal).
// - HEAP SUMMARY by default credits every live block to the site whose event
//   (allocation or reallocation) made it: "holds" is the bytes of its blocks
//   still alive, "allocs" the blocks it made, "frees" how many of those were
//   freed or reallocated since. The reference credits a realloc's new size to
//   the block's previous site while ownership moves on, which can show false
//   leaks; `compat_heap_summary` reproduces it exactly.
// - Several streams merge: sites are the same when their location and name
//   are.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/live_heap.h"
#include "memprof.h"
#include "read/stream_context.h"

namespace prof {

struct ReportOptions {
  bool leak_only = false;
  bool human_readable = false;
  bool compat_heap_summary = false;
};

class MemprofReport {
 public:
  explicit MemprofReport(bool full_names = false) : full_names_(full_names) {}

  // Reads every event of a memprof stream.
  void read(StreamContext &ctx);

  void render(std::ostream &out, const ReportOptions &opt) const;
  nlohmann::json to_json(const ReportOptions &opt) const;

 private:
  // A site: (native, addr, line, trace) locates it as the reference's symtab
  // id does; `name` is its name when first met in its stream.
  struct SiteKey {
    bool native = false;
    uint64_t addr = 0, line = 0, trace = 0;
    uint32_t name = 0;
    auto tie() const { return std::tie(native, addr, line, trace, name); }
    bool operator<(const SiteKey &o) const { return tie() < o.tie(); }
  };
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
    uint32_t name;  // the name of the event that made it
  };
  struct HeapRow {
    std::string name;
    int64_t bytes = 0;
    uint64_t allocs = 0, frees = 0;
  };
  enum Kind { kAlloc, kRealloc, kFree };

  uint32_t intern(const std::string &name);
  // The name of a libprof event's site, from its host stack (by index).
  std::string site_name(StreamContext &ctx, uint32_t host) const;
  // Names an event (now) and locates its site.
  uint32_t locate(StreamContext &ctx, const MemprofEvent &ev, SiteKey *key);
  void add(const MemprofEvent &ev, const SiteKey &key, uint32_t name);
  void link(Site &s, const Block &old, uint64_t nsize);
  std::vector<const Site *> sorted(Kind kind) const;
  std::vector<HeapRow> heap_summary(bool compat) const;

  bool full_names_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> name_ids_;
  std::map<SiteKey, Site> sites_[3];
  LiveHeap<Block> heap_;
  // Default HEAP SUMMARY, by the name of the event that made the blocks:
  // blocks made and retired, bytes live.
  std::unordered_map<uint32_t, std::pair<uint64_t, uint64_t>> made_retired_;
  std::unordered_map<uint32_t, int64_t> live_;
  uint64_t unknown_frees_ = 0;
  std::vector<std::pair<std::string, std::string>> aliases_;  // (alias, chunk text)
  std::vector<std::pair<uint64_t, nlohmann::json>> windows_;  // (pid, window) of windowed streams

  // Per stream: the name of a location when first met (its identity), the
  // current names of locations while no symbol changes them, and the names
  // of host stacks.
  using Loc = std::tuple<uint64_t, uint64_t, uint64_t>;
  std::map<Loc, uint32_t> first_names_;
  std::map<Loc, uint32_t> loc_names_;
  std::unordered_map<uint64_t, uint32_t> stack_names_;
  uint64_t names_epoch_ = UINT64_MAX;
};

// "%dB", or with human units "%d%s" / "%.2f%s" (KiB, MiB, GiB) as the reference;
// exact up to 2^53, and never wrapped to a negative number beyond 2^63.
std::string format_bytes(double bytes, bool human);
// A count rounded to an integer, written whole however large.
std::string format_count(double n);

}  // namespace prof
