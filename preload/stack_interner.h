// StackInterner: the agent's side of the de-duplicated stack table (see
// format/ext.h): maps each (parent node, frame) to a node id, writing every
// new node to the stream before any record can refer to it.
//
// Invariants: lock-free and malloc-free (an open-addressing table in
// mmap'd memory, MAP_NORESERVE, touched lazily). A new node's record is
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
// needs the shared table, whose random probes miss the cache).
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
  // Forgets every node (a forked child starts a new stream).
  void reset();
  // The id of the stack frames[0..n), innermost first; 0 for an empty stack.
  uint64_t intern(const FrameKey *frames, int n, PathCache &cache);
  uint64_t table_full() const { return full_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    std::atomic<uint32_t> state;  // 0 empty, 1 being filled, 2 ready
    uint64_t parent;
    FrameKey key;
    uint64_t id;
  };
  static constexpr size_t kCapacity = size_t(1) << 21;
  static constexpr int kProbes = 64;

  uint64_t lookup_or_add(uint64_t parent, const FrameKey &key);

  EventRing *ring_ = nullptr;
  Entry *table_ = nullptr;
  std::atomic<uint64_t> next_id_{1};
  std::atomic<uint64_t> full_{0};
  std::atomic<uint64_t> generation_{1};
};

}  // namespace prof
