// prof_guest_alloc(_walked): a guest VM's own allocator calls, as memory events, and
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

// The call at `at` (the adapter's, in its allocator wrapper).
inline void guest_alloc(const CallSite &at, const void *ptr, size_t osize, const void *nptr,
                        size_t nsize, const prof_guest_site *site, const prof_guest_frame *frames,
                        int nframes, const prof_guest_walk *walk) {
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
  if (aevent == kAeventFree && nframes == 0 && !walk &&
      (!site || site->source == PROF_SITE_INTERNAL)) {
    record_guest_internal_free(at, ptr, osize);
    return;
  }
  record_guest(at, aevent, site_loc(site), frames, nframes, walk, ptr, osize,
               aevent == kAeventFree ? nullptr : nptr, aevent == kAeventFree ? 0 : nsize);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void prof_guest_alloc(
    const void *ptr, size_t osize, const void *nptr, size_t nsize, const prof_guest_site *site,
    const prof_guest_frame *frames, int nframes) {
  guest_alloc(caller_of(__builtin_frame_address(0)), ptr, osize, nptr, nsize, site, frames,
              nframes, nullptr);
}

extern "C" __attribute__((visibility("default"))) void prof_guest_alloc_walked(
    const void *ptr, size_t osize, const void *nptr, size_t nsize, const prof_guest_site *site,
    const prof_guest_frame *frames, int nframes, const prof_guest_walk *walk) {
  guest_alloc(caller_of(__builtin_frame_address(0)), ptr, osize, nptr, nsize, site, frames,
              nframes, walk);
}

extern "C" __attribute__((visibility("default"))) int prof_memory_recording(void) {
  return g_agent.on.load(std::memory_order_relaxed) ? 1 : 0;
}

// The recorder reads the hint when it encodes an allocation (recorder.cpp).
extern "C" __attribute__((visibility("default"))) void prof_guest_object_type(unsigned type) {
  t_state.object_type = type <= kMaxObjectType ? uint8_t(type) : 0;
}
