#include "stream/event_ring.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ring_file.h"
#include "stream/owned_file.h"
#include "stream/raw_thread.h"

namespace prof {

namespace {

bool register_membarrier() {
  const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
         syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

pthread_key_t g_slot_key;
pthread_once_t g_slot_key_once = PTHREAD_ONCE_INIT;
EventRing *g_ring;  // the ring whose slots the threads hold

// Thread exit: the slot is free for another thread (after an append the
// thread left half-done is put right).
void release_slot(void *p) {
  auto *slot = static_cast<EventRing::Slot *>(p);
  if (g_ring && t_ring_slot == slot && slot->busy_from.load() != EventRing::kIdle)
    g_ring->recover_abandoned_append();
  if (t_ring_slot == slot) t_ring_slot = nullptr;
  slot->busy_from.store(EventRing::kIdle, std::memory_order_release);
  slot->owned.store(false, std::memory_order_release);
}
void make_slot_key() { pthread_key_create(&g_slot_key, release_slot); }

// Where the file's next byte goes, if it is ring position 0's plus the ring
// position (-1: not seekable, or transformed, where the two do not match).
long file_position(OwnedFile *file) {
  return file->transforms() ? -1 : long(lseek(file->fd(), 0, SEEK_CUR));
}

}  // namespace

bool EventRing::write_idle_slots(int fd) {
  // XXX: written, not stored through the mapping: each page of a shared
  // file mapping a store first touches costs ext4 a page_mkwrite, and the
  // slots span 17 pages, of which a process with a few threads uses two.
  static_assert(kPage % sizeof(Slot) == 0 && kRingSlotsOffset % kPage == 0, "whole pages of slots");
  constexpr size_t kPages = ((kSlots + 1) * sizeof(Slot) + kPage - 1) / kPage;
  alignas(64) uint8_t page[kPage] = {};
  for (size_t at = 0; at < kPage; at += sizeof(Slot)) memcpy(page + at, &kIdle, sizeof kIdle);
  iovec pages[kPages];
  for (iovec &v : pages) v = iovec{page, kPage};
  return raw_syscall4(SYS_pwritev, fd, long(pages), long(kPages), long(kRingSlotsOffset)) ==
         long(kPages * kPage);
}

__thread EventRing::Slot *t_ring_slot __attribute__((tls_model("initial-exec")));
__thread unsigned t_appends_to_clock __attribute__((tls_model("initial-exec")));

bool EventRing::map_ring(int ring_fd, void *at) {
  const size_t ring_off = ring_file_ring_offset(kSlots);
  const size_t bytes = ring_off + kRingSize + kUndoCap * 16;
  void *p = MAP_FAILED;
  // XXX: the first store into a hole of a shared file mapping costs ext4 a
  // block allocation in its page fault, some 2 ms (most of a short
  // process's start): the header, the slots and the ring's and undo log's
  // first pages, which every process touches, are written first (not the
  // gap between the slots and the ring, which nothing touches); the rest
  // is faulted in as the ring fills.
  if (ring_fd >= 0 && write_file_zeros(ring_fd, 0, kRingSlotsOffset) && write_idle_slots(ring_fd) &&
      write_file_zeros(ring_fd, ring_off, kPrewritten) &&
      write_file_zeros(ring_fd, ring_off + kRingSize, kPrewritten / 4) &&
      raw_syscall3(SYS_ftruncate, ring_fd, long(bytes), 0) == 0)
    p = mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | (at ? MAP_FIXED : 0), ring_fd, 0);
  in_file_ = p != MAP_FAILED;
  if (!in_file_) {
    p = mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0),
             -1, 0);
    if (p == MAP_FAILED) return false;
    raw_wipe_on_fork(p, bytes);  // a child's ring starts empty
  }
  map_ = static_cast<uint8_t *>(p);
  map_bytes_ = bytes;
  ring_fd_ = in_file_ ? ring_fd : -1;
  hdr_ = reinterpret_cast<uint64_t *>(map_);
  slots_ = reinterpret_cast<Slot *>(map_ + kRingSlotsOffset);
  head_ = reinterpret_cast<std::atomic<uint64_t> *>(&hdr_[kRwHead]);
  ring_ = map_ + ring_off;
  static_assert(sizeof(Slot) == kRingSlotBytes && kIdle == kRingSlotIdle && kWritten == kRingSlotWritten,
                "ring_file.h's slots");
  // (In the file they are idle already: a page of slots no thread uses is
  // never faulted in.)
  if (!in_file_)
    for (size_t i = 0; i <= kSlots; i++) slots_[i].busy_from.store(kIdle, std::memory_order_relaxed);
  hdr_[kRwRingBytes] = kRingSize;
  hdr_[kRwSlots] = kSlots;
  hdr_[kRwUndoCap] = kUndoCap;
  store_pair(&hdr_[kRwDurablePos], 0, file_->written());
  hdr_[kRwUndoLen] = 0;
  hdr_[kRwUndoFrom] = 0;
  hdr_[kRwVersion] = kRingFileVersion;
  // (Last: a reader takes the file for a ring file from here on.)
  __atomic_store_n(&hdr_[kRwMagic], kRingFileMagic, __ATOMIC_RELEASE);
  if (in_file_) {
    struct stat st {};
    fstat(ring_fd, &st);
    *table_file_ = TableFile{ring_fd, bytes, &hdr_[kRwTableOffset],
                             reinterpret_cast<uint64_t *>(ring_ + kRingSize), kUndoCap,
                             &hdr_[kRwUndoLen], uint64_t(st.st_dev), uint64_t(st.st_ino)};
    file_->keep_compactor_table_in(table_file_);
  }
  return true;
}

