// CompactEvents: what a memprof reader keeps to turn compact events (ext.h:
// site, alloc-at, free-of, free-at, realloc-of) back into the events they
// stand for.
//
// Invariants:
// - Memory is proportional to the sites, at most kMaxSites of them; a
//   stream defining more, or a site out of order, is refused.
// - A compact block is named by a key no address has (block_key(): bit 63
//   set, then its site and its number within the site), in the event's
//   address fields, so readers pair compact blocks exactly as they pair
//   addresses, and never with a block an address names.
// - A release naming a block its site never made is refused; one naming a
//   block already released pairs with nothing (an unknown free), as a
//   repeated address would.
#pragma once

#include <cstdint>
#include <vector>

#include "byte_reader.h"
#include "ext.h"

namespace prof {

struct AllocEvent;

class CompactEvents {
 public:
  static constexpr uint64_t kMaxSites = uint64_t(1) << 19;
  static constexpr uint64_t kMaxBlocks = uint64_t(1) << 40;  // per site

  // Whether r is a compact record (a site or an event).
  static bool is_compact(const ExtRecord &r) { return ext_kind(r) >= ExtKind::Site; }

  // Takes a site record that started at offset `at`.
  void add_site(const ext::Site &site, ByteReader &in, uint64_t at);
  // Fills ev with the event the compact event r (at `at`) stands for;
  // returns the object type of the block it makes (0: untyped, or none).
  uint8_t expand(const ExtRecord &r, ByteReader &in, uint64_t at, AllocEvent &ev);

  static uint64_t block_key(uint64_t site, uint64_t number) {
    constexpr uint64_t kNumberMask = kMaxBlocks - 1;
    // XXX: spread by site, so that the first blocks of all sites do not
    // share one slot of a reader's table (LiveHeap homes keys by key >> 4).
    return uint64_t(1) << 63 | site << 44 |
           ((number + site * 0x9E3779B97F4A7C15ull) & kNumberMask) << 4;
  }

 private:
  struct SiteState {
    GuestLoc loc;
    bool has_stacks = false;
    uint8_t type = 0;
    uint64_t host_stack = 0, guest_stack = 0, size = 0;
    uint64_t made = 0;      // blocks made so far
    uint64_t last_age = 0;  // the age the last release named
  };
  SiteState &site(uint64_t id, ByteReader &in, uint64_t at);
  // The key of the block the release (site, age-step) names.
  uint64_t release(uint64_t id, uint64_t age_step, ByteReader &in, uint64_t at);
  // The key of the site's next block.
  uint64_t make(uint64_t id, ByteReader &in, uint64_t at);
  static void locate(const SiteState &s, AllocEvent &ev);

  std::vector<SiteState> sites_;  // site id - 1
};

}  // namespace prof
