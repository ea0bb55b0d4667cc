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

void StackInterner::reset() {
  // Dropping the pages gives back zeroed (empty) entries.
  madvise(table_, kCapacity * sizeof(Entry), MADV_DONTNEED);
  next_id_.store(1);
  full_.store(0);
  generation_.fetch_add(1);
}

uint64_t StackInterner::lookup_or_add(uint64_t parent, const FrameKey &key) {
  const size_t home = mix(parent, key) & (kCapacity - 1);
  for (int i = 0; i < kProbes; i++) {
    Entry &e = table_[(home + size_t(i)) & (kCapacity - 1)];
    const uint32_t st = e.state.load(std::memory_order_acquire);
    if (st == 0) break;
    if (st == 2 && e.parent == parent && e.key == key) return e.id;
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
  for (int i = 0; i < kProbes; i++) {
    Entry &e = table_[(home + size_t(i)) & (kCapacity - 1)];
    uint32_t empty = 0;
    if (!e.state.compare_exchange_strong(empty, 1, std::memory_order_acquire)) continue;
    e.parent = parent;
    e.key = key;
    e.id = id;
    e.state.store(2, std::memory_order_release);
    return id;
  }
  full_.fetch_add(1, std::memory_order_relaxed);
  return id;
}

void StackInterner::check_generation(PathCache &cache) const {
  const uint64_t gen = generation_.load(std::memory_order_relaxed);
  if (cache.generation == gen) return;
  cache.depth = 0;
  cache.generation = gen;
  for (auto &node : cache.recent) node.id = 0;
}

}  // namespace prof
