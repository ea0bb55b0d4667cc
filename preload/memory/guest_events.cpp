// prof_guest_alloc(_walked): a guest VM's own allocator calls, as memory events,
// with prof_guest_sample's verdict on them, and prof_guest_object_type, the
// kind of object its next allocations are for. The same decisions as the
// hooks' (hooks.cpp): allocation sampling as for malloc, frees recorded
// while paused too, nothing recorded under the thread's guard.
#include <cstdint>

#include "agent.h"
#include "ext.h"
#include "memory/alloc_sampling.h"
#include "memory/heap_total.h"
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

// The verdict of one call (libprof.h): the hooks' decisions (hooks.cpp),
// frees recorded while paused too, nothing under the thread's guard.
unsigned sample_call(const void *ptr, size_t nsize) {
  if (t_state.guard || !g_agent.on.load(std::memory_order_relaxed)) return 0;
  const uint64_t mean = g_agent.cfg.sample_bytes;
  unsigned verdict = 0;
  if (ptr && settle_free(sample_free(mean, ptr), ptr)) verdict |= PROF_SAMPLE_OLD;
  if (nsize && !g_agent.paused.load(std::memory_order_relaxed) &&
      settle_allocation(sample_allocation(mean, nsize), mean, nsize))
    verdict |= PROF_SAMPLE_NEW;
  return verdict;
}

// The call at `at` (the adapter's, in its allocator wrapper), with its
// verdict. The heap count takes every call that did not fail, at the sizes
// the VM gives, whatever the verdict.
inline void guest_alloc(const CallSite &at, unsigned verdict, const void *ptr, size_t osize,
                        const void *nptr, size_t nsize, const prof_guest_site *site,
                        const prof_guest_frame *frames, int nframes,
                        const prof_guest_walk *walk) {
  if (t_state.guard || !g_agent.on.load(std::memory_order_relaxed)) return;
  const bool old_block = ptr && (verdict & PROF_SAMPLE_OLD);
  if (!nptr && nsize) {  // the call failed: the old block lives on
    if (old_block) remember_sampled(g_agent.cfg.sample_bytes, ptr);
    return;
  }
  count_heap(int64_t(nsize) - int64_t(ptr ? osize : 0));
  const bool new_block = nptr && (verdict & PROF_SAMPLE_NEW);
  if (!old_block && !new_block) return;
  // XXX: a realloc whose new block sampling left out ends the old one after
  // the fact, as the hooks' does; one whose old block it left out makes one.
  const uint8_t aevent = !new_block ? kAeventFree : old_block ? kAeventRealloc : kAeventAlloc;
  if (!frames || nframes < 0) nframes = 0;
  if (aevent == kAeventFree && nframes == 0 && !walk &&
      (!site || site->source == PROF_SITE_INTERNAL)) {
    record_guest_internal_free(at, ptr, osize);
    return;
  }
  record_guest(at, aevent, site_loc(site), frames, nframes, walk, old_block ? ptr : nullptr,
               old_block ? osize : 0, new_block ? nptr : nullptr, new_block ? nsize : 0);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void prof_guest_alloc(
    const void *ptr, size_t osize, const void *nptr, size_t nsize, const prof_guest_site *site,
    const prof_guest_frame *frames, int nframes) {
  if (!nptr && nsize) return;  // a failed call: nothing happened
  guest_alloc(caller_of(__builtin_frame_address(0)), sample_call(ptr, nsize), ptr, osize, nptr,
              nsize, site, frames, nframes, nullptr);
}

extern "C" __attribute__((visibility("default"))) unsigned prof_guest_sample(const void *ptr,
                                                                              size_t nsize) {
  return sample_call(ptr, nsize);
}

extern "C" __attribute__((visibility("default"))) void prof_guest_alloc_walked(
    unsigned verdict, const void *ptr, size_t osize, const void *nptr, size_t nsize,
    const prof_guest_site *site, const prof_guest_frame *frames, int nframes,
    const prof_guest_walk *walk) {
  guest_alloc(caller_of(__builtin_frame_address(0)), verdict, ptr, osize, nptr, nsize, site,
              frames, nframes, walk);
}

// The recorder reads the hint when it encodes an allocation (recorder.cpp).
extern "C" __attribute__((visibility("default"))) void prof_guest_object_type(unsigned type) {
  t_state.object_type = type <= kMaxObjectType ? uint8_t(type) : 0;
}
