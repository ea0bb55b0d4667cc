// StackInterner: the agent's side of the de-duplicated stack table (see
// format/ext.h): maps each (parent node, frame) to a node id, writing every
// new node to the stream before any record can refer to it.
//
// Invariants: lock-free and malloc-free (open-addressing tables in mmap'd
// memory, MAP_NORESERVE, touched lazily). The tables come in tiers, each
// twice the size of the one before: new nodes go to the newest tier until
// it is half full, then to the next, and a lookup probes the tiers from the
// newest down. A short-lived program's few hundred nodes then lie in the
// first tier's few pages, where a table of a million slots gave each node
// a page fault of its own (most of the agent's start). A new node's record is
// appended before the node is published, so no event can name an unwritten
// node; two threads racing on one node each write their own id, both valid.
// When the table is full, nodes are still written (not de-duplicated) and
// counted. A per-thread path cache makes an event pay only for the frames
// that differ from the thread's previous stack.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace prof {

class EventRing;

// One frame of a stack: a host return address, or a guest frame.
struct FrameKey {
  uint64_t a;  // ip (host) or frame address (guest)
  uint64_t b;  // 0 (host) or kGuestBit | line << 2 | frame type (guest)
  bool operator==(const FrameKey &o) const { return a == o.a && b == o.b; }
};
constexpr uint64_t kGuestBit = uint64_t(1) << 63;

// One thread's memory of the interner: its previous stack, root first, with
// the node ids, and the nodes it used lately (so that a changed frame seldom
// needs the shared table, whose random probes miss the cache). Made zeroed
// (a thread's mapped scratch): one never used needs no clearing.
struct PathCache {
  static constexpr int kMax = 1024;
  static constexpr int kRecent = 1024;
  struct Node {
    uint64_t parent;
    FrameKey key;
    uint64_t id;  // 0: empty
  };
  uint64_t generation = 0;  // the interner's, when this path was cached
  int depth = 0;
  FrameKey frames[kMax];
  uint64_t ids[kMax];
  Node recent[kRecent];
};

class StackInterner {
 public:
  bool init(EventRing *ring);
  // Unmaps the table (the agent is off for good), if it was mapped.
  void release();
  // Forgets every node (a forked child starts a new stream).
  void reset();
  // The id of the stack key_at(0..n), innermost first; 0 for an empty
  // stack. The `known_same` outermost frames are known to be those of the
  // stack interned last with this cache (they are not compared).
  template <class KeyAt>
  uint64_t intern(KeyAt key_at, int n, PathCache &cache, int known_same = 0);
  uint64_t table_full() const { return full_.load(std::memory_order_relaxed); }
  // Changes when every id is forgotten (reset()).
  uint64_t generation() const { return generation_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    std::atomic<uint32_t> state;  // 0 empty, 1 being filled, 2 ready
    uint64_t parent;
    FrameKey key;
    uint64_t id;
  };
  static constexpr int kTiers = 13;
  static constexpr int kFirstTierBits = 8;  // tier t holds 2^(8 + t) slots
  static constexpr size_t tier_size(int t) { return size_t(1) << (kFirstTierBits + t); }
  static constexpr size_t tier_start(int t) { return tier_size(t) - tier_size(0); }
  static constexpr size_t kCapacity = (size_t(1) << (kFirstTierBits + kTiers)) - (size_t(1) << kFirstTierBits);
  static constexpr int kProbes = 64;

  uint64_t lookup_or_add(uint64_t parent, const FrameKey &key);
  // Claims a slot for the node in tier t and fills it; false when its probes found none.
  bool add_in_tier(int t, uint64_t hash, uint64_t parent, const FrameKey &key, uint64_t id);
  // New nodes go to tier t or a later one from now on.
  void raise_tier(int t);
  // Forgets the cached path if the table was reset since it was filled.
  void check_generation(PathCache &cache) const;
  static uint64_t mix(uint64_t parent, const FrameKey &k) {
    uint64_t h = parent * 0x9E3779B97F4A7C15ull ^ k.a * 0xC2B2AE3D27D4EB4Full ^ k.b;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
  }

  EventRing *ring_ = nullptr;
  Entry *table_ = nullptr;
  std::atomic<int> tier_{0};  // where new nodes go
  std::atomic<uint64_t> tier_nodes_[kTiers] = {};
  std::atomic<uint64_t> next_id_{1};
  std::atomic<uint64_t> full_{0};
  std::atomic<uint64_t> generation_{1};
};

template <class KeyAt>
uint64_t StackInterner::intern(KeyAt key_at, int n, PathCache &cache, int known_same) {
  if (n > PathCache::kMax) n = PathCache::kMax;
  check_generation(cache);
  // Root first: key_at(n-1) is the outermost. Reuse the common prefix.
  // (A guest's count is taken as at most what the cache and stack hold.)
  int same = known_same < cache.depth ? known_same : cache.depth;
  if (same > n) same = n;
  if (same < 0) same = 0;
  while (same < n && same < cache.depth && cache.frames[same] == key_at(n - 1 - same)) same++;
  uint64_t parent = same ? cache.ids[same - 1] : 0;
  for (int d = same; d < n; d++) {
    const FrameKey k = key_at(n - 1 - d);
    PathCache::Node &seen = cache.recent[mix(parent, k) & (PathCache::kRecent - 1)];
    if (!seen.id || seen.parent != parent || !(seen.key == k)) seen = {parent, k, lookup_or_add(parent, k)};
    parent = seen.id;
    cache.frames[d] = k;
    cache.ids[d] = parent;
  }
  cache.depth = n;
  return n ? parent : 0;
}

}  // namespace prof
