// IdTable: a hash set of dense ids whose keys their owner keeps (in its own
// arrays), so that a slot costs 4 bytes: the index of the interned strings,
// frames, stacks and tree nodes of the model.
//
// Invariants: open addressing with linear probing, at most 3/4 full; ids
// are never removed; find() and insert() take the key's hash, and the owner
// compares keys (same(id)) and rehashes them (hash_of(id)) when it grows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace prof {

class IdTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // The id among those hashed to `hash` for which same(id) holds, or kNone.
  template <class Same>
  uint32_t find(uint64_t hash, Same &&same) const {
    if (slots_.empty()) return kNone;
    for (size_t i = size_t(hash) & mask_;; i = (i + 1) & mask_) {
      const uint32_t id = slots_[i];
      if (id == kNone || same(id)) return id;
    }
  }

  // Adds `id`, which find() did not find.
  template <class HashOf>
  void insert(uint64_t hash, uint32_t id, HashOf &&hash_of) {
    if (4 * (count_ + 1) > 3 * slots_.size()) {
      std::vector<uint32_t> old(slots_.empty() ? 16 : 2 * slots_.size(), kNone);
      old.swap(slots_);
      mask_ = slots_.size() - 1;
      for (uint32_t other : old)
        if (other != kNone) place(hash_of(other), other);
    }
    place(hash, id);
    count_++;
  }

 private:
  void place(uint64_t hash, uint32_t id) {
    size_t i = size_t(hash) & mask_;
    while (slots_[i] != kNone) i = (i + 1) & mask_;
    slots_[i] = id;
  }

  std::vector<uint32_t> slots_;
  size_t mask_ = 0, count_ = 0;
};

// A 64-bit mix (splitmix64's finalizer) of a and b, for IdTable hashes.
inline uint64_t mix_hash(uint64_t a, uint64_t b) {
  uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

}  // namespace prof