void EventRing::unmap_ring() {
  if (map_) munmap(map_, map_bytes_);
  // (Not a descriptor of the program's that took the number since.)
  if (ring_fd_ >= 0 && table_file_->fd == ring_fd_ && table_file_->fd_names_file())
    raw_syscall3(SYS_close, ring_fd_, 0, 0);
  map_ = ring_ = nullptr;
  hdr_ = nullptr;
  slots_ = nullptr;
  head_ = nullptr;
  ring_fd_ = -1;
  in_file_ = false;
}

void EventRing::void_ring_file() {
  if (!in_file_) return;
  __atomic_store_n(&hdr_[kRwEnded], 1, __ATOMIC_RELEASE);
  in_file_ = false;
}

void EventRing::written_up_to(uint64_t to) {
  if (in_file_) {
    sync_file(&OwnedFile::sync);
    if (discard_.load(std::memory_order_relaxed) || failed_.load(std::memory_order_relaxed)) {
      void_ring_file();  // the file says where it stops
    } else {
      store_pair(&hdr_[kRwDurablePos], to, file_->written());
      // (The log of the last write is void from the store above.)
      __atomic_store_n(&hdr_[kRwUndoLen], 0, __ATOMIC_RELEASE);
      __atomic_store_n(&hdr_[kRwUndoFrom], to, __ATOMIC_RELEASE);
    }
  }
  flushed_.store(to, std::memory_order_release);
}

bool EventRing::start(OwnedFile *file, int ring_fd, void (*on_tick)(), UncleanEndFn on_unclean_end,
                      GapHeader gap_header) {
  own_memory_ = static_cast<std::atomic<uint8_t> *>(raw_map(kPage));
  if (!own_memory_) return false;
  raw_wipe_on_fork(own_memory_, kPage);
  table_file_ = reinterpret_cast<TableFile *>(reinterpret_cast<uint8_t *>(own_memory_) + 64);
  file_ = file;
  if (!map_ring(ring_fd)) return false;
  own_memory_->store(1, std::memory_order_relaxed);
  file_base_ = file_position(file);
  g_ring = this;
  on_tick_ = on_tick;
  on_unclean_end_ = on_unclean_end;
  gap_header_ = gap_header;
  membarrier_ = register_membarrier();
  reset_solo(nullptr);
  return launch();
}

bool EventRing::launch() {
  discard_.store(false);
  stopped_at_.store(kIdle);
  closed_.store(false);
  finish_at_.store(0);
  running_.store(false);
  // The writer starts once there is work for it (start_writer()).
  writer_due_.store(true);
  return true;
}

