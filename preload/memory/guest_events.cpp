// prof_guest_alloc: a guest VM's own allocator calls, as memory events, and
// prof_guest_object_type, the kind of object its next allocations are for. The
// same decisions as the hooks' (hooks.cpp): frees are recorded while paused
// too, nothing is recorded under the thread's guard. Allocation sampling
// does not apply: every guest call is recorded.
#include <cstdint>

#include "agent.h"
#include "ext.h"
#include "memory/recorder.h"
#include "thread_state.h"

using namespace prof;

namespace {

GuestLoc site_loc(const prof_guest_site *site) {
  if (!site) return GuestLoc{kAsourceInternal, 0, 0, 0};
  switch (site->source) {
    case PROF_SITE_LFUNC:
      return GuestLoc{kAsourceLfunc, site->addr, site->line, 0};
    case PROF_SITE_CFUNC:
      return GuestLoc{kAsourceCfunc, site->addr, 0, 0};
    case PROF_SITE_TRACE:
      return GuestLoc{kAsourceTrace, 0, 0, site->addr};
    default:
      return GuestLoc{kAsourceInternal, 0, 0, 0};
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void prof_guest_alloc(
    const void *ptr, size_t osize, const void *nptr, size_t nsize, const prof_guest_site *site,
    const prof_guest_frame *frames, int nframes) {
  if (t_state.guard || !g_agent.on.load(std::memory_order_relaxed)) return;
  const bool paused = g_agent.paused.load(std::memory_order_relaxed);
  uint8_t aevent;
  if (ptr && nptr)
    aevent = paused ? kAeventFree : kAeventRealloc;
  else if (ptr)
    aevent = kAeventFree;
  else if (nptr && !paused)
    aevent = kAeventAlloc;
  else
    return;
  if (!frames || nframes < 0) nframes = 0;
  record_guest(caller_of(__builtin_frame_address(0)), aevent, site_loc(site), frames, nframes,
               ptr, osize, aevent == kAeventFree ? nullptr : nptr, aevent == kAeventFree ? 0 : nsize);
}

extern "C" __attribute__((visibility("default"))) int prof_memory_recording(void) {
  return g_agent.on.load(std::memory_order_relaxed) ? 1 : 0;
}

// The recorder reads the hint when it encodes an allocation (recorder.cpp).
extern "C" __attribute__((visibility("default"))) void prof_guest_object_type(unsigned type) {
  t_state.object_type = type <= kMaxObjectType ? uint8_t(type) : 0;
}
