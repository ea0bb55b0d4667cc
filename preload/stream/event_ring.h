// EventRing: the single lock-free byte stream that every thread appends its
// records to, and the writer thread that moves it to the output file.
//
// Invariants:
// - append() never takes a lock and never allocates: a thread encodes its
//   record first, then reserves exactly its length with one fetch_add on the
//   global position, and copies it in. Reservation order is file order,
//   which is what keeps a free ahead of any reuse of its address (the hooks
//   record a free before calling the real free, an allocation after).
// - The solo producer: while only one program thread appends (most
//   interpreters), it reserves with a plain load and store instead of the
//   fetch_add, a locked instruction on every event. Everyone else
//   announces itself first (an asymmetric Dekker fence): it raises
//   `intruders_`, runs membarrier(PRIVATE_EXPEDITED), which puts a full
//   barrier into the solo thread wherever it runs, and waits for the solo
//   slot to be idle; from then on the solo thread, which reads `intruders_`
//   after publishing its slot, takes the fetch_add too: a second program
//   thread intrudes for good. Without membarrier, every append uses
//   fetch_add.
// - Completion without a second atomic: each thread owns a slot that says
//   "I may still be copying at or after position p" (p is read before its
//   reservation, so it is a lower bound), or "idle". Everything below the
//   head and below every slot's p is complete. Threads that find no free
//   slot share one under a spinlock.
// - The writer is a raw thread (raw_thread.h), which glibc does not count:
//   a pthread would make glibc's malloc take its multi-threaded paths in the
//   program. It only writes, with raw calls, in position order: a segment's
//   worth, and every 100 ms whatever is complete (a compressed file then
//   decodes up to there; the stream's end closes its frame). While it runs
//   it is the only one: a producer that needs room wakes it and waits.
//   finish() hands it the last record; it writes up to there, and exits.
// - The ring lives in a file beside the stream (format/ring_file.h), mapped
//   shared: a record is in the file's pages once its thread has copied it,
//   and outlives the process however it ends (exit_group past exit(), a
//   signal, kill -9, a killed PID namespace, a debugger). After each write
//   the stream file is synced and the durable point (ring position, file
//   length) set; ring bytes are free again only once durable. So are the
//   compactor's live blocks (stream_compactor.h), with an undo log of the
//   changes past the durable point. A reader of a stream whose ring file
//   remains takes the stream up to the durable point, then the ring. The
//   stream's clean end voids the file (its owner then removes it). Where
//   the file cannot be had, the ring is anonymous memory, and what the
//   program completed in the last 100 ms dies with it.
// - The tick (on_tick: time marks, write-error checks) runs on an appending
//   thread, the first append after each 100 ms (the clock is read once per
//   256 appends of a thread while a writer runs).
// - The writer starts once there is work for it: a segment's worth
//   complete, or the tick 100 ms on. A process that ends or execs sooner
//   (a shell's fork child, a short command) starts none: finish() writes
//   its few records, which the ring file kept meanwhile.
// - Without a writer (a low task limit, not x86-64), producers write: once
//   a segment's worth is complete, at each tick, and finish() up to the
//   last record.
// - When the ring is full, append() waits (flushing itself when no writer
//   runs), it never drops. After a write error the bytes are discarded
//   instead (the agent is then switched off), so a producer never waits on
//   a dead file.
// - No wait is unbounded. A reservation that is never finished (its thread
//   left the agent by longjmp out of a signal handler) is known by its slot
//   staying busy at the flushed position: once whoever flushes has seen that
//   for kStallNs of its own running time, or as soon as the owner comes back
//   (recover_abandoned_append()), the bytes are made a gap record that
//   readers skip (gap_header), and counted. A reservation whose extent was
//   not yet published ends the stream there instead (stopped_at), as does
//   a flush that makes no progress for kGiveUpNs; the agent then says so
//   and pauses, and the stream ends as an unclean one.
// - A writer stopped alone (a debugger stopping one thread) or starved
//   costs a bounded time: a producer that has waited kHelpNs for room
//   writes for it (and so do the others until the writer writes again),
//   and finish() waits for it until it has made no progress for kStallNs,
//   then writes the rest itself, or, should the writer hold the file
//   (stopped inside a write), leaves the stream to it (left_to_writer()).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ring_file.h"
#include "stream/raw_table.h"
#include "stream/raw_thread.h"