bool EventRing::start_writer() {
  if (!writer_due_.exchange(false) || closed_.load()) return false;
  running_.store(true);
  // Without a raw thread (a low task limit, not x86-64) the producers write.
  if (!writer_.start(writer_main, this)) running_.store(false);
  return running_.load();
}

uint64_t EventRing::file_bytes() const {
  return file_ ? file_->written() : 0;
}

void EventRing::wake_writer() {
  __atomic_fetch_add(&writer_wake_, 1, __ATOMIC_RELEASE);
  raw_wake(&writer_wake_);
}

EventRing::Slot *EventRing::claim_slot() {
  for (size_t i = 0; i < kSlots; i++) {
    bool free = false;
    if (!slots_[i].owned.compare_exchange_strong(free, true, std::memory_order_acquire)) continue;
    slots_[i].busy_from.store(kIdle, std::memory_order_relaxed);
    // Published before this thread's first reservation (complete() reads it).
    size_t used = slots_used_.load(std::memory_order_relaxed);
    while (used < i + 1 &&
           !slots_used_.compare_exchange_weak(used, i + 1, std::memory_order_release)) {
    }
    pthread_once(&g_slot_key_once, make_slot_key);
    pthread_setspecific(g_slot_key, &slots_[i]);
    t_ring_slot = &slots_[i];
    // The first program thread to append is the solo producer; any later one
    // ends that for good.
    Slot *none = nullptr;
    if (!(membarrier_ && solo_.compare_exchange_strong(none, t_ring_slot))) {
      solo_ended_.store(true, std::memory_order_relaxed);
      intrude();
    }
    return t_ring_slot;
  }
  return nullptr;
}

void EventRing::append(const uint8_t *data, size_t len) {
  if (refused()) return;
  const uint64_t end = append_copy(data, len);
  if (end != kIdle) after_append(end);
}

uint64_t EventRing::append_copy(const uint8_t *data, size_t len) {
  Slot *slot;
  uint64_t end;
  uint8_t *dst = begin_append(len, &slot, &end);
  if (!slot) return kIdle;
  if (dst) memcpy(dst, data, len);
  else copy_in(end - len, data, len);
  end_append(slot);
  return end;
}

void EventRing::tick_or_flush(uint64_t end) {
  bool writer = running_.load(std::memory_order_relaxed);
  // A segment's worth to write: the writer's first work (or ours).
  if (!writer && end >= flushed_.load(std::memory_order_relaxed) + kSegSize &&
      !(writer_due_.load(std::memory_order_relaxed) && (writer = start_writer())))
    flush(kSegSize, t_ring_slot);
  // XXX: with a writer, the clock (a vDSO call, costly beside an append)
  // once per 256 appends of a thread.
  if (t_appends_to_clock-- > 0) return;
  t_appends_to_clock = writer ? 255 : 0;
  timespec now;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  const uint64_t ns = uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
  uint64_t due = next_tick_ns_.load(std::memory_order_relaxed);
  // One appender wins each tick; the tick's own appends find it taken.
  if (ns < due || !next_tick_ns_.compare_exchange_strong(due, ns + 100000000u)) return;
  // The program's errno is its own: the tick reads files.
  const int saved_errno = errno;
  if (due != 0 && on_tick_) on_tick_();
  errno = saved_errno;
  // The second tick (100 ms on): the writer's first work.
  if (!writer && due != 0 && writer_due_.load(std::memory_order_relaxed)) writer = start_writer();
  if (!writer) flush(1, t_ring_slot, /*sync=*/true);
}

void EventRing::reset_solo(Slot *slot) {
  solo_.store(membarrier_ ? slot : nullptr, std::memory_order_relaxed);
  intruders_.store(0, std::memory_order_relaxed);
  solo_ended_.store(false, std::memory_order_relaxed);
}

