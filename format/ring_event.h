// RingEvent: an allocation event as a program thread leaves it in the event
// ring. Its fields are stored as whole words, not encoded: the thread that
// allocates pays for a few stores, and the ring's writer, on another core,
// makes the memprof event (or a compact one) of it (stream_compactor.h). It
// never reaches a file: the compactor turns every one into memprof.h's
// grammar, whose readers reject its tag (an ext kind the grammar lacks).
//
//   ring-event:  tag header object-type tid pad loc-words? stack-words?
//                free-words? alloc-words?
//   tag:         kRingEventTag
//   header:      the memprof event-header it stands for (aevent, asource, H)
//   object-type: 0, or the object type of an allocation (ext.h)
//   tid:         u32, the thread that made the event (the compactor writes
//                an event-thread record, ext.h, where it changes)
//   loc-words:   u64 addr  u64 line-or-traceno   (asource lfunc, cfunc, trace)
//   stack-words: u64 host  u64 guest             (H)
//   free-words:  u64 oaddr u64 osize             (free, realloc)
//   alloc-words: u64 naddr u64 nsize             (alloc, realloc)
//   u64:         8 bytes, the machine's byte order
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "alloc_event.h"
#include "ext.h"

namespace prof {

constexpr uint8_t kRingEventTag = kExtFlag | kExtKindMask;
static_assert(kExtKindMask > kExtKindMax, "the tag is no ext kind of the grammar");
constexpr size_t kRingEventHead = 8;
constexpr size_t kMaxRingEventBytes = kRingEventHead + 8 * 8;

inline bool ring_event_has_loc(uint8_t header) {
  const uint8_t source = header & kAsourceMask;
  return source == kAsourceLfunc || source == kAsourceCfunc || source == kAsourceTrace;
}

// The bytes of the ring event whose header is `header`.
inline size_t ring_event_size(uint8_t header) {
  return kRingEventHead + (ring_event_has_loc(header) ? 16 : 0) +
         (header & kMemprofStacks ? 16 : 0) + (header & kAeventFree ? 16 : 0) +
         (header & kAeventAlloc ? 16 : 0);
}

inline uint8_t ring_event_header(const AllocEvent &e) {
  return uint8_t(e.aevent | e.loc.source | (e.has_stacks ? kMemprofStacks : 0));
}

// Writes e, made by thread tid, at dst (kMaxRingEventBytes of room);
// returns its length.
inline size_t put_ring_event(uint8_t *dst, const AllocEvent &e, uint8_t object_type,
                             uint32_t tid) {
  const uint8_t header = ring_event_header(e);
  const uint64_t head = kRingEventTag | uint64_t(header) << 8 | uint64_t(object_type) << 16 |
                        uint64_t(tid) << 24;
  uint8_t *p = dst;
  auto word = [&p](uint64_t v) {
    memcpy(p, &v, sizeof v);
    p += sizeof v;
  };
  word(head);
  if (ring_event_has_loc(header)) {
    word(e.loc.source == kAsourceTrace ? e.loc.traceno : e.loc.addr);
    word(e.loc.line);
  }
  if (e.has_stacks) {
    word(e.host_stack);
    word(e.guest_stack);
  }
  if (e.aevent & kAeventFree) {
    word(e.oaddr);
    word(e.osize);
  }
  if (e.aevent & kAeventAlloc) {
    word(e.naddr);
    word(e.nsize);
  }
  return size_t(p - dst);
}

// Reads the ring event whose ring_event_size() bytes are at p.
inline void read_ring_event(const uint8_t *p, AllocEvent *e, uint8_t *object_type, uint32_t *tid) {
  const uint8_t header = p[1];
  *object_type = p[2];
  memcpy(tid, p + 3, sizeof *tid);
  p += kRingEventHead;
  auto word = [&p] {
    uint64_t v;
    memcpy(&v, p, sizeof v);
    p += sizeof v;
    return v;
  };
  *e = AllocEvent{};
  e->aevent = header & kAeventMask;
  e->loc.source = header & kAsourceMask;
  if (ring_event_has_loc(header)) {
    const uint64_t at = word();
    (e->loc.source == kAsourceTrace ? e->loc.traceno : e->loc.addr) = at;
    e->loc.line = word();
  }
  e->has_stacks = header & kMemprofStacks;
  if (e->has_stacks) {
    e->host_stack = word();
    e->guest_stack = word();
  }
  if (header & kAeventFree) {
    e->oaddr = word();
    e->osize = word();
  }
  if (header & kAeventAlloc) {
    e->naddr = word();
    e->nsize = word();
  }
}

}  // namespace prof
