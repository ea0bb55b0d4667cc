// StackKey: where a memory event happened, and StackIndex: dense ids for
// keys, so models index plain vectors and hand-offs between threads stay
// small.
//
// Invariants: ids are given in the order keys are first met, from 0; a key
// keeps its id; keys of different streams never compare equal (stack-table
// indices are per stream); 20 bytes a key plus its IdTable slots. An object
// type splits a stack: the same place making tables and strings is two keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/id_table.h"

namespace prof {

// A stream's stack-table stacks (indices, stack_table.h), or for streams
// without stacks (genuine LuaJIT), a guest location (`site`, named by the
// reader).
struct StackKey {
  uint32_t file = 0;  // which stream
  uint32_t site = 0;
  uint32_t host = 0, guest = 0;
  uint8_t object_type = 0;  // the guest object allocated (ext.h object-type), 0: untyped
  bool operator==(const StackKey &o) const {
    return file == o.file && site == o.site && host == o.host && guest == o.guest &&
           object_type == o.object_type;
  }
};

// A StackKey as an event gives it: the stream's own stack ids.
struct EventStacks {
  uint32_t file = 0, site = 0;
  uint64_t host = 0, guest = 0;
  uint8_t object_type = 0;
  bool operator==(const EventStacks &o) const {
    return file == o.file && site == o.site && host == o.host && guest == o.guest &&
           object_type == o.object_type;
  }
};

class StackIndex {
 public:
  // The id of the stack an event names; key_of(stacks) makes its key (and
  // may throw: it checks the ids), only when the stacks are not cached.
  template <class KeyOf>
  __attribute__((always_inline)) uint32_t id_of(const EventStacks &stacks, KeyOf &&key_of) {
    // XXX: events come in runs from a few stacks; a small direct-mapped
    // cache in front of the table saves most lookups, and one multiply
    // (its top bits) is all a hit costs.
    Cached &c = cache_[((stacks.host + 31 * stacks.guest + stacks.site + 7 * stacks.object_type) *
                        0x9E3779B97F4A7C15ull) >>
                       (64 - kCacheBits)];
    if (c.id != IdTable::kNone && c.stacks == stacks) return c.id;
    c = Cached{stacks, insert(key_of(stacks))};
    return c.id;
  }
  const StackKey &key(uint32_t id) const { return keys_[id]; }
  uint32_t size() const { return uint32_t(keys_.size()); }

 private:
  static uint64_t hash(const StackKey &k) {
    return mix_hash(uint64_t(k.host) << 32 | k.guest,
                    (uint64_t(k.file) << 32 | k.site) ^ uint64_t(k.object_type) << 56);
  }
  static constexpr int kCacheBits = 6;
  struct Cached {
    EventStacks stacks;
    uint32_t id = IdTable::kNone;
  };
  __attribute__((noinline)) uint32_t insert(const StackKey &k) {
    const uint64_t h = hash(k);
    uint32_t id = ids_.find(h, [&](uint32_t i) { return keys_[i] == k; });
    if (id == IdTable::kNone) {
      id = size();
      keys_.push_back(k);
      ids_.insert(h, id, [&](uint32_t i) { return hash(keys_[i]); });
    }
    return id;
  }

  std::vector<StackKey> keys_;
  IdTable ids_;
  Cached cache_[1 << kCacheBits];
};

}  // namespace prof
