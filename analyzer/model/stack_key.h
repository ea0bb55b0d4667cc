// StackKey: where a memory event happened, and StackIndex: dense ids for
// keys, so models index plain vectors and hand-offs between threads stay
// small.
//
// Invariants: ids are given in the order keys are first met, from 0; a key
// keeps its id; keys of different streams never compare equal (stack-table
// indices are per stream); 16 bytes a key plus its IdTable slots.
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
  bool operator==(const StackKey &o) const {
    return file == o.file && site == o.site && host == o.host && guest == o.guest;
  }
};

class StackIndex {
 public:
  uint32_t id_of(const StackKey &k) {
    // XXX: events come in runs from a few stacks; a small direct-mapped
    // cache in front of the table saves most lookups.
    // XXX: one multiply, its top bits: the table's hash costs more than a hit.
    Cached &c = cache_[((k.host + 31 * uint64_t(k.guest) + k.site) * 0x9E3779B97F4A7C15ull) >> 58];
    if (c.id != IdTable::kNone && c.key == k) return c.id;
    return insert(k, c);
  }
  const StackKey &key(uint32_t id) const { return keys_[id]; }
  uint32_t size() const { return uint32_t(keys_.size()); }

 private:
  static uint64_t hash(const StackKey &k) {
    return mix_hash(uint64_t(k.host) << 32 | k.guest, uint64_t(k.file) << 32 | k.site);
  }
  static constexpr size_t kCache = 64;  // the top 6 bits of a hash
  struct Cached {
    StackKey key;
    uint32_t id = IdTable::kNone;
  };
  __attribute__((noinline)) uint32_t insert(const StackKey &k, Cached &c) {
    const uint64_t h = hash(k);
    uint32_t id = ids_.find(h, [&](uint32_t i) { return keys_[i] == k; });
    if (id == IdTable::kNone) {
      id = size();
      keys_.push_back(k);
      ids_.insert(h, id, [&](uint32_t i) { return hash(keys_[i]); });
    }
    c = Cached{k, id};
    return id;
  }

  std::vector<StackKey> keys_;
  IdTable ids_;
  Cached cache_[kCache];
};

}  // namespace prof
