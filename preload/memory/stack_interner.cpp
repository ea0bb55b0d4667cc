#include "memory/stack_interner.h"

#include <sys/mman.h>

#include "stream/event_ring.h"
#include "ext.h"
#include "stream_writer.h"

namespace prof {

bool StackInterner::init(EventRing *ring) {
  ring_ = ring;
  void *p = mmap(nullptr, kCapacity * sizeof(Entry), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  raw_wipe_on_fork(p, kCapacity * sizeof(Entry));  // a child's table starts empty (reset())
  table_ = static_cast<Entry *>(p);
  return true;
}

void StackInterner::release() {
  if (table_) munmap(table_, kCapacity * sizeof(Entry));
  table_ = nullptr;
}

void StackInterner::reset() {
  // Dropping the pages gives back zeroed (empty) entries.
  madvise(table_, kCapacity * sizeof(Entry), MADV_DONTNEED);
  tier_.store(0);
  for (auto &n : tier_nodes_) n.store(0);
  next_id_.store(1);
  full_.store(0);
  generation_.fetch_add(1);
}

uint64_t StackInterner::lookup_or_add(uint64_t parent, const FrameKey &key) {
  const uint64_t hash = mix(parent, key);
  const int newest = tier_.load(std::memory_order_acquire);
  for (int t = newest; t >= 0; t--) {
    Entry *tier = table_ + tier_start(t);
    const size_t mask = tier_size(t) - 1, home = hash & mask;
    for (int i = 0; i < kProbes; i++) {
      Entry &e = tier[(home + size_t(i)) & mask];
      const uint32_t st = e.state.load(std::memory_order_acquire);
      if (st == 0) break;
      if (st == 2 && e.parent == parent && e.key == key) return e.id;
    }
  }
  // New node: write it first, then publish it.
  const uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
  static_assert(ext::StackGuest::kMaxBytes >= ext::StackHost::kMaxBytes, "the buffer fits both");
  uint8_t buf[ext::StackGuest::kMaxBytes];
  SpanWriter out(buf);
  if (key.b & kGuestBit)
    put_ext(out, ext::StackGuest{id, parent, key.b & 3, key.a, (key.b & ~kGuestBit) >> 2});
  else
    put_ext(out, ext::StackHost{id, parent, key.a});
  ring_->append(out.data(), out.size());
  for (int t = tier_.load(std::memory_order_acquire); t < kTiers; t++) {
    if (!add_in_tier(t, hash, parent, key, id)) continue;
    // Half full: the next tier takes the new nodes (probes stay short).
    const bool half = tier_nodes_[t].fetch_add(1, std::memory_order_relaxed) + 1 >= tier_size(t) / 2;
    raise_tier(half && t + 1 < kTiers ? t + 1 : t);
    return id;
  }
  full_.fetch_add(1, std::memory_order_relaxed);
  return id;
}

void StackInterner::raise_tier(int t) {
  int was = tier_.load(std::memory_order_relaxed);
  while (was < t && !tier_.compare_exchange_weak(was, t, std::memory_order_release)) {
  }
}

bool StackInterner::add_in_tier(int t, uint64_t hash, uint64_t parent, const FrameKey &key,
                                uint64_t id) {
  Entry *tier = table_ + tier_start(t);
  const size_t mask = tier_size(t) - 1, home = hash & mask;
  for (int i = 0; i < kProbes; i++) {
    Entry &e = tier[(home + size_t(i)) & mask];
    uint32_t empty = 0;
    if (!e.state.compare_exchange_strong(empty, 1, std::memory_order_acquire)) continue;
    e.parent = parent;
    e.key = key;
    e.id = id;
    e.state.store(2, std::memory_order_release);
    return true;
  }
  return false;
}

void StackInterner::check_generation(PathCache &cache) const {
  const uint64_t gen = generation_.load(std::memory_order_relaxed);
  if (cache.generation == gen) return;
  // A cache never used is empty (zeroed memory): its pages stay untouched.
  const bool used = cache.generation != 0;
  cache.depth = 0;
  cache.generation = gen;
  if (used)
    for (auto &node : cache.recent) node.id = 0;
}

}  // namespace prof
