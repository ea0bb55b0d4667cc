// CompactEvents: what a memprof reader keeps to turn compact events (ext.h:
// site, alloc-at, free-of, free-at, realloc-of) back into the events they
// stand for.
//
// Invariants:
// - Memory is proportional to the sites, at most kMaxSites of them; a
//   stream defining more, or a site out of order, is refused.
// - A compact block is named by a key no address has (block_key(): bit 63
//   set, then its site and its number within the site, spread), in the event's
//   address fields, so readers pair compact blocks exactly as they pair
//   addresses, and never with a block an address names.
// - A release naming a block its site never made is refused; one naming a
//   block already released pairs with nothing (an unknown free), as a
//   repeated address would.
#pragma once

#include <cstdint>
#include <vector>

#include "alloc_event.h"
#include "byte_reader.h"
#include "ext.h"

namespace prof {

class CompactEvents {
 public:

  // Whether an ext record of this kind is a compact event (not a site).
  static bool is_event(uint8_t kind) {
    return kind >= uint8_t(ExtKind::AllocAt) && kind <= uint8_t(ExtKind::ReallocOf);
  }

  // Takes a site record that started at offset `at`.
  void add_site(const ext::Site &site, ByteReader &in, uint64_t at);
  // Reads the body of a compact event of `kind` (its header at `at`) and
  // fills ev with the event it stands for, and *made with the site of the
  // block it makes (0: none); returns that block's object type (0: untyped,
  // or none). Always inline: readers spend most of their time here, and a
  // call costs as much as the work.
  [[gnu::always_inline]] uint8_t read_event(uint8_t kind, ByteReader &in, uint64_t at, AllocEvent &ev, uint64_t *made) {
    ev.oaddr = ev.osize = ev.naddr = ev.nsize = 0;
    *made = 0;
    // The releases first: ext.h's bodies, field by field.
    if (kind != uint8_t(ExtKind::AllocAt)) {
      const uint64_t free_site = kind == uint8_t(ExtKind::FreeAt) ? in.uleb() : 0;
      const uint64_t id = in.uleb();
      const uint64_t step = in.uleb();
      if (free_site) {
        locate(site(free_site, in, at), ev);
      } else {
        ev.loc = GuestLoc{};
        ev.has_stacks = false;
        ev.host_stack = ev.guest_stack = 0;
      }
      ev.oaddr = release(id, step, in, at);
      ev.osize = sites_[id - 1].size;
      ev.aevent = kAeventFree;
      if (kind != uint8_t(ExtKind::ReallocOf)) return 0;
    }
    const uint64_t id = in.uleb();
    ev.aevent = kind == uint8_t(ExtKind::AllocAt) ? kAeventAlloc : kAeventRealloc;
    ev.naddr = make(id, in, at);
    *made = id;
    const SiteState &s = sites_[id - 1];
    locate(s, ev);
    ev.nsize = s.size;
    return s.type;
  }

  static uint64_t block_key(uint64_t site, uint64_t number) {
    static_assert(kMaxSites << 44 <= uint64_t(1) << 63 && kMaxSiteBlocks << 6 <= uint64_t(1) << 44,
                  "flag, site and number do not overlap");
    // XXX: readers' tables home a key at key >> 4 (LiveHeap, made for
    // addresses): a site's blocks sit 4 slots apart, as 64-byte blocks do,
    // not in one dense run every other key must probe past; and each site
    // starts elsewhere, not all at slot 0.
    return uint64_t(1) << 63 | site << 44 |
           ((number + site * 0x9E3779B97F4A7C15ull) & (kMaxSiteBlocks - 1)) << 6;
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
  SiteState &site(uint64_t id, ByteReader &in, uint64_t at) {
    if (__builtin_expect(id - 1 >= sites_.size(), 0)) refuse(in, at, "undefined site ", id, "");
    return sites_[id - 1];
  }
  // The key of the block the release (site, age-step) names.
  uint64_t release(uint64_t id, uint64_t age_step, ByteReader &in, uint64_t at) {
    SiteState &s = site(id, in, at);
    const uint64_t age = s.last_age + uint64_t(unzigzag(age_step));
    if (__builtin_expect(age >= s.made, 0))
      refuse(in, at, "a release of a block site ", id, " never made");
    s.last_age = age;
    return block_key(id, s.made - 1 - age);
  }
  // The key of the site's next block.
  uint64_t make(uint64_t id, ByteReader &in, uint64_t at) {
    SiteState &s = site(id, in, at);
    if (__builtin_expect(s.made == kMaxSiteBlocks, 0))
      refuse(in, at, "more blocks than site ", id, " can number");
    return block_key(id, s.made++);
  }
  static void locate(const SiteState &s, AllocEvent &ev) {
    ev.loc = s.loc;
    ev.has_stacks = s.has_stacks;
    ev.host_stack = s.host_stack;
    ev.guest_stack = s.guest_stack;
  }
  // Out of line and cold: the hot paths only test, and build no message.
  [[noreturn, gnu::cold, gnu::noinline]] static void refuse(ByteReader &in, uint64_t at,
                                                            const char *before, uint64_t site,
                                                            const char *after);

  std::vector<SiteState> sites_;  // site id - 1
};

}  // namespace prof
