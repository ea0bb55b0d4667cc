// StackHistory: the live bytes of one stream's stacks at the heap's kept
// points (checkpoints), written sparsely while the stream is read, so that
// once its largest stacks are known (at its end) the split of the heap by
// stack at any kept point can be replayed (heaptrack's "consumed" view).
//
// Invariants:
// - An entry is written at a checkpoint only for a stack whose charted
//   value changed since the checkpoint before: its live bytes, or 0 while
//   it holds less than 1/kFloor of the stream's peak so far (a band too thin
//   to see). A checkpoint thus adds at most 2 x kFloor entries, whatever the
//   number of stacks or events.
// - touch() is the per-event cost: one flag test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace prof {

class StackHistory {
 public:
  static constexpr double kFloor = 256;

  struct Entry {
    uint64_t events;  // the stream's events read at the checkpoint
    uint32_t stack;
    double bytes;     // its charted value from then on
  };

  // Forgets the stream before.
  void clear();

  // Stack `stack`'s live bytes changed.
  void touch(uint32_t stack) {
    if (stack >= touched_.size()) touched_.resize(size_t(stack) + 1, 0);
    if (touched_[stack]) return;
    touched_[stack] = 1;
    dirty_.push_back(stack);
  }

  // A kept point after `events` events: writes the stacks touched since the
  // last one, `live_bytes(stack)` giving their bytes now.
  template <class LiveBytes>
  void checkpoint(uint64_t events, double peak, LiveBytes live_bytes) {
    for (uint32_t stack : dirty_) {
      touched_[stack] = 0;
      const double bytes = live_bytes(stack);
      record(events, stack, bytes * kFloor >= peak ? bytes : 0);
    }
    dirty_.clear();
  }

  // In the order written: by events, then stack order of touching.
  const std::vector<Entry> &entries() const { return entries_; }

 private:
  void record(uint64_t events, uint32_t stack, double bytes);

  std::vector<uint8_t> touched_;   // by stack id: in dirty_
  std::vector<uint32_t> dirty_;
  std::vector<double> charted_;    // by stack id: its last entry's bytes
  std::vector<Entry> entries_;
};

}  // namespace prof
