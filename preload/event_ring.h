// EventRing: the single lock-free byte stream that every thread appends its
// records to, and the writer thread that moves it to the output file.
//
// Invariants:
// - append() never takes a lock and never allocates: a thread reserves its
//   bytes with one fetch_add on the global position, copies them, and
//   commits them to the segment(s) they fall in. Reservation order is file
//   order, which is what keeps a free ahead of any reuse of its address (the
//   hooks record a free before calling the real free, an allocation after).
// - Only whole segments are written while the program runs, in position
//   order, by the writer thread; stop() writes the last partial segment once
//   every reservation in it is committed.
// - When the ring is full, append() waits for the writer (backpressure), it
//   never drops. After a write error the writer discards instead (the agent
//   is then switched off), so a producer never waits forever.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <pthread.h>

namespace prof {

class EventRing {
 public:
  // Maps the ring and starts the writer thread on `fd`. `on_tick` runs on
  // the writer thread about every 100 ms (time marks).
  bool start(int fd, void (*on_tick)());
  void append(const uint8_t *data, size_t len);
  // Drains everything appended so far and stops the writer. Later appends are
  // ignored.
  void stop();
  // In a forked child: forget the parent's bytes and restart on `fd`.
  bool restart_in_child(int fd);

  bool write_failed() const { return failed_.load(std::memory_order_relaxed); }
  int write_errno() const { return write_errno_; }
  uint64_t full_waits() const { return full_waits_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kSegSize = 1 << 16;
  static constexpr size_t kSegs = 64;
  static constexpr size_t kRingSize = kSegSize * kSegs;

  static void *writer_main(void *self);
  bool launch();
  void write_out(const uint8_t *data, size_t len);
  bool flush_full_segments();

  uint8_t *ring_ = nullptr;
  int fd_ = -1;
  void (*on_tick_)() = nullptr;
  pthread_t writer_{};
  std::atomic<uint64_t> head_{0};     // bytes reserved
  std::atomic<uint64_t> flushed_{0};  // bytes written (or discarded) and free again
  std::atomic<uint32_t> committed_[kSegs] = {};
  std::atomic<bool> running_{false};
  std::atomic<bool> closed_{true};
  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> full_waits_{0};
  int write_errno_ = 0;
};

}  // namespace prof