void EventRing::intrude() {
  intruders_.fetch_add(1, std::memory_order_seq_cst);
  Slot *solo = solo_.load(std::memory_order_acquire);
  if (!solo || solo == t_ring_slot) return;
  // Every store the solo thread made before its barrier is visible now, and
  // every load after it sees us: wait out an append it began before.
  syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  uint64_t seen = 0, last = raw_monotonic_ns(), was = kIdle;
  for (uint64_t busy; (busy = solo->busy_from.load(std::memory_order_acquire)) != kIdle;) {
    if (busy != was) seen = 0, was = busy;  // still appending: not stuck
    sched_yield();
    observe(&seen, &last);
    if (seen >= kStallNs) take_over(solo, busy);
  }
}

uint8_t *EventRing::begin_append(size_t len, Slot **slot, uint64_t *end) {
  Slot *own = t_ring_slot ? t_ring_slot : claim_slot();
  if (!own) {
    // (Every slot taken: other threads have long ended the solo producer.)
    shared_uses_.fetch_add(1, std::memory_order_relaxed);
    uint64_t seen = 0, last = raw_monotonic_ns();
    while (shared_lock_.exchange(true, std::memory_order_acquire)) {
      sched_yield();
      observe(&seen, &last);
      if (seen < kStallNs) continue;
      abandoned_.fetch_add(1, std::memory_order_relaxed);  // its holder may never come back
      *slot = nullptr;
      return nullptr;
    }
    own = &slots_[kSlots];
  }
  *slot = own;
  const uint64_t pos = reserve(own, len);
  *end = pos + len;
  const size_t off = pos % kRingSize;
  // The ring is larger than the caches and the writer thread read it last:
  // ask for the line a few hundred records ahead now, so that the write
  // that reaches it does not wait for it.
  __builtin_prefetch(ring_ + (off + kPrefetchAhead) % kRingSize, 1, 3);
  return len <= kRingSize - off ? ring_ + off : nullptr;
}

void EventRing::end_append(Slot *slot) {
  slot->busy_from.store(kIdle, std::memory_order_release);
  if (slot == &slots_[kSlots]) shared_lock_.store(false, std::memory_order_release);
}

uint64_t EventRing::reserve(Slot *slot, size_t len) {
  // XXX: the lower bound is stored (release) before the reservation, which
  // is a release RMW: whoever sees the reservation in head_ sees the bound.
  slot->busy_from.store(head_->load(std::memory_order_relaxed), std::memory_order_release);
  // Only a compiler fence between publishing the slot and reading
  // intruders_: an intruder's membarrier supplies the CPU's.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  uint64_t pos;
  if (slot == solo_.load(std::memory_order_relaxed) &&
      intruders_.load(std::memory_order_relaxed) == 0) {
    pos = head_->load(std::memory_order_relaxed);
    head_->store(pos + len, std::memory_order_release);
  } else {
    pos = head_->fetch_add(len, std::memory_order_acq_rel);
  }
  // The exact extent, for take_over() should this thread never finish.
  slot->busy_end.store(pos + len, std::memory_order_relaxed);
  slot->busy_from.store(pos, std::memory_order_release);
  if (pos + len > flushed_.load(std::memory_order_acquire) + kRingSize)
    wait_for_room(slot, pos + len);  // (the slot holds pos: flushing can reach it meanwhile)
  return pos;
}

void EventRing::copy_in(uint64_t pos, const uint8_t *data, size_t len) {
  const size_t off = pos % kRingSize;
  const size_t first = len < kRingSize - off ? len : kRingSize - off;
  memcpy(ring_ + off, data, first);
  memcpy(ring_, data + first, len - first);
}