namespace prof {

class OwnedFile;

class EventRing {
 public:
  // Encodes the records that end a stream the program could not finish
  // (an unclean-end record, the stats, the epilogue) into buf, of
  // kMaxUncleanEnd bytes; returns their length. Runs on the writer: raw, as
  // raw_thread.h says.
  static constexpr size_t kMaxUncleanEnd = 1024;
  using UncleanEndFn = size_t (*)(uint8_t *buf, uint64_t lost_bytes);
  // Writes at dst (16 bytes of room) the start of what readers skip as
  // exactly `len` bytes (len >= 2), whatever the bytes after it are;
  // returns how many it wrote. Runs on the writer too: raw.
  using GapHeader = size_t (*)(uint8_t *dst, uint64_t len);
  // Maps the ring (in the file `ring_fd`, format/ring_file.h, or, when
  // that cannot be, -1 included, in memory) and starts the writer thread on
  // `file`. `on_tick` runs about every 100 ms (time marks, write-error
  // checks), on an appending thread.
  bool start(OwnedFile *file, int ring_fd, void (*on_tick)(), UncleanEndFn on_unclean_end,
             GapHeader gap_header);
  // The ring is in its file (not voided since).
  bool in_file() const { return in_file_; }
  // The time of the stream's last time mark, for a reader of the ring file.
  void note_time(uint64_t ns) {
    if (hdr_) __atomic_store_n(&hdr_[kRwTime], ns, __ATOMIC_RELAXED);
  }
  void append(const uint8_t *data, size_t len);
  // Appends a record of exactly `len` (at most kMaxInPlace) bytes that
  // encode(dst) writes straight into the ring: bytes just written byte by
  // byte and read back at once stall the CPU (failed store forwarding).
  static constexpr size_t kMaxInPlace = 256;
  template <class Encode>
  void append_in_place(size_t len, Encode &&encode) {
    if (refused()) return;
    Slot *slot;
    uint64_t end;
    uint8_t *dst = begin_append(len, &slot, &end);
    if (!slot) return;  // dropped: no slot to be had
    if (dst) {
      encode(dst);
    } else {  // the record wraps around the ring's end
      uint8_t wrapped[kMaxInPlace];
      encode(wrapped);
      copy_in(end - len, wrapped, len);
    }
    end_append(slot);
    after_append(end);
  }
  // The solo producer's shortcut: encode(dst) writes at most max_len bytes
  // (at most kMaxInPlace) straight at the head and returns how many, with no
  // sizing pass first. False, with nothing written, when this thread is not
  // the solo producer, another thread is intruding, or the bytes could wrap
  // or not fit: the caller then sizes the record for append_in_place().
  template <class Encode>
  [[gnu::always_inline]] bool append_solo(size_t max_len, Encode &&encode) {
    uint64_t pos;
    uint8_t *dst = begin_solo(max_len, &pos);
    if (!dst) return false;
    end_solo(pos + encode(dst));
    return true;
  }
  // Appends the stream's last record, writes everything reserved before it
  // (by the writer, which then exits) and returns once it is written.
  // Later appends are dropped.
  void finish(const uint8_t *data, size_t len);
  // In a forked child: forget the parent's bytes and threads and restart on
  // `file`, with the ring in the file `ring_fd` (or in memory).
  bool restart_in_child(OwnedFile *file, int ring_fd);
  // After finish(), a new stream on `file` (an agent attached again): the
  // ring is mapped anew where it was, so the threads keep their slots.
  bool restart(OwnedFile *file, int ring_fd);

  // The calling thread left an append (or a flush) half-done and is back:
  // what it reserved becomes a gap, what it held is let go.
  void recover_abandoned_append();

