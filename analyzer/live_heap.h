// LiveHeap: the blocks alive at a point of a memory stream, by address.
//
// Invariants: several blocks may share an address (file order across threads
// can show a reuse before the free that preceded it, see format/README.md);
// take() always returns the OLDEST block at the address, which makes pairing
// exact under the agent's ordering rule. Memory is proportional to the live
// blocks only.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace prof {

template <class Block>
class LiveHeap {
 public:
  void insert(uint64_t addr, const Block &b) {
    auto &slot = blocks_[addr];
    if (!slot.empty()) overlaps_++;
    slot.push_back(b);
    count_++;
  }
  // Removes and returns the oldest block at addr; false if none.
  bool take(uint64_t addr, Block *out) {
    auto it = blocks_.find(addr);
    if (it == blocks_.end()) return false;
    *out = it->second.front();
    it->second.erase(it->second.begin());
    if (it->second.empty()) blocks_.erase(it);
    count_--;
    return true;
  }
  template <class Fn>
  void for_each(Fn &&fn) const {
    for (const auto &kv : blocks_)
      for (const Block &b : kv.second) fn(kv.first, b);
  }
  uint64_t size() const { return count_; }
  // Allocations seen at an address that was already live.
  uint64_t overlaps() const { return overlaps_; }

 private:
  std::unordered_map<uint64_t, std::vector<Block>> blocks_;
  uint64_t count_ = 0;
  uint64_t overlaps_ = 0;
};

}  // namespace prof
