#include "cpu/slots.h"

#include <cstring>
#include <sys/mman.h>

namespace prof {

void SampleSlot::push(const uint8_t *data, size_t len) {
  const uint64_t h = head.load(std::memory_order_relaxed);
  if (h + len - tail.load(std::memory_order_acquire) > kRingBytes) {
    dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const size_t off = h % kRingBytes;
  const size_t first = len < kRingBytes - off ? len : kRingBytes - off;
  memcpy(ring + off, data, first);
  memcpy(ring, data + first, len - first);
  head.store(h + len, std::memory_order_release);
}

namespace sample_slots {
namespace {

constexpr size_t kMaxSlots = 4096;
SampleSlot *g_slots[kMaxSlots];
std::atomic<size_t> g_mapped{0};
std::atomic<bool> g_publishing{false};  // a thread is appending to g_slots

// XXX: head and tail are left as they are (equal in a free slot): the
// writer may be reading them while a thread claims the slot.
void take(SampleSlot &s, uint64_t tid) {
  s.tid = tid;
  s.perf_fd = -1;
  s.has_timer = false;
  s.last_sample_at = s.last_sample_end = 0;
}

}  // namespace

size_t mapped_count() { return g_mapped.load(std::memory_order_acquire); }
SampleSlot *at(size_t i) { return g_slots[i]; }

SampleSlot *claim(uint64_t tid) {
  for (size_t i = 0; i < mapped_count(); i++) {
    int expected = SampleSlot::Free;
    SampleSlot &s = *g_slots[i];
    if (s.state.load(std::memory_order_relaxed) != SampleSlot::Free ||
        !s.state.compare_exchange_strong(expected, SampleSlot::Live, std::memory_order_acquire))
      continue;
    take(s, tid);
    return &s;
  }
  // None free: map one more and publish it at the end of the table.
  void *p = mmap(nullptr, sizeof(SampleSlot), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto *s = static_cast<SampleSlot *>(p);
  take(*s, tid);
  s->state.store(SampleSlot::Live, std::memory_order_relaxed);
  while (g_publishing.exchange(true, std::memory_order_acquire)) {
  }
  const size_t n = g_mapped.load(std::memory_order_relaxed);
  const bool room = n < kMaxSlots;
  if (room) {
    g_slots[n] = s;
    g_mapped.store(n + 1, std::memory_order_release);
  }
  g_publishing.store(false, std::memory_order_release);
  if (!room) {
    munmap(p, sizeof(SampleSlot));
    return nullptr;
  }
  return s;
}

void release(SampleSlot *slot) { slot->state.store(SampleSlot::Free, std::memory_order_release); }

void reset_in_child() {
  g_publishing.store(false);
  for (size_t i = 0; i < mapped_count(); i++) {
    SampleSlot &s = *g_slots[i];
    take(s, 0);
    s.head.store(0, std::memory_order_relaxed);
    s.tail.store(0, std::memory_order_relaxed);
    s.dropped.store(0, std::memory_order_relaxed);
    s.state.store(SampleSlot::Free, std::memory_order_relaxed);
  }
}

}  // namespace sample_slots
}  // namespace prof