  bool write_failed() const { return failed_.load(std::memory_order_relaxed); }
  // The stream ended early (an abandoned reservation of unknown extent, or
  // no progress for kGiveUpNs): later records are discarded as they come.
  bool stopped() const { return stopped_at_.load(std::memory_order_relaxed) != kIdle; }
  // finish() gave up waiting for a writer that made no progress for
  // kStallNs; the writer's id then, and whether the stream was left to it
  // (it was writing: it finishes the file should it run again) or the
  // finishing thread ended it.
  bool writer_unanswered() const { return unanswered_; }
  bool left_to_writer() const { return left_to_writer_; }
  pid_t writer_tid() const { return writer_.tid(); }
  // This process is a copy of the one the ring started in, made without
  // fork() (a raw clone without CLONE_VM, which no fork handler sees), so
  // restart_in_child() never ran: the ring and its writer are the parent's.
  // (A vfork or CLONE_VM child shares the ring, and is not one.)
  bool in_unforked_copy() const {
    return own_memory_ && own_memory_->load(std::memory_order_relaxed) == 0;
  }
  // Reservations that were never finished, written as gaps (or dropped).
  uint64_t abandoned_records() const { return abandoned_.load(std::memory_order_relaxed); }
  int write_errno() const { return write_errno_; }
  uint64_t full_waits() const { return full_waits_.load(std::memory_order_relaxed); }
  // The bytes appended so far (the stream's after its opening), and the
  // file's bytes written so far (fewer when it is compressed, and short of
  // what the ring and zstd still hold).
  uint64_t stream_bytes() const { return head_ ? head_->load(std::memory_order_relaxed) : 0; }
  uint64_t file_bytes() const;
  // Threads that found every slot taken and shared the locked one.
  uint64_t shared_slot_uses() const { return shared_uses_.load(std::memory_order_relaxed); }
  // True while a solo producer appends without the fetch_add (the writer's
  // ticks aside, which intrude one record at a time).
  bool solo() const {
    return solo_.load(std::memory_order_relaxed) && !solo_ended_.load(std::memory_order_relaxed);
  }

  // A producing thread's slot (public for the thread-exit destructor).
  struct alignas(64) Slot {
    std::atomic<uint64_t> busy_from;  // kIdle, or a lower bound of where it copies
    // Once busy_from is the exact start of the reservation (stored after
    // this): its end. Not above busy_from while only the bound is known.
    // With kWritten: the solo shortcut's record, whole, ends there.
    std::atomic<uint64_t> busy_end;
    std::atomic<bool> owned;
  };
  static constexpr uint64_t kIdle = ~uint64_t(0);
  static constexpr uint64_t kWritten = uint64_t(1) << 63;
  static constexpr size_t kSlots = 1024;

 private:
  static constexpr size_t kSegSize = 1 << 16;  // the writer's usual write size
  static constexpr size_t kRingSize = size_t(1) << 22;
  // The compactor's changes in one write: each takes 20 ring bytes or more
  // (a realloc's event, 40, makes two).
  static constexpr size_t kUndoCap = kRingSize / 16;
  // The ring's bytes written into its file before it is mapped (map_ring()).
  static constexpr size_t kPrewritten = 64 * 1024;
  static constexpr size_t kPrefetchAhead = 2048;
  // Observed stall before a busy slot counts as abandoned, and before a
  // flush that cannot move counts as dead; each observation adds at most
  // kStallStepNs, so a stopped process (SIGSTOP) does not look stalled.
  static constexpr uint64_t kStallNs = 2000000000, kGiveUpNs = 10000000000,
                            kStallStepNs = 50000000;
  // A wait for room this long without progress writes for the writer.
  static constexpr uint64_t kHelpNs = 100000000;

