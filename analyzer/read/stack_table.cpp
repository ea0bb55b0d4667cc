#include "read/stack_table.h"

#include <algorithm>
#include <string>

#include "byte_reader.h"
#include "sysprof.h"

namespace prof {
namespace {

[[noreturn]] void refuse(uint64_t offset, const std::string &what, uint64_t id,
                         const std::string &why) {
  throw FormatError(offset, false, what + " " + std::to_string(id) + why);
}

const char *kind_name(bool guest) { return guest ? "guest" : "host"; }

}  // namespace

StackTable::StackTable() : nodes_(1, Node{0, 0, 0, 0, 0, 0, false}) {}

uint32_t StackTable::find(uint64_t id) const {
  if (id < dense_.size() && dense_[id]) return dense_[id] >> 1;
  if (id == 0 || sparse_.empty()) return 0;
  auto it = sparse_.find(id);
  return it == sparse_.end() ? 0 : it->second;
}

void StackTable::check_node(uint64_t id, uint64_t parent, uint32_t up, const StackFrame &f,
                            uint64_t offset) const {
  // XXX: messages are built only on failure: this runs for every node.
  const char *node = "stack node";
  if (id == 0) throw FormatError(offset, false, "stack node id 0 (the empty stack)");
  if (find(id)) refuse(offset, node, id, " defined twice");
  if (id == parent) refuse(offset, node, id, " is its own parent");
  if (parent != 0 && up == 0)
    refuse(offset, node, id, ": its parent " + std::to_string(parent) + " is not defined before it");
  if (up != 0 && nodes_[up].guest != f.guest)
    refuse(offset, node, id, std::string(": a ") + kind_name(f.guest) + " node under the " +
                                 kind_name(!f.guest) + " node " + std::to_string(parent));
  if (nodes_[up].depth >= kMaxStackDepth)
    refuse(offset, node, id, " is deeper than " + std::to_string(kMaxStackDepth) + " frames");
  if (f.guest && (f.frame_type < kFrameLfunc || f.frame_type > kFrameFfunc))
    refuse(offset, node, id, ": unknown guest frame type " + std::to_string(f.frame_type));
  if (f.line > UINT32_MAX) refuse(offset, node, id, ": line " + std::to_string(f.line) + " out of range");
  if (nodes_.size() >> 31) refuse(offset, node, id, ": more than 2^31 nodes");
}

uint32_t StackTable::add(uint64_t id, uint64_t parent, const StackFrame &f, uint64_t offset) {
  const uint32_t up = find(parent);
  check_node(id, parent, up, f, offset);
  const uint32_t index = uint32_t(nodes_.size());
  nodes_.push_back(Node{f.addr, uint32_t(f.line), f.module_epoch, up,
                        uint16_t(nodes_[up].depth + 1), uint8_t(f.frame_type), f.guest});
  // XXX: the agent numbers nodes from 1, so ids stay close to the count of
  // nodes: a vector indexed by id, kept under about twice that; a stream
  // that numbers otherwise pays a hash map.
  if (id < dense_.size()) {
    dense_[id] = index << 1 | f.guest;
  } else if (id < 2 * uint64_t(nodes_.size()) + 1024) {
    dense_.resize(std::max<size_t>(size_t(id) + 1, 2 * dense_.size()));
    dense_[id] = index << 1 | f.guest;
  } else {
    sparse_.emplace(id, index);
  }
  return index;
}

uint32_t StackTable::check_slowly(uint64_t id, bool guest, uint64_t offset) const {
  const uint32_t index = find(id);
  if (index == 0) refuse(offset, std::string(kind_name(guest)) + " stack", id, " not defined");
  if (nodes_[index].guest != guest)
    refuse(offset, std::string(kind_name(guest)) + " stack", id,
           std::string(" is a ") + kind_name(!guest) + " node");
  return index;
}

}  // namespace prof
