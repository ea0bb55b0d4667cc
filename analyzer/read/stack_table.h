// StackTable: the de-duplicated stacks of a libprof stream (ext.h stack-host
// and stack-guest nodes), stored by dense index: index 0 is the empty stack,
// a node's index is its rank among the stream's nodes, from 1.
//
// Invariants:
// - What the stream may not say is refused with a FormatError at the
//   record's offset, so the table is always a forest of host and guest trees
//   at most kMaxStackDepth deep: a node id is defined once and is not 0; its
//   parent is 0 or a node of its own kind defined before it (which also rules
//   out a node being its own parent, and every cycle); a guest node's frame
//   type is known and its line below 2^32; records name defined stacks of
//   the right kind (check()).
// - Memory: 24 bytes a node, plus 4 a node id while ids stay dense (the
//   agent numbers nodes from 1); sparse ids go to a hash map. At most 2^31
//   nodes.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace prof {

// The format's limit on stack depth (format/README.md), for tables too.
constexpr uint32_t kMaxStackDepth = 4096;

struct StackFrame {
  uint64_t addr = 0;          // host: return address; guest: prototype, function or ffid
  uint64_t line = 0;          // guest Lua frames (the table holds them below 2^32)
  uint64_t frame_type = 0;    // guest: kFrameLfunc / kFrameCfunc / kFrameFfunc
  uint32_t module_epoch = 0;  // the module map in force when the node was written
  bool guest = false;
};

class StackTable {
 public:
  StackTable();

  // Adds node `id` (a record at `offset`) under `parent`; returns its index.
  uint32_t add(uint64_t id, uint64_t parent, const StackFrame &frame, uint64_t offset);
  // The index of stack `id` (0 for 0), which a record at `offset` names as
  // a host (guest) stack; throws a FormatError if the stream never defined
  // it, or it is of the other kind.
  uint32_t check(uint64_t id, bool guest, uint64_t offset) const {
    // XXX: inline, and read from the id vector alone: `report` checks every event.
    if (id == 0) return 0;
    if (id < dense_.size() && dense_[id] && (dense_[id] & 1) == guest) return dense_[id] >> 1;
    return check_slowly(id, guest, offset);
  }

  uint32_t parent(uint32_t index) const { return nodes_[index].parent; }
  StackFrame frame(uint32_t index) const {
    const Node &n = nodes_[index];
    return StackFrame{n.addr, n.line, n.frame_type, n.module_epoch, n.guest};
  }
  // Nodes, the empty stack included.
  uint32_t size() const { return uint32_t(nodes_.size()); }

 private:
  struct Node {
    uint64_t addr;
    uint32_t line, module_epoch, parent;
    uint16_t depth;
    uint8_t frame_type;
    bool guest;
  };
  uint32_t find(uint64_t id) const;  // 0: not defined
  uint32_t check_slowly(uint64_t id, bool guest, uint64_t offset) const;
  void check_node(uint64_t id, uint64_t parent, uint32_t up, const StackFrame &f,
                  uint64_t offset) const;

  std::vector<Node> nodes_;
  std::vector<uint32_t> dense_;  // id -> index << 1 | guest, 0 if none
  std::unordered_map<uint64_t, uint32_t> sparse_;
};

}  // namespace prof
