// NameTree: stacks projected onto one name per frame (the function for
// flame graphs, the label for matching stacks across streams and profiles),
// so that stacks alike by those names are one node; NameProjection maps the
// nodes of a CallTree into it.
//
// Invariants: a node is a name under its parent (PrefixTree); a projection
// names each distinct frame and maps each call-tree node once, so its cost
// follows the call tree's size, never the depth of every stack.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/call_tree.h"
#include "model/prefix_tree.h"
#include "model/string_table.h"

namespace prof {

class NameTree {
 public:
  static constexpr uint32_t kRoot = PrefixTree::kRoot;

  uint32_t name_id(std::string_view name) { return names_.id(name); }
  uint32_t child(uint32_t node, uint32_t name_id) { return tree_.child(node, name_id); }
  uint32_t child(uint32_t node, std::string_view name) { return child(node, name_id(name)); }
  std::string_view name(uint32_t node) const { return names_.str(tree_.key(node)); }
  uint32_t parent(uint32_t node) const { return tree_.parent(node); }
  uint32_t size() const { return tree_.size(); }
  const PrefixTree &tree() const { return tree_; }
  const StringTable &names() const { return names_; }

  // Each node's place when stacks are ordered by their names, root first,
  // name by name in byte order, a stack before the stacks through it.
  std::vector<uint32_t> ranks() const {
    const PrefixTree::Children children = tree_.children();
    std::vector<uint32_t> rank(size()), todo{kRoot};
    for (uint32_t next = 0; !todo.empty(); next++) {
      const uint32_t n = todo.back();
      todo.pop_back();
      rank[n] = next;
      const size_t first = todo.size();
      todo.insert(todo.end(), children.begin(n), children.end(n));
      std::sort(todo.begin() + long(first), todo.end(),
                [&](uint32_t a, uint32_t b) { return name(a) > name(b); });
    }
    return rank;
  }

 private:
  StringTable names_;
  PrefixTree tree_;
};

class NameProjection {
 public:
  using NameOf = std::string (*)(const Frame &);
  // Call-tree stacks go under the node `under` of `names`; with
  // `collapse_repeats`, a name repeated in a row (recursion) is one node.
  NameProjection(const CallTree &calls, NameTree &names, NameOf name_of, uint32_t under,
                 bool collapse_repeats = false)
      : calls_(calls), names_(names), name_of_(name_of), under_(under),
        collapse_(collapse_repeats) {}

  // The node of call-tree node `call`.
  uint32_t node(uint32_t call) {
    if (nodes_.size() < calls_.size()) nodes_.resize(calls_.size(), IdTable::kNone);
    nodes_[CallTree::kRoot] = under_;
    for (; nodes_[call] == IdTable::kNone; call = calls_.parent(call)) todo_.push_back(call);
    uint32_t at = nodes_[call];
    for (; !todo_.empty(); todo_.pop_back()) {
      const uint32_t n = name(todo_.back());
      if (!collapse_ || at == under_ || names_.tree().key(at) != n) at = names_.child(at, n);
      nodes_[todo_.back()] = at;
    }
    return at;
  }

 private:
  uint32_t name(uint32_t call) {
    const uint32_t frame = calls_.frame_of(call);
    if (frame_names_.size() <= frame) frame_names_.resize(calls_.frame_count(), IdTable::kNone);
    if (frame_names_[frame] == IdTable::kNone)
      frame_names_[frame] = names_.name_id(name_of_(calls_.frame(frame)));
    return frame_names_[frame];
  }

  const CallTree &calls_;
  NameTree &names_;
  const NameOf name_of_;
  const uint32_t under_;
  const bool collapse_;
  std::vector<uint32_t> frame_names_;  // by frame id
  std::vector<uint32_t> nodes_;        // by call-tree node
  std::vector<uint32_t> todo_;
};

}  // namespace prof
