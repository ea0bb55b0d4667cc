// SampleSlot: one sampled thread's share of the CPU sampler: its timer, the
// scratch the signal handler captures into, and a single-producer,
// single-consumer byte ring of encoded sysprof records that the stream's
// writer (stream.h) drains.
//
// Invariants:
// - The producer is the thread's own signal handler (it never nests: the
//   signal is blocked while its handler runs), the consumer whoever holds
//   the stream's writer flag. push() is lock-free and never waits: a record that does not fit
//   is dropped and counted.
// - A record is published (head) only once all its bytes are in the ring, so
//   the writer never sees half a record.
// - Slots are mmap'd once and never freed, only reused: Free -> Live
//   (claimed by a starting thread) -> Free (the exiting thread wrote out its
//   samples). A handler reaches its slot only through the thread's own TLS
//   pointer, cleared before the slot leaves Live.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>

#include "ext.h"
#include "libprof.h"
#include "signal_unwind.h"
#include "sysprof.h"

namespace prof {

struct SampleSlot {
  static constexpr size_t kMaxHostFrames = 1024;
  static constexpr size_t kMaxGuestFrames = 256;
  // The largest record: a weight, a VM state, then a sample with every frame
  // at its widest.
  static constexpr size_t kMaxRecord = ext::Weight::kMaxBytes + ext::VmState::kMaxBytes +
                                       max_sample_bytes(kMaxGuestFrames, kMaxHostFrames);
  static constexpr size_t kRingBytes = size_t(1) << 18;
  // The handler writes its samples out past this (stream.h).
  static constexpr size_t kFlushBytes = kRingBytes / 4;
  enum State : int { Free, Live };

  std::atomic<int> state;
  uint64_t tid;
  // The thread's timer (timer.h): a perf event fd or a POSIX timer.
  int perf_fd;
  uint64_t perf_id;  // the event's id (PERF_EVENT_IOC_ID): that it is still ours
  bool has_timer;
  timer_t timer;
  uint64_t weighed_cpu_ns;  // the thread CPU time its weights cover
  std::atomic<uint64_t> head, tail;  // bytes published, bytes drained
  std::atomic<uint64_t> dropped;     // records that found the ring full
  SignalWalkCache walk;  // the handler's unwinding state, set at registration
  // The handler's scratch.
  uint64_t ips[kMaxHostFrames];
  prof_guest_frame guest[kMaxGuestFrames];
  uint8_t record[kMaxRecord];
  size_t last_sample_at, last_sample_end;  // the last sample in `record` (0, 0: none)
  uint8_t ring[kRingBytes];

  // In the handler: appends a record or counts it dropped.
  void push(const uint8_t *data, size_t len);
  // In the writer: hands the published bytes to emit(ptr, len) (in at most
  // two pieces, the ring wrapping) and frees them.
  template <class Fn>
  void drain(Fn &&emit) {
    const uint64_t h = head.load(std::memory_order_acquire), t = tail.load(std::memory_order_relaxed);
    if (h == t) return;
    const size_t off = t % kRingBytes, len = h - t;
    const size_t first = len < kRingBytes - off ? len : kRingBytes - off;
    emit(ring + off, first);
    if (len > first) emit(ring, len - first);
    tail.store(h, std::memory_order_release);
  }
};

// The table of slots, shared by every sampled thread and the writer.
namespace sample_slots {

// Claims a slot for the calling thread (not in signal context); nullptr when
// the table is full or mmap fails.
SampleSlot *claim(uint64_t tid);
// The thread is gone and its samples written: the slot is free again.
void release(SampleSlot *slot);
// Every slot ever mapped, in order: fn(slot). Used by the writer and at
// shutdown; slots may change state while it runs.
template <class Fn>
void for_each(Fn &&fn);
// In a forked child: only the calling thread survives; every slot is Free.
void reset_in_child();

size_t mapped_count();
SampleSlot *at(size_t i);

template <class Fn>
void for_each(Fn &&fn) {
  const size_t n = mapped_count();
  for (size_t i = 0; i < n; i++) fn(*at(i));
}

}  // namespace sample_slots
}  // namespace prof
