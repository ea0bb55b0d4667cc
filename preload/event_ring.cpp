#include "event_ring.h"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <sched.h>
#include <sys/mman.h>

#include "stream_writer.h"

namespace prof {

bool EventRing::start(int fd, void (*on_tick)()) {
  ring_ = static_cast<uint8_t *>(
      mmap(nullptr, kRingSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (ring_ == MAP_FAILED) {
    ring_ = nullptr;
    return false;
  }
  fd_ = fd;
  on_tick_ = on_tick;
  return launch();
}

bool EventRing::launch() {
  closed_.store(false);
  running_.store(true);
  if (pthread_create(&writer_, nullptr, writer_main, this) != 0) {
    running_.store(false);
    closed_.store(true);
    return false;
  }
  return true;
}

void EventRing::append(const uint8_t *data, size_t len) {
  if (closed_.load(std::memory_order_relaxed)) return;
  const uint64_t pos = head_.fetch_add(len, std::memory_order_relaxed);
  // Backpressure: wait until the writer has freed the bytes we need.
  if (pos + len > flushed_.load(std::memory_order_acquire) + kRingSize) {
    full_waits_.fetch_add(1, std::memory_order_relaxed);
    // XXX: once stopped, nobody frees space: give up rather than spin forever.
    while (pos + len > flushed_.load(std::memory_order_acquire) + kRingSize)
      if (closed_.load(std::memory_order_relaxed)) return;
      else sched_yield();
  }
  uint64_t at = pos;
  while (len > 0) {
    const size_t off = at % kRingSize;
    const size_t seg_left = kSegSize - off % kSegSize;
    const size_t n = len < seg_left ? len : seg_left;
    memcpy(ring_ + off, data, n);
    committed_[off / kSegSize].fetch_add(uint32_t(n), std::memory_order_release);
    data += n;
    at += n;
    len -= n;
  }
}

void EventRing::write_out(const uint8_t *data, size_t len) {
  if (failed_.load(std::memory_order_relaxed)) return;
  if (!fd_sink(reinterpret_cast<void *>(intptr_t(fd_)), data, len)) {
    write_errno_ = errno;
    failed_.store(true, std::memory_order_relaxed);
  }
}

bool EventRing::flush_full_segments() {
  bool any = false;
  for (;;) {
    const uint64_t start = flushed_.load(std::memory_order_relaxed);
    const size_t seg = (start % kRingSize) / kSegSize;
    if (committed_[seg].load(std::memory_order_acquire) != kSegSize) return any;
    write_out(ring_ + start % kRingSize, kSegSize);
    committed_[seg].store(0, std::memory_order_relaxed);
    flushed_.store(start + kSegSize, std::memory_order_release);
    any = true;
  }
}

void *EventRing::writer_main(void *arg) {
  auto *self = static_cast<EventRing *>(arg);
  timespec last{};
  clock_gettime(CLOCK_MONOTONIC, &last);
  while (self->running_.load(std::memory_order_acquire)) {
    if (!self->flush_full_segments()) {
      timespec nap{0, 1000000};
      nanosleep(&nap, nullptr);
    }
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - last.tv_sec) * 1000000000L + (now.tv_nsec - last.tv_nsec) >= 100000000L) {
      last = now;
      if (self->on_tick_) self->on_tick_();
    }
  }
  return nullptr;
}

void EventRing::stop() {
  if (closed_.exchange(true)) return;
  running_.store(false, std::memory_order_release);
  pthread_join(writer_, nullptr);
  flush_full_segments();
  // The last partial segment: wait (bounded) until every reservation in it
  // is committed; a thread stuck longer than that loses its bytes, and the
  // file then ends before them, as a truncated stream.
  const uint64_t start = flushed_.load(), end = head_.load();
  if (end > start && end - start < kSegSize) {
    const size_t seg = (start % kRingSize) / kSegSize;
    for (int spins = 0; committed_[seg].load(std::memory_order_acquire) < end - start &&
                        spins < 100000;
         spins++)
      sched_yield();
    if (committed_[seg].load() == end - start) write_out(ring_ + start % kRingSize, end - start);
  }
}

bool EventRing::restart_in_child(int fd) {
  // The parent's threads and bytes are not ours: start from an empty ring.
  head_.store(0);
  flushed_.store(0);
  for (auto &c : committed_) c.store(0);
  failed_.store(false);
  fd_ = fd;
  return launch();
}

}  // namespace prof
