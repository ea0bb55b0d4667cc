#include "compact_events.h"

#include <string>

#include "memprof.h"

namespace prof {

void CompactEvents::add_site(const ext::Site &s, ByteReader &in, uint64_t at) {
  if (s.id != sites_.size() + 1)
    in.fail(at, "site " + std::to_string(s.id) + " out of order (expected " +
                    std::to_string(sites_.size() + 1) + ")");
  if (sites_.size() == kMaxSites)
    in.fail(at, "more than " + std::to_string(kMaxSites) + " sites");
  SiteState st;
  st.loc = s.loc;
  st.has_stacks = s.has_stacks;
  st.type = uint8_t(s.type);
  st.host_stack = s.host_stack;
  st.guest_stack = s.guest_stack;
  st.size = s.size;
  sites_.push_back(st);
}

CompactEvents::SiteState &CompactEvents::site(uint64_t id, ByteReader &in, uint64_t at) {
  if (id == 0 || id > sites_.size()) in.fail(at, "undefined site " + std::to_string(id));
  return sites_[id - 1];
}

uint64_t CompactEvents::release(uint64_t id, uint64_t age_step, ByteReader &in, uint64_t at) {
  SiteState &s = site(id, in, at);
  const uint64_t age = s.last_age + uint64_t(unzigzag(age_step));
  if (age >= s.made)
    in.fail(at, "a release of a block site " + std::to_string(id) + " never made");
  s.last_age = age;
  return block_key(id, s.made - 1 - age);
}

uint64_t CompactEvents::make(uint64_t id, ByteReader &in, uint64_t at) {
  SiteState &s = site(id, in, at);
  if (s.made == kMaxSiteBlocks) in.fail(at, "more blocks than a site can number");
  return block_key(id, s.made++);
}

void CompactEvents::locate(const SiteState &s, AllocEvent &ev) {
  ev.loc = s.loc;
  ev.has_stacks = s.has_stacks;
  ev.host_stack = s.host_stack;
  ev.guest_stack = s.guest_stack;
}

uint8_t CompactEvents::read_event(uint8_t kind, ByteReader &in, uint64_t at, AllocEvent &ev,
                                  uint64_t *made) {
  ev.oaddr = ev.osize = ev.naddr = ev.nsize = 0;
  *made = 0;
  // The releases first: ext.h's bodies, field by field.
  if (kind != uint8_t(ExtKind::AllocAt)) {
    const uint64_t free_site = kind == uint8_t(ExtKind::FreeAt) ? in.uleb() : 0;
    const uint64_t id = in.uleb();
    const uint64_t step = in.uleb();
    locate(free_site ? site(free_site, in, at) : SiteState{}, ev);
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

}  // namespace prof
