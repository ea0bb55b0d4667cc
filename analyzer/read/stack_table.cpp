#include "read/stack_table.h"

namespace prof {

void StackTable::add(const ExtRecord &n, uint32_t module_epoch) {
  StackFrame f;
  f.guest = n.kind == ExtKind::StackGuest;
  f.frame_type = static_cast<uint8_t>(n.frame_type);
  f.addr = n.addr;
  f.line = n.line;
  f.module_epoch = module_epoch;
  nodes_[n.id] = Node{n.parent, f};
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