  static int writer_main(void *self);
  bool launch();
  bool writer_running() const { return running_.load(std::memory_order_relaxed) && writer_.alive(); }
  // Starts the writer if it is due (once per stream); whether it runs.
  bool start_writer();
  void wake_writer();
  // A new stream in the mapped ring, on `file`: the last one's positions,
  // counts, flags and writer forgotten.
  void forget_stream(OwnedFile *file);
  // Maps the ring and its slots, in the file ring_fd or else in memory;
  // at `at` (replacing what is there) unless nullptr.
  bool map_ring(int ring_fd, void *at = nullptr);
  // Writes the ring file's slots, every one idle; false when it cannot.
  static bool write_idle_slots(int fd);
  void unmap_ring();
  // Appends are refused: before start(), after finish(), and in a copy of
  // the process the agent never saw forked (whose ring file is its
  // parent's), which on_tick then switches off.
  [[gnu::always_inline]] bool refused() {
    if (closed_.load(std::memory_order_relaxed)) return true;
    if (__builtin_expect(own_memory_->load(std::memory_order_relaxed) != 0, 1)) return false;
    if (on_tick_) on_tick_();
    return true;
  }
  // The bytes up to `to` are in the file: in the ring's file, the stream
  // file is synced and `to` made the durable point; then the ring's bytes
  // before it are free again.
  void written_up_to(uint64_t to);
  // The ring file says nothing more (the stream ended, or its file failed).
  void void_ring_file();
  // Writes everything up to `end`, the stream's last record, waiting
  // (bounded) for threads still copying records before it: one stuck for
  // kStallNs becomes a gap; if the stream stopped before `end`, what is
  // complete and then the unclean end. Waits up to flag_wait_ns for the
  // flushing flag (then the file stays as it is); false when it was taken
  // and flag_wait_ns is 0 (nothing done).
  bool write_last(uint64_t end, uint64_t flag_wait_ns);
  // Waits for the writer to write the last record and exit; false once it
  // has made no progress for kStallNs (it is stopped or starved).
  bool await_writer();
  void write_unclean_end(uint64_t lost_bytes);
  // An appending thread's share of the writing: the tick, and without a
  // running writer the flushes too. Inline, the countdown to the next one.
  inline void after_append(uint64_t end);
  void tick_or_flush(uint64_t end);
  Slot *claim_slot();
  // Reserves len bytes through the thread's slot (or the shared one, whose
  // lock it then holds), which it marks busy; *end: where they end. Returns
  // where to write them, or nullptr when they wrap around the ring's end.
  // *slot is nullptr when nothing was reserved (the shared slot's lock
  // stayed held for kStallNs: the record is dropped and counted).
  uint8_t *begin_append(size_t len, Slot **slot, uint64_t *end);
  // The bytes reserved are written: frees the slot.
  void end_append(Slot *slot);
  // append_solo's halves (inline: the caller's record stays in registers):
  // where to write (its position in *pos), or nullptr; then the record is
  // written up to `end`.
  inline uint8_t *begin_solo(size_t max_len, uint64_t *pos);
  inline void end_solo(uint64_t end);
  // One record copied in; returns where it ends.
  uint64_t append_copy(const uint8_t *data, size_t len);
  uint64_t reserve(Slot *slot, size_t len);
  // Copies len bytes to ring position pos, wrapping around.
  void copy_in(uint64_t pos, const uint8_t *data, size_t len);
  // The solo producer's protocol (above): start without one, or with the
  // calling thread's slot as the solo one (fork); announce another producer.
  void reset_solo(Slot *slot);
  void intrude();
  void wait_for_room(Slot *slot, uint64_t end);
  uint64_t complete() const;
  void write_out(uint64_t from, uint64_t to);
  // Writes the complete bytes (at least `min_bytes` of them, else nothing)
  // if no one else is flushing; true when it wrote something. `owner`: the
  // calling thread's slot (nullptr on the writer).
  // With sync, the file is then synced (owned_file.h): what it holds decodes.
  bool flush(size_t min_bytes, Slot *owner, bool sync = false);
  // file_->sync() or end(), unless the stream was discarded or failed.
  void sync_file(long (OwnedFile::*how)());
  // The abandoned reservation of `slot`, busy from `from`, becomes a gap
  // (or, its extent unknown, the end of the stream), and the slot idle.
  void take_over(Slot *slot, uint64_t from);
  // take_over() of every slot busy from `pinned`.
  void take_over_all(uint64_t pinned);
  // The flag holder's watch on a position that stays pinned by a busy slot.
  void watch_stall(uint64_t pinned);
  // Ends the stream at `pos`: nothing from there on is written.
  void stop_at(uint64_t pos);
  // Adds the time since *last to *seen, at most kStallStepNs.
  static void observe(uint64_t *seen, uint64_t *last);

