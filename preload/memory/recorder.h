// Recorder: turns one allocation call into stream records: host stack (and
// guest stack) captured, interned, the event encoded and appended.
//
// Invariants: called only by the hooks and the guest calls (guest_events.cpp),
// for what they decided to record (sampling included: alloc_sampling.h), with the thread's guard NOT yet set;
// each function sets the guard for its whole duration, so whatever libunwind
// or the guest backtracer allocates is never recorded. Each opens the memory
// stream first if this is its first event (agent.h). Order (see
// stream/event_ring.h): record_free() runs before the real free, the others after
// the real call returned. An allocation or reallocation is preceded by the
// object type a guest's allocator wrapper set on the thread, if any
// (prof_guest_object_type), in the same ring record.
#pragma once

#include <cstddef>

#include "host_stack.h"
#include "libprof.h"
#include "memprof.h"

namespace prof {

// `at` is where the program called the hook (caller_of() in the hook).
void record_alloc(const CallSite &at, const void *p, size_t size);
void record_free(const CallSite &at, const void *p);
void record_realloc(const CallSite &at, const void *old, const void *p, size_t size);
void record_map(const CallSite &at, const void *p, size_t len);
void record_unmap(const void *p, size_t len);
// A guest VM's own allocator call (prof_guest_alloc(_walked)): its site and guest
// stack come from the VM's adapter (with what it knows unchanged since its
// previous capture: walk, or nullptr); the host stack is kept for C
// function sites only, the one place it says more than the guest stack.
void record_guest(const CallSite &at, uint8_t aevent, const GuestLoc &loc,
                  const prof_guest_frame *frames, int nframes, const prof_guest_walk *walk,
                  const void *oaddr, size_t osize, const void *naddr, size_t nsize);
// A guest VM's free of osize bytes at p charged INTERNAL with no frames (its
// collector's, nearly half of a VM's events): written as a host free is,
// with the size and the INTERNAL charge, and nothing more.
void record_guest_internal_free(const CallSite &at, const void *p, size_t osize);
// Writes guest symbols published since the last call (any thread may call).
void drain_guest_symbols();
// A new stream (forked child): every symbol is to be written again.
void restart_guest_symbols();

}  // namespace prof
