// RawTable: an open-addressing hash table (linear probing, backward-shift
// deletion) in memory mapped with raw calls, for the ring's writer, which
// may not allocate (raw_thread.h).
//
// Invariants: at most half full: insert() grows the table first, and when
// the memory cannot be had it refuses new keys (false) while every key it
// holds stays found. Entry is a plain struct with `bool empty() const`,
// `uint64_t hash() const` and `bool same(const Entry &) const`; a zeroed
// Entry is empty.
#pragma once

#include <cstddef>
#include <cstdint>

#include "stream/raw_thread.h"

namespace prof {

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
  }
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
    *slot = e;
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
        slots_[hole] = slots_[i];
        hole = i;
      }
    }
    slots_[hole] = Entry{};
    used_--;
  }

 private:
  void place(const Entry &e) {
    size_t i = e.hash() & mask_;
    while (!slots_[i].empty()) i = (i + 1) & mask_;
    slots_[i] = e;
  }
  // Moves every entry into a new table of `capacity` (a power of two).
  bool remap(size_t capacity) {
    Entry *fresh = static_cast<Entry *>(raw_map(capacity * sizeof(Entry)));
    if (!fresh) return false;
    if (capacity * sizeof(Entry) >= kHugePage) raw_advise_huge(fresh, capacity * sizeof(Entry));
    Entry *old = slots_;
    const size_t old_capacity = old ? mask_ + 1 : 0;
    slots_ = fresh;
    mask_ = capacity - 1;
    for (size_t i = 0; i < old_capacity; i++)
      if (!old[i].empty()) place(old[i]);
    raw_unmap(old, old_capacity * sizeof(Entry));
    return true;
  }

  static constexpr size_t kHugePage = size_t(2) << 20;
  Entry *slots_ = nullptr;
  size_t mask_ = 0;
  size_t used_ = 0;
};

}  // namespace prof
