// StackKey: where a memory event happened, and StackIndex: dense ids for
// keys, so models index plain vectors and hand-offs between threads stay
// small.
//
// Invariants: ids are given in the order keys are first met, from 0; a key
// keeps its id; keys of different streams never compare equal (stack-table
// ids are per stream).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace prof {

// A stream's stack-table stacks, or for streams without stacks (genuine
// LuaJIT), a guest location (`site`, named by the reader).
struct StackKey {
  uint32_t file = 0;  // which stream
  uint32_t site = 0;
  uint64_t host = 0, guest = 0;
  bool operator==(const StackKey &o) const {
    return file == o.file && site == o.site && host == o.host && guest == o.guest;
  }
  bool operator<(const StackKey &o) const {
    if (file != o.file) return file < o.file;
    if (site != o.site) return site < o.site;
    if (host != o.host) return host < o.host;
    return guest < o.guest;
  }
};

class StackIndex {
 public:
  uint32_t id_of(const StackKey &k) {
    // XXX: events come in runs from a few stacks; a small direct-mapped
    // cache in front of the hash map saves most lookups.
    Cached &c = cache_[Hash()(k) % kCache];
    if (c.id != UINT32_MAX && c.key == k) return c.id;
    return insert(k, c);
  }
  const StackKey &key(uint32_t id) const { return keys_[id]; }
  uint32_t size() const { return uint32_t(keys_.size()); }

 private:
  struct Hash {
    size_t operator()(const StackKey &k) const {
      return size_t((k.host * 0x9E3779B97F4A7C15ull ^ k.guest * 0xC2B2AE3D27D4EB4Full) +
                    (uint64_t(k.file) << 32 | k.site));
    }
  };
  static constexpr size_t kCache = 64;
  struct Cached {
    StackKey key;
    uint32_t id = UINT32_MAX;
  };
  __attribute__((noinline)) uint32_t insert(const StackKey &k, Cached &c) {
    auto it = ids_.try_emplace(k, uint32_t(keys_.size())).first;
    if (it->second == keys_.size()) keys_.push_back(k);
    c = Cached{k, it->second};
    return it->second;
  }

  std::vector<StackKey> keys_;
  std::unordered_map<StackKey, uint32_t, Hash> ids_;
  Cached cache_[kCache];
};

}  // namespace prof
