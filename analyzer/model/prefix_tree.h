// PrefixTree: stacks as a tree of nodes, each a key (a frame, a name: an id
// its owner gives meaning to) under its parent; node 0 is the root, the
// empty stack. The call tree of a profile, the folded names of flame graphs
// and the labels that match stacks across streams are all one.
//
// Invariants: a (parent, key) pair is one node; a node's index is above its
// parent's (nodes are only added); 8 bytes a node plus its IdTable slots.
#pragma once

#include <cstdint>
#include <vector>

#include "model/id_table.h"

namespace prof {

class PrefixTree {
 public:
  static constexpr uint32_t kRoot = 0;

  // The node for `key` under `parent`, added if new.
  uint32_t child(uint32_t parent, uint32_t key) {
    const uint64_t h = mix_hash(parent, key);
    uint32_t found = index_.find(h, [&](uint32_t n) {
      return nodes_[n].parent == parent && nodes_[n].key == key;
    });
    if (found != IdTable::kNone) return found;
    found = size();
    nodes_.push_back(Node{parent, key});
    index_.insert(h, found, [&](uint32_t n) { return mix_hash(nodes_[n].parent, nodes_[n].key); });
    return found;
  }
  uint32_t parent(uint32_t node) const { return nodes_[node].parent; }
  uint32_t key(uint32_t node) const { return nodes_[node].key; }
  uint32_t size() const { return uint32_t(nodes_.size()); }

  // The children of every node, in the order they were added.
  struct Children {
    std::vector<uint32_t> start, list;  // node n's: list[start[n] .. start[n + 1])
    const uint32_t *begin(uint32_t n) const { return list.data() + start[n]; }
    const uint32_t *end(uint32_t n) const { return list.data() + start[n + 1]; }
  };
  Children children() const {
    Children c;
    c.start.assign(nodes_.size() + 1, 0);
    for (uint32_t n = 1; n < size(); n++) c.start[nodes_[n].parent + 1]++;
    for (size_t n = 1; n < c.start.size(); n++) c.start[n] += c.start[n - 1];
    c.list.resize(nodes_.size() > 0 ? nodes_.size() - 1 : 0);
    std::vector<uint32_t> next(c.start.begin(), c.start.end() - 1);
    for (uint32_t n = 1; n < size(); n++) c.list[next[nodes_[n].parent]++] = n;
    return c;
  }

 private:
  struct Node {
    uint32_t parent, key;
  };
  std::vector<Node> nodes_{Node{IdTable::kNone, IdTable::kNone}};
  IdTable index_;
};

}  // namespace prof