// Backpressure: a bounded spin, then short naps; wakes the writer, or
// without one flushes itself when no one else does. When nothing moves for
// kGiveUpNs (a flush that never ends), the stream stops there.
void EventRing::wait_for_room(Slot *slot, uint64_t end) {
  // No writer will ever make room for a process the agent never saw forked.
  if (in_unforked_copy()) {
    stop_at(flushed_.load(std::memory_order_acquire));
    return;
  }
  full_waits_.fetch_add(1, std::memory_order_relaxed);
  uint64_t seen = 0, last = raw_monotonic_ns(), flushed = flushed_.load(std::memory_order_acquire);
  // (Once the stream has stopped, only the bytes before its end need room.)
  for (unsigned spins = 0;
       end > flushed + kRingSize && flushed < stopped_at_.load(std::memory_order_acquire); spins++) {
    if (writer_running()) wake_writer();
    // A writer that frees nothing for kHelpNs (stopped, starved) is helped:
    // this thread writes, unless the writer holds the file.
    if (seen >= kHelpNs) helping_.store(true, std::memory_order_relaxed);
    if ((!writer_running() || helping_.load(std::memory_order_relaxed)) && flush(1, slot)) {
      flushed = flushed_.load(std::memory_order_acquire);
      seen = 0;
      continue;
    }
    if (spins < 64)
      sched_yield();
    else
      raw_nap(50000);
    observe(&seen, &last);
    const uint64_t now_flushed = flushed_.load(std::memory_order_acquire);
    if (now_flushed != flushed) flushed = now_flushed, seen = 0;
    if (seen >= kGiveUpNs) stop_at(flushed);
  }
}

uint64_t EventRing::complete() const {
  uint64_t done = head_->load(std::memory_order_acquire);
  const size_t used = slots_used_.load(std::memory_order_acquire);
  for (size_t i = 0; i < used; i++) {
    const uint64_t busy = slots_[i].busy_from.load(std::memory_order_acquire);
    if (busy < done) done = busy;
  }
  const uint64_t busy = slots_[kSlots].busy_from.load(std::memory_order_acquire);
  return busy < done ? busy : done;
}

void EventRing::sync_file(long (OwnedFile::*how)()) {
  if (discard_.load(std::memory_order_relaxed) || failed_.load(std::memory_order_relaxed)) return;
  const long rc = (file_->*how)();
  if (rc < 0) {
    write_errno_ = int(-rc);
    failed_.store(true, std::memory_order_relaxed);
  }
}

void EventRing::write_out(uint64_t from, uint64_t to) {
  // Nothing past an early end of the stream.
  const uint64_t stop = stopped_at_.load(std::memory_order_acquire);
  if (to > stop) to = stop > from ? stop : from;
  while (from < to) {
    const size_t off = from % kRingSize;
    const size_t n = to - from < kRingSize - off ? to - from : kRingSize - off;
    if (!discard_.load(std::memory_order_relaxed) && !failed_.load(std::memory_order_relaxed)) {
      // Raw: this may run on the writer, which must not touch errno.
      const long rc = file_->write_all(ring_ + off, n);
      if (rc < 0) {
        write_errno_ = int(-rc);
        failed_.store(true, std::memory_order_relaxed);
      }
    }
    from += n;
  }
}

namespace {

// The calling thread's asynchronous signals held back while it lives, if
// `hold` (a fault's are not: held, the kernel would kill the process).
class AsyncSignalsHeld {
 public:
  explicit AsyncSignalsHeld(bool hold) : hold_(hold) {
    uint64_t all = ~uint64_t(0);
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS}) all &= ~(uint64_t(1) << (sig - 1));
    if (hold_) raw_syscall4(SYS_rt_sigprocmask, SIG_BLOCK, long(&all), long(&old_), 8);
  }
  ~AsyncSignalsHeld() {
    if (hold_) raw_syscall4(SYS_rt_sigprocmask, SIG_SETMASK, long(&old_), 0, 8);
  }
  AsyncSignalsHeld(const AsyncSignalsHeld &) = delete;
  AsyncSignalsHeld &operator=(const AsyncSignalsHeld &) = delete;

 private:
  const bool hold_;
  uint64_t old_ = 0;
};

}  // namespace

bool EventRing::flush(size_t min_bytes, Slot *owner, bool sync) {
  // XXX: a program's thread flushing (no writer yet, or helping it) holds
  // the compactor's and compressor's state: a handler the agent never saw
  // installed that jumps out of the flush would end the stream there
  // (recover_abandoned_append()), so its signals wait for the flush. The
  // writer blocks all of its own.
  const AsyncSignalsHeld held(owner != nullptr);
  if (flushing_.exchange(true, std::memory_order_acquire)) return false;
  flush_owner_.store(owner, std::memory_order_relaxed);
  const uint64_t from = flushed_.load(std::memory_order_relaxed);
  uint64_t to = complete();
  if (to == from && from < head_->load(std::memory_order_acquire)) {
    watch_stall(from);
    to = complete();
  }
  const bool any = to > from && to - from >= min_bytes;
  if (any) {
    write_out(from, to);
    written_up_to(to);  // (in the ring's file: synced)
  }
  if (sync && !(any && in_file_)) sync_file(&OwnedFile::sync);
  flush_owner_.store(nullptr, std::memory_order_relaxed);
  flushing_.store(false, std::memory_order_release);
  return any;
}

