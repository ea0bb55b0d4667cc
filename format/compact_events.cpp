#include "compact_events.h"

#include <string>

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

void CompactEvents::refuse(ByteReader &in, uint64_t at, const char *before, uint64_t site,
                           const char *after) {
  in.fail(at, before + std::to_string(site) + after);
}

}  // namespace prof
