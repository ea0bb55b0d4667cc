// LiveHeap: the blocks alive at a point of a memory stream, by address.
//
// Invariants: several blocks may share an address (file order across threads
// can show a reuse before the free that preceded it, see format/README.md);
// take() always returns the OLDEST block at the address, which makes pairing
// exact under the agent's ordering rule. Memory is proportional to the live
// blocks only. Every operation costs at most kMaxProbe slots plus a hash-map
// lookup, whatever the addresses.
//
// Layout: one flat open-addressing table (linear probing, backward-shift
// deletion, so no tombstones pile up) holds the oldest block of each address
// within kMaxProbe slots of its home; the rare others go to side maps: the
// oldest block of an address whose probe run is full (`overflow_`), and the
// younger blocks of an address (`later_`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <new>
#include <sys/mman.h>
#include <unordered_map>
#include <utility>

namespace prof {

template <class Block>
class LiveHeap {
 public:
  static constexpr size_t kMaxProbe = 32;

  LiveHeap() { rehash(1 << 12); }
  ~LiveHeap() { release(slots_, capacity_); }
  LiveHeap(const LiveHeap &) = delete;
  LiveHeap &operator=(const LiveHeap &) = delete;
  LiveHeap &operator=(LiveHeap &&o) noexcept {
    std::swap(slots_, o.slots_);
    std::swap(capacity_, o.capacity_);
    std::swap(mask_, o.mask_);
    std::swap(used_, o.used_);
    std::swap(overflow_, o.overflow_);
    std::swap(later_, o.later_);
    std::swap(count_, o.count_);
    return *this;
  }

  // XXX: insert() and take() are inlined into the heap model's per-event
  // code, their rare paths (the side maps, growth) out of line: their calls
  // cost as much as their work.
  [[gnu::always_inline]] void insert(uint64_t addr, const Block &b) {
    count_++;
    if ((used_ + 1) * 4 > capacity_ * 3) rehash(capacity_ * 2);
    size_t i = home(addr);
    for (size_t d = 0; addr != kEmpty && d < kMaxProbe; d++, i = (i + 1) & mask_) {
      if (slots_[i].addr == addr) return insert_later(addr, b);
      if (slots_[i].addr != kEmpty) continue;
      if (!overflow_.empty()) return insert_aside(addr, b, &slots_[i]);  // it may live there
      slots_[i] = Slot{addr, b};
      used_++;
      return;
    }
    insert_aside(addr, b, nullptr);
  }

  // Removes and returns the oldest block at addr; false if none.
  [[gnu::always_inline]] bool take(uint64_t addr, Block *out) {
    size_t i = home(addr);
    for (size_t d = 0; addr != kEmpty && d < kMaxProbe; d++, i = (i + 1) & mask_) {
      if (slots_[i].addr == kEmpty) break;
      if (slots_[i].addr != addr) continue;
      *out = slots_[i].block;
      count_--;
      if (later_.empty() || !take_later(addr, &slots_[i].block)) erase_slot(i);
      return true;
    }
    return !overflow_.empty() && take_aside(addr, out);
  }

  // Starts loading the slot of addr and the next into cache (a hint; see
  // HeapModel): an insert that finds its home taken, and every take's
  // backward shift, read the next slot, on another cache line half the time.
  void prefetch(uint64_t addr) const {
    const size_t i = home(addr);
    prefetch_line(&slots_[i]);
    prefetch_line(&slots_[(i + 1) & mask_]);
  }

  uint64_t size() const { return count_; }

