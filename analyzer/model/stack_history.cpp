#include "model/stack_history.h"

namespace prof {

void StackHistory::clear() {
  for (uint32_t stack : dirty_) touched_[stack] = 0;
  dirty_.clear();
  charted_.clear();
  entries_.clear();
}

void StackHistory::record(uint64_t events, uint32_t stack, double bytes) {
  if (stack >= charted_.size()) charted_.resize(size_t(stack) + 1, 0);
  if (charted_[stack] == bytes) return;
  charted_[stack] = bytes;
  entries_.push_back(Entry{events, stack, bytes});
}

}  // namespace prof
