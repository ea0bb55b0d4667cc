// StackTable: the de-duplicated stacks of a libprof stream (ext.h stack-host
// and stack-guest nodes), and the frames of a stack id, innermost first.
//
// Invariants: a node is stored once; unknown or cyclic parents end a stack
// (a hostile stream cannot make frames() loop). Memory grows with unique
// nodes only.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ext.h"

namespace prof {

struct StackFrame {
  bool guest = false;
  uint8_t frame_type = 0;  // guest: kFrameLfunc / kFrameCfunc / kFrameFfunc
  uint64_t addr = 0;       // host: return address; guest: prototype, function or ffid
  uint64_t line = 0;       // guest Lua frames
  uint32_t module_epoch = 0;  // the module map in force when the node was written
};

class StackTable {
 public:
  // Adds a stack-host or stack-guest node.
  void add(const ext::StackHost &node, uint32_t module_epoch);
  void add(const ext::StackGuest &node, uint32_t module_epoch);
  // Frames of stack `id`, innermost first, at most max_depth of them.
  void frames(uint64_t id, std::vector<StackFrame> &out, size_t max_depth = 1024) const;
  // The innermost frame of `id`, or nullptr.
  const StackFrame *top(uint64_t id) const;
  size_t size() const { return nodes_.size(); }

 private:
  struct Node {
    uint64_t parent;
    StackFrame frame;
  };
  void add_node(uint64_t id, uint64_t parent, const StackFrame &frame);
  std::unordered_map<uint64_t, Node> nodes_;
};

}  // namespace prof