void EventRing::observe(uint64_t *seen, uint64_t *last) {
  const uint64_t now = raw_monotonic_ns(), step = now - *last;
  *seen += step < kStallStepNs ? step : kStallStepNs;
  *last = now;
}

void EventRing::watch_stall(uint64_t pinned) {
  if (pinned != stall_pos_) {
    stall_pos_ = pinned;
    stall_seen_ns_ = 0;
    stall_last_ns_ = raw_monotonic_ns();
    return;
  }
  observe(&stall_seen_ns_, &stall_last_ns_);
  if (stall_seen_ns_ < kStallNs) return;
  stall_pos_ = kIdle;
  take_over_all(pinned);
}

void EventRing::take_over_all(uint64_t pinned) {
  const size_t used = slots_used_.load(std::memory_order_acquire);
  for (size_t i = 0; i <= used; i++) {
    Slot *s = i < used ? &slots_[i] : &slots_[kSlots];
    if (s->busy_from.load(std::memory_order_acquire) == pinned) take_over(s, pinned);
  }
}

void EventRing::take_over(Slot *slot, uint64_t from) {
  const uint64_t said = slot->busy_end.load(std::memory_order_acquire);
  const uint64_t end = said & ~kWritten;
  // (Not yet when its bytes are still the last lap's: it was waiting for room.)
  if (end > from && end > flushed_.load(std::memory_order_acquire) + kRingSize) return;
  if ((said & kWritten) && end > from) {
    // The solo shortcut's record, whole: nothing to put right.
  } else if (end > from) {
    uint8_t header[16];
    copy_in(from, header, gap_header_(header, end - from));
    abandoned_.fetch_add(1, std::memory_order_relaxed);
  } else if (from < head_->load(std::memory_order_acquire)) {
    // Its extent unknown (left between reserving and saying where): the
    // stream cannot go past it.
    stop_at(from);
    abandoned_.fetch_add(1, std::memory_order_relaxed);
  }  // else nothing was reserved: the solo shortcut reserves as it ends
  // XXX: a thread merely stalled kStallNs in its copy would now write over
  // the gap; taking over only after so long makes that as good as never.
  if (slot->busy_from.compare_exchange_strong(from, kIdle, std::memory_order_release) &&
      slot == &slots_[kSlots])
    shared_lock_.store(false, std::memory_order_release);  // its holder is gone
}

void EventRing::stop_at(uint64_t pos) {
  uint64_t was = stopped_at_.load(std::memory_order_relaxed);
  while (pos < was && !stopped_at_.compare_exchange_weak(was, pos, std::memory_order_release)) {
  }
}

void EventRing::recover_abandoned_append() {
  Slot *own = t_ring_slot;
  if (!own) return;
  if (flush_owner_.load(std::memory_order_relaxed) == own) {
    // Left half-way through a flush: the file has what write() took. The
    // compactor's and compressor's states are unknown then: the stream ends
    // there.
    if (file_->transforms()) stop_at(flushed_.load(std::memory_order_relaxed));
    if (file_base_ >= 0) {
      const long at = long(lseek(file_->fd(), 0, SEEK_CUR));
      if (at >= file_base_ && uint64_t(at - file_base_) > flushed_.load(std::memory_order_relaxed))
        flushed_.store(uint64_t(at - file_base_), std::memory_order_release);
    }
    flush_owner_.store(nullptr, std::memory_order_relaxed);
    flushing_.store(false, std::memory_order_release);
  }
  const uint64_t busy = own->busy_from.load(std::memory_order_acquire);
  if (busy == kIdle) return;
  // The slot is needed again at once: if the lost reservation was still
  // waiting for room, wait for it here.
  const uint64_t end = own->busy_end.load(std::memory_order_acquire) & ~kWritten;
  if (end > busy && end > flushed_.load(std::memory_order_acquire) + kRingSize)
    wait_for_room(own, end);
  take_over(own, busy);
  own->busy_from.store(kIdle, std::memory_order_release);
}