  // Read-mostly state.
  uint8_t *ring_ = nullptr;
  uint8_t *map_ = nullptr;  // the ring file's header, slots, ring and undo log (or memory's)
  size_t map_bytes_ = 0;
  uint64_t *hdr_ = nullptr;  // its header's words (ring_file.h)
  bool in_file_ = false;
  int ring_fd_ = -1;
  // 1 in the process the ring runs in, on a page a forked copy finds zeroed.
  static constexpr size_t kPage = 4096;
  std::atomic<uint8_t> *own_memory_ = nullptr;
  // On that page too: where the compactor keeps its table (none in a copy).
  TableFile *table_file_ = nullptr;
  OwnedFile *file_ = nullptr;
  void (*on_tick_)() = nullptr;
  UncleanEndFn on_unclean_end_ = nullptr;
  GapHeader gap_header_ = nullptr;
  long file_base_ = -1;  // the file offset of ring position 0 (-1: not seekable)
  std::atomic<uint64_t> next_tick_ns_{0};  // when the next tick is due
  RawThread writer_;
  int write_errno_ = 0;
  std::atomic<bool> running_{false};
  std::atomic<bool> writer_due_{false};  // no writer yet: start_writer() makes it
  std::atomic<bool> closed_{true};
  std::atomic<bool> failed_{false};
  std::atomic<bool> discard_{false};  // after finish(): the stream has ended
  std::atomic<uint64_t> finish_at_{0};  // for the writer: the last record's end
  bool unanswered_ = false, left_to_writer_ = false;  // see writer_unanswered()
  // A producer waited kHelpNs for room: until the writer writes again,
  // producers that need room write themselves.
  std::atomic<bool> helping_{false};
  alignas(4) uint32_t writer_wake_ = 0;  // a futex word: bumped to wake the writer
  std::atomic<size_t> slots_used_{0};  // slots_[0..slots_used_) were ever claimed
  // XXX: each producer-written word on its own cache line, away from what
  // the writer thread polls, or every append stalls on a line transfer.
  std::atomic<uint64_t> *head_ = nullptr;  // bytes reserved (in the ring file's header)
  alignas(64) std::atomic<uint64_t> flushed_{0};  // bytes written (or discarded) and free again
  alignas(64) std::atomic<bool> flushing_{false};
  std::atomic<Slot *> flush_owner_{nullptr};  // the producer holding flushing_, if any
  // The flag holder's watch on a pinned position (watch_stall()).
  uint64_t stall_pos_ = kIdle, stall_seen_ns_ = 0, stall_last_ns_ = 0;
  std::atomic<uint64_t> stopped_at_{kIdle};
  std::atomic<uint64_t> abandoned_{0};
  alignas(64) std::atomic<uint64_t> full_waits_{0};
  std::atomic<uint64_t> shared_uses_{0};
  alignas(64) std::atomic<bool> shared_lock_{false};
  // Read by every append, written only when producers change.
  alignas(64) std::atomic<Slot *> solo_{nullptr};
  std::atomic<uint32_t> intruders_{0};
  std::atomic<bool> solo_ended_{false};  // a second program thread appended
  bool membarrier_ = false;  // registered for MEMBARRIER_CMD_PRIVATE_EXPEDITED
  // The threads' slots, then the shared one (slots_[kSlots]), in the ring file.
  Slot *slots_ = nullptr;
};

// The calling thread's slot (initial-exec: usable inside malloc).
extern __thread EventRing::Slot *t_ring_slot __attribute__((tls_model("initial-exec")));
// Appends this thread makes before it next reads the clock for the tick.
extern __thread unsigned t_appends_to_clock __attribute__((tls_model("initial-exec")));

void EventRing::after_append(uint64_t end) {
  if (__builtin_expect(running_.load(std::memory_order_relaxed) && t_appends_to_clock > 0, 1)) {
    t_appends_to_clock--;
    return;
  }
  tick_or_flush(end);
}

uint8_t *EventRing::begin_solo(size_t max_len, uint64_t *pos) {
  Slot *own = t_ring_slot;
  if (!own || own != solo_.load(std::memory_order_relaxed) || refused()) return nullptr;
  // reserve()'s protocol: publish a lower bound, then look for intruders;
  // with none, head_ is this thread's until the slot is idle again.
  own->busy_from.store(head_->load(std::memory_order_relaxed), std::memory_order_release);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (intruders_.load(std::memory_order_acquire) == 0) {
    *pos = head_->load(std::memory_order_relaxed);
    const size_t off = *pos % kRingSize;
    if (off + max_len <= kRingSize && *pos + max_len <= flushed_.load(std::memory_order_acquire) + kRingSize)
      return ring_ + off;
  }
  own->busy_from.store(kIdle, std::memory_order_release);
  return nullptr;
}

void EventRing::end_solo(uint64_t end) {
  // (Said first, for take_over(): a thread leaving by longjmp between the
  // two stores leaves a whole record, not one of unknown extent.)
  t_ring_slot->busy_end.store(end | kWritten, std::memory_order_relaxed);
  head_->store(end, std::memory_order_release);
  __builtin_prefetch(ring_ + (end + kPrefetchAhead) % kRingSize, 1, 3);
  t_ring_slot->busy_from.store(kIdle, std::memory_order_release);
  after_append(end);
}

}  // namespace prof
