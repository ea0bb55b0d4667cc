// LiveHeap: the blocks alive at a point of a memory stream, by address.
//
// Invariants: several blocks may share an address (file order across threads
// can show a reuse before the free that preceded it, see format/README.md);
// take() always returns the OLDEST block at the address, which makes pairing
// exact under the agent's ordering rule. Memory is proportional to the live
// blocks only; the common case, one block per address, costs one map entry.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>

namespace prof {

template <class Block>
class LiveHeap {
 public:
  LiveHeap() { first_.reserve(1 << 16); }

  void insert(uint64_t addr, const Block &b) {
    auto ins = first_.emplace(addr, b);
    if (!ins.second) {
      later_[addr].push_back(b);
      overlaps_++;
    }
    count_++;
  }
  // Removes and returns the oldest block at addr; false if none.
  bool take(uint64_t addr, Block *out) {
    auto it = first_.find(addr);
    if (it == first_.end()) return false;
    *out = it->second;
    count_--;
    if (!later_.empty()) {
      auto more = later_.find(addr);
      if (more != later_.end()) {
        it->second = more->second.front();
        more->second.pop_front();
        if (more->second.empty()) later_.erase(more);
        return true;
      }
    }
    first_.erase(it);
    return true;
  }
  template <class Fn>
  void for_each(Fn &&fn) const {
    for (const auto &kv : first_) fn(kv.first, kv.second);
    for (const auto &kv : later_)
      for (const Block &b : kv.second) fn(kv.first, b);
  }
  uint64_t size() const { return count_; }
  // Allocations seen at an address that was already live.
  uint64_t overlaps() const { return overlaps_; }

 private:
  std::unordered_map<uint64_t, Block> first_;
  std::unordered_map<uint64_t, std::deque<Block>> later_;  // younger blocks, oldest first
  uint64_t count_ = 0;
  uint64_t overlaps_ = 0;
};

}  // namespace prof