int EventRing::writer_main(void *arg) {
  // A raw thread (raw_thread.h): raw calls, atomics and plain memory only.
  auto *self = static_cast<EventRing *>(arg);
  // What ps -L, top -H and debuggers show for the thread.
  static const char kName[] = "libprof-writer";
  raw_syscall3(SYS_prctl, PR_SET_NAME, long(kName), 0);
  uint64_t last = raw_monotonic_ns();
  long idle_ns = 1000000;
  for (;;) {
    const uint32_t wake = __atomic_load_n(&self->writer_wake_, __ATOMIC_ACQUIRE);
    if (const uint64_t end = self->finish_at_.load(std::memory_order_acquire)) {
      self->write_last(end, kGiveUpNs);
      return 0;
    }
    // XXX: back off while there is little to write (quiet programs): each
    // wakeup costs the program CPU time, and a producer that needs room
    // wakes the writer.
    if (self->flush(kSegSize, nullptr)) {
      self->helping_.store(false, std::memory_order_relaxed);  // it answers again
      idle_ns = 1000000;
    } else {
      raw_wait_on(&self->writer_wake_, wake, idle_ns);
      if (idle_ns < 16000000) idle_ns *= 2;
    }
    const uint64_t now = raw_monotonic_ns();
    if (now - last >= 100000000u) {
      last = now;
      // A quiet program's events reach the file within 100 ms (and, the
      // file compressed, decode from it).
      self->flush(1, nullptr, /*sync=*/true);
    }
  }
}

void EventRing::write_unclean_end(uint64_t lost_bytes) {
  uint8_t tail[kMaxUncleanEnd];
  const size_t len = on_unclean_end_ ? on_unclean_end_(tail, lost_bytes) : 0;
  if (len == 0 || discard_.load(std::memory_order_relaxed) || failed_.load(std::memory_order_relaxed))
    return;
  const long rc = file_->write_all(tail, len);
  if (rc < 0) {
    write_errno_ = int(-rc);
    failed_.store(true, std::memory_order_relaxed);
  }
}

bool EventRing::write_last(uint64_t end, uint64_t flag_wait_ns) {
  uint64_t seen = 0, last = raw_monotonic_ns();
  while (flushing_.exchange(true, std::memory_order_acquire)) {
    if (flag_wait_ns == 0) return false;
    raw_syscall3(SYS_sched_yield, 0, 0, 0);
    observe(&seen, &last);
    if (seen < flag_wait_ns) continue;
    discard_.store(true);  // a flush that never ends: the file stays as it is
    return true;
  }
  // Threads still copying records placed before the last one: what precedes
  // them is written meanwhile (they may wait for room), and a slot pinned
  // for kStallNs becomes a gap, so the file ends with the last record. If
  // the stream stopped before it: what is complete, then the unclean end.
  auto limit = [this, end] {
    const uint64_t stop = stopped_at_.load(std::memory_order_acquire);
    return end < stop ? end : stop;
  };
  for (uint64_t to = complete(); to < limit(); to = complete()) {
    if (to > flushed_.load(std::memory_order_relaxed)) {
      write_out(flushed_.load(std::memory_order_relaxed), to);
      written_up_to(to);
    }
    raw_syscall3(SYS_sched_yield, 0, 0, 0);
    watch_stall(to);
  }
  const uint64_t to = limit();
  write_out(flushed_.load(std::memory_order_relaxed), to);
  if (to < end) write_unclean_end(end - to);
  sync_file(&OwnedFile::end);
  void_ring_file();  // the stream has its end
  flushed_.store(end, std::memory_order_release);
  // Whatever late producers still copy is past the stream's end.
  discard_.store(true);
  flushing_.store(false, std::memory_order_release);
  return true;
}

