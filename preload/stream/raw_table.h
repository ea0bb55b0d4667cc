// RawTable: an open-addressing hash table (linear probing, backward-shift
// deletion) in memory mapped with raw calls, for the ring's writer, which
// may not allocate (raw_thread.h).
//
// Invariants: at most half full: insert() grows the table first, and when
// the memory cannot be had it refuses new keys (false) while every key it
// holds stays found. Entry is a plain struct with `bool empty() const`,
// `uint64_t hash() const` and `bool same(const Entry &) const`; a zeroed
// Entry is empty.
// - Kept in a file (keep_in(): the ring file, format/ring_file.h), its
//   slots are a shared mapping of a range of it, which readers find through
//   `where` (offset, slots). A 16-byte entry is then stored with one
//   instruction, so that a process killed at any point leaves whole
//   entries: the set of them is the table's, an entry moved by erase()
//   being at most in two slots for a while.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <emmintrin.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "stream/raw_thread.h"

namespace prof {

// Where a RawTable kept in a file maps its slots: `fd` from byte `end` on
// (the file grows), published at where[0], where[1] (offset, slots). No
// file: where is nullptr. Its user's undo log (undo_cap pairs at undo, of
// which *undo_len are used) is beside it.
struct TableFile {
  int fd;
  uint64_t end;
  uint64_t *where;
  uint64_t *undo;
  uint64_t undo_cap;
  uint64_t *undo_len;
  uint64_t dev, ino;  // the file's: the program may close fd and reuse its number
  // fd still names the file.
  bool fd_names_file() const {
    struct stat st {};
    return raw_syscall3(SYS_fstat, fd, long(&st), 0) == 0 && uint64_t(st.st_dev) == dev &&
           uint64_t(st.st_ino) == ino;
  }
};

// Writes zeros over [from, from + len) of fd; false when it cannot.
inline bool write_file_zeros(int fd, uint64_t from, size_t len) {
  // XXX: one page of zeros named up to 16 times a call: the kernel's reads
  // of a 64 KiB buffer of them faulted its 16 pages in, in every process.
  static const uint8_t kZeros[4096] = {};
  iovec pages[16];
  while (len > 0) {
    size_t n = 0;
    int count = 0;
    for (; count < 16 && n < len; count++) {
      const size_t part = len - n < sizeof kZeros ? len - n : sizeof kZeros;
      pages[count] = iovec{const_cast<uint8_t *>(kZeros), part};
      n += part;
    }
    // (pwritev's high offset word is ignored on x86-64.)
    if (raw_syscall4(SYS_pwritev, fd, long(pages), long(count), long(from)) != long(n)) return false;
    from += n, len -= n;
  }
  return true;
}

// Stores two words with one instruction (16-byte aligned).
inline void store_pair(uint64_t *at, uint64_t first, uint64_t second) {
  _mm_store_si128(reinterpret_cast<__m128i *>(at),
                  _mm_set_epi64x(int64_t(second), int64_t(first)));
}

template <class Entry>
class RawTable {
 public:
  bool init(size_t capacity) {
    release();
    return remap(capacity);
  }
  void release() {
    raw_unmap(slots_, (mask_ + 1) * sizeof(Entry));
    slots_ = nullptr;
    mask_ = 0;
    used_ = 0;
    file_off_ = 0;
  }
  // Its slots from the next init() on go to `file` (nullptr, or a file
  // with no `where`: memory).
  void keep_in(TableFile *file) { file_ = file; }
  // The entry the same as `probe`, or nullptr.
  Entry *find(const Entry &probe) {
    if (!slots_) return nullptr;
    for (size_t i = probe.hash() & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].empty()) return nullptr;
      if (slots_[i].same(probe)) return &slots_[i];
    }
  }
  // Asks for the cache line where `probe` would be found (or go). (No
  // test of slots_: a prefetch never faults. GCC 12 drops a prefetch that
  // is all a branch or a function does: inlined always, called always.)
  __attribute__((always_inline)) void prefetch(const Entry &probe) const {
    __builtin_prefetch(&slots_[probe.hash() & mask_], 1);
  }
  // The entry the same as `probe`, or the empty slot where it would go,
  // after making room for one more entry; nullptr when there is none.
  Entry *find_or_room(const Entry &probe) {
    if (!slots_ || ((used_ + 1) * 2 > mask_ + 1 && !remap((mask_ + 1) * 2))) {
      return find(probe);  // full: only entries already in
    }
    size_t i = probe.hash() & mask_;
    while (!slots_[i].empty() && !slots_[i].same(probe)) i = (i + 1) & mask_;
    return &slots_[i];
  }
  // Fills the empty slot find_or_room() gave.
  void fill(Entry *slot, const Entry &e) {
    put(slot, e);
    used_++;
  }
  // Adds e (not in the table); false when the table is full and cannot grow.
  bool insert(const Entry &e) {
    Entry *slot = find_or_room(e);
    if (!slot || !slot->empty()) return false;
    fill(slot, e);
    return true;
  }
  // Removes the entry find() returned.
  void erase(Entry *at) {
    size_t hole = size_t(at - slots_);
    for (size_t i = (hole + 1) & mask_; !slots_[i].empty(); i = (i + 1) & mask_) {
      const size_t home = slots_[i].hash() & mask_;
      // Moves an entry whose home is not cyclically within (hole, i].
      if (((i - home) & mask_) >= ((i - hole) & mask_)) {
        put(&slots_[hole], slots_[i]);
        hole = i;
      }
    }
    put(&slots_[hole], Entry{});
    used_--;
  }

 private:
  static void put(Entry *at, const Entry &e) {
    if constexpr (sizeof(Entry) == 16) {
      uint64_t w[2];
      memcpy(w, &e, sizeof w);
      store_pair(reinterpret_cast<uint64_t *>(at), w[0], w[1]);
    } else {
      *at = e;
    }
  }
  void place(const Entry &e) {
    size_t i = e.hash() & mask_;
    while (!slots_[i].empty()) i = (i + 1) & mask_;
    put(&slots_[i], e);
  }
  bool in_file() const { return file_ && file_->where; }
  // Maps `bytes` more of the file (zeroed): nullptr when it cannot.
  void *map_file(size_t bytes, uint64_t *off) {
    *off = file_->end;
    // (Written, not a hole: the first store into a hole of a shared file
    // mapping costs ext4 a block allocation in the page fault: event_ring.h.)
    if (!file_->fd_names_file() || !write_file_zeros(file_->fd, *off, bytes)) return nullptr;
    const long p = raw_syscall6(SYS_mmap, 0, long(bytes), PROT_READ | PROT_WRITE, MAP_SHARED,
                                file_->fd, long(*off));
    if (p < 0 && p > -4096) return nullptr;
    file_->end += bytes;
    return reinterpret_cast<void *>(p);
  }
  // Moves every entry into a new table of `capacity` (a power of two).
  bool remap(size_t capacity) {
    const size_t bytes = capacity * sizeof(Entry);
    uint64_t off = 0;
    Entry *fresh = static_cast<Entry *>(in_file() ? map_file(bytes, &off) : raw_map(bytes));
    if (!fresh) return false;
    if (!in_file() && bytes >= kHugePage) raw_advise_huge(fresh, bytes);
    Entry *old = slots_;
    const size_t old_capacity = old ? mask_ + 1 : 0;
    const uint64_t old_off = file_off_;
    slots_ = fresh;
    mask_ = capacity - 1;
    for (size_t i = 0; i < old_capacity; i++)
      if (!old[i].empty()) place(old[i]);
    if (in_file()) {
      store_pair(file_->where, off, capacity);  // readers look here now
      file_off_ = off;
    }
    raw_unmap(old, old_capacity * sizeof(Entry));
    // (The old range's blocks go back to the file system.)
    if (old_off && file_->fd_names_file())
      raw_syscall4(SYS_fallocate, file_->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                   long(old_off), long(old_capacity * sizeof(Entry)));
    return true;
  }

  static constexpr size_t kHugePage = size_t(2) << 20;
  Entry *slots_ = nullptr;
  size_t mask_ = 0;
  size_t used_ = 0;
  TableFile *file_ = nullptr;
  uint64_t file_off_ = 0;  // where its slots are in the file (0: in memory)
};

}  // namespace prof
