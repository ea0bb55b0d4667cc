#include "read/stack_table.h"

namespace prof {

void StackTable::add(const ext::StackHost &n, uint32_t module_epoch) {
  add_node(n.id, n.parent, StackFrame{false, 0, n.ip, 0, module_epoch});
}

void StackTable::add(const ext::StackGuest &n, uint32_t module_epoch) {
  add_node(
      n.id, n.parent,
      StackFrame{true, static_cast<uint8_t>(n.frame_type), n.frame_addr, n.line, module_epoch});
}

void StackTable::add_node(uint64_t id, uint64_t parent, const StackFrame &frame) {
  nodes_[id] = Node{parent, frame};
}

void StackTable::frames(uint64_t id, std::vector<StackFrame> &out, size_t max_depth) const {
  out.clear();
  // XXX: parents are written before children, so a well-formed chain only
  // decreases; the depth cap also stops a crafted cycle.
  while (id != 0 && out.size() < max_depth) {
    auto it = nodes_.find(id);
    if (it == nodes_.end()) break;
    out.push_back(it->second.frame);
    id = it->second.parent;
  }
}

const StackFrame *StackTable::top(uint64_t id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &it->second.frame;
}

}  // namespace prof