  // Calls fn(block) for every live block, in no order.
  template <class Fn>
  void for_each(Fn fn) const {
    for (size_t k = 0; k < capacity_; k++)
      if (slots_[k].addr != kEmpty) fn(slots_[k].block);
    for (const auto &kv : overflow_) fn(kv.second);
    for (const auto &kv : later_)
      for (const Block &b : kv.second) fn(b);
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  struct Slot {
    uint64_t addr;
    Block block;
  };

  // XXX: the home slot is the address itself (in 16-byte units): nearby
  // blocks, which allocators hand out and programs free together, share
  // cache lines of the table, where a scattering hash misses on nearly every
  // event. Clustered addresses cannot make an operation cost more than
  // kMaxProbe slots (see overflow_).
  size_t home(uint64_t addr) const { return size_t(addr >> 4) & mask_; }

  // XXX: GCC 12 found the wrappers of __builtin_prefetch pure and deleted
  // their calls: the analyzer had no prefetch instruction at all. A volatile
  // asm statement cannot be deleted.
  static void prefetch_line(const Slot *slot) {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("prefetcht0 %0" : : "m"(*slot));
#else
    __builtin_prefetch(slot);
#endif
  }

  [[gnu::noinline]] void insert_later(uint64_t addr, const Block &b) { later_[addr].push_back(b); }
  // An insert that found the side map in use (`free`: the free slot it
  // found) or no free slot within kMaxProbe (nullptr): the free slot unless
  // addr is live in the side map, else the side map.
  [[gnu::noinline]] void insert_aside(uint64_t addr, const Block &b, Slot *free) {
    if (free && !overflow_.count(addr)) {
      *free = Slot{addr, b};
      used_++;
      return;
    }
    if (!overflow_.emplace(addr, b).second) later_[addr].push_back(b);
  }
  [[gnu::noinline]] bool take_aside(uint64_t addr, Block *out) {
    auto it = overflow_.find(addr);
    if (it == overflow_.end()) return false;
    *out = it->second;
    count_--;
    if (!take_later(addr, &it->second)) overflow_.erase(it);
    return true;
  }

  // Moves the oldest younger block at addr into *out; false if none.
  [[gnu::noinline]] bool take_later(uint64_t addr, Block *out) {
    if (later_.empty()) return false;
    auto it = later_.find(addr);
    if (it == later_.end()) return false;
    *out = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) later_.erase(it);
    return true;
  }

  // Backward-shift deletion: pull later entries of the probe run into the
  // hole. No entry sits kMaxProbe or more past its home, so none that far
  // past the hole can move into it.
  void erase_slot(size_t hole) {
    size_t i = hole;
    for (;;) {
      i = (i + 1) & mask_;
      if (slots_[i].addr == kEmpty || ((i - hole) & mask_) >= kMaxProbe) break;
      const size_t h = home(slots_[i].addr);
      // Moves only entries whose home is not cyclically within (hole, i].
      if (((i - h) & mask_) >= ((i - hole) & mask_)) {
        slots_[hole] = slots_[i];
        hole = i;
      }
    }
    slots_[hole].addr = kEmpty;
    used_--;
  }

  void rehash(size_t capacity) {
    Slot *old = slots_;
    const size_t old_capacity = capacity_;
    slots_ = allocate(capacity);
    capacity_ = capacity;
    mask_ = capacity - 1;
    used_ = 0;
    for (size_t k = 0; k < old_capacity; k++) {
      if (old[k].addr == kEmpty) continue;
      size_t i = home(old[k].addr), d = 0;
      for (; d < kMaxProbe && slots_[i].addr != kEmpty; d++) i = (i + 1) & mask_;
      if (d == kMaxProbe) {
        overflow_.emplace(old[k].addr, old[k].block);
        continue;
      }
      slots_[i] = old[k];
      used_++;
    }
    release(old, old_capacity);
  }

  // XXX: a large table is touched at random on every event; on 2 MiB pages
  // (transparent huge pages, asked for with madvise) those touches miss the
  // TLB far less than on 4 KiB ones. Small tables come from the heap: mmap
  // and munmap are slow to call often.
  static constexpr size_t kHugePage = size_t(2) << 20;
  static bool huge(size_t n) { return n * sizeof(Slot) >= kHugePage; }
  static size_t mapped_bytes(size_t n) {
    return (n * sizeof(Slot) + kHugePage - 1) / kHugePage * kHugePage;
  }
  static Slot *allocate(size_t n) {
    Slot *slots;
    if (huge(n)) {
      void *p = mmap(nullptr, mapped_bytes(n), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      madvise(p, mapped_bytes(n), MADV_HUGEPAGE);
      slots = static_cast<Slot *>(p);
    } else {
      slots = static_cast<Slot *>(::operator new(n * sizeof(Slot)));
    }
    for (size_t i = 0; i < n; i++) slots[i].addr = kEmpty;
    return slots;
  }
  static void release(Slot *slots, size_t n) {
    if (!slots) return;
    if (huge(n))
      munmap(slots, mapped_bytes(n));
    else
      ::operator delete(slots);
  }

  Slot *slots_ = nullptr;
  size_t capacity_ = 0;
  size_t mask_ = 0, used_ = 0;
  std::unordered_map<uint64_t, Block> overflow_;           // see the layout above
  std::unordered_map<uint64_t, std::deque<Block>> later_;  // younger blocks, oldest first
  uint64_t count_ = 0;
};

}  // namespace prof