void EventRing::finish(const uint8_t *data, size_t len) {
  if (closed_.exchange(true)) return;
  writer_due_.store(false);  // (a writer never started is not wanted now)
  uint64_t end = append_copy(data, len);
  if (end == kIdle) {
    // No slot to be had (the shared one's holder never came back): the
    // stream stops where it is and ends unclean, the last record lost.
    const uint64_t head = head_->load(std::memory_order_acquire);
    stop_at(head);
    end = head + len;
  }
  if (writer_running()) {
    finish_at_.store(end, std::memory_order_release);
    wake_writer();
  }
  if (running_.load() && !await_writer()) {
    // Stopped (SIGSTOP, a debugger) or starved: the program goes on. Its
    // thread writes the rest unless the writer holds the file, which it
    // then finishes should it ever run again.
    unanswered_ = true;
    running_.store(false);
    left_to_writer_ = !discard_.load() && !write_last(end, 0);
    return;
  }
  running_.store(false);
  // Without a writer (or should it have died) the finishing thread writes.
  if (!discard_.load()) write_last(end, kGiveUpNs);
}

bool EventRing::await_writer() {
  uint64_t seen = 0, last = raw_monotonic_ns(), was = flushed_.load(std::memory_order_acquire);
  while (!writer_.join_within(kStallStepNs)) {
    const uint64_t now = flushed_.load(std::memory_order_acquire);
    if (now != was) was = now, seen = 0;  // writing: not stuck
    observe(&seen, &last);
    if (seen >= kStallNs) return false;
  }
  return true;
}

void EventRing::forget_stream(OwnedFile *file) {
  shared_lock_.store(false);
  flushed_.store(0);
  flushing_.store(false);
  flush_owner_.store(nullptr);
  stall_pos_ = kIdle;
  abandoned_.store(0);
  failed_.store(false);
  full_waits_.store(0);  // the new stream's own counts
  shared_uses_.store(0);
  file_base_ = file_position(file);
  running_.store(false);
  helping_.store(false);
  unanswered_ = left_to_writer_ = false;
  writer_.forget();
}

bool EventRing::restart_in_child(OwnedFile *file, int ring_fd) {
  // The parent's ring (its file's mapping, shared) is not the child's: a
  // new one, where the parent's other threads do not exist.
  const size_t own = t_ring_slot ? size_t(t_ring_slot - slots_) : kSlots;
  unmap_ring();
  file_ = file;
  own_memory_->store(1, std::memory_order_relaxed);
  if (!map_ring(ring_fd)) {
    t_ring_slot = nullptr;
    return false;
  }
  if (own < kSlots) {
    t_ring_slot = &slots_[own];
    t_ring_slot->owned.store(true);
    pthread_setspecific(g_slot_key, t_ring_slot);
  }
  slots_used_.store(own < kSlots ? own + 1 : 0);
  forget_stream(file);  // (the parent's writer is not the child's)
  membarrier_ = register_membarrier();
  reset_solo(t_ring_slot);  // this thread is the child's only one
  return launch();
}

bool EventRing::restart(OwnedFile *file, int ring_fd) {
  // XXX: the program's threads hold their slots (t_ring_slot) from one
  // stream to the next: the new ring takes the old one's place, and their
  // claims are copied over, as is the solo producer's state.
  static bool owned[kSlots];
  for (size_t i = 0; i < kSlots; i++) owned[i] = slots_[i].owned.load(std::memory_order_acquire);
  if (ring_fd_ >= 0 && table_file_->fd == ring_fd_ && table_file_->fd_names_file())
    raw_syscall3(SYS_close, ring_fd_, 0, 0);
  ring_fd_ = -1;
  file_ = file;
  if (!map_ring(ring_fd, map_)) {
    // (The old ring may be gone: nothing may append to it.)
    closed_.store(true);
    return false;
  }
  for (size_t i = 0; i < kSlots; i++) slots_[i].owned.store(owned[i], std::memory_order_relaxed);
  // (In memory, the compactor's table too: not in the last ring's file.)
  if (!in_file_) file_->keep_compactor_table_in(nullptr);
  forget_stream(file);  // (the writer exited at finish())
  return launch();
}

}  // namespace prof
