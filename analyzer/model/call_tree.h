// CallTree: the named stacks of a profile as one tree: a node is a frame
// (model/frame.h) called from its parent node; the root is the empty stack.
// Reports walk it instead of keeping a string or a vector of frames per
// stack, so memory follows the distinct frames and nodes, not the depth of
// every stack.
//
// Invariants: a frame (all of its fields) has one id, its strings interned
// once; host function names have their template arguments shortened
// (frame_names.h) unless full names are kept; a node's parent has a lower index; ~32 bytes a distinct frame plus
// its strings, ~16 bytes a node.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/frame.h"
#include "model/prefix_tree.h"
#include "model/string_table.h"

namespace prof {

class CallTree {
 public:
  static constexpr uint32_t kRoot = PrefixTree::kRoot;

  // Whether host functions keep their template arguments (default: no).
  void keep_full_names(bool keep) { full_names_ = keep; }

  // Frames by id.
  uint32_t frame_id(const Frame &f);
  Frame frame(uint32_t id) const;
  std::string_view function(uint32_t id) const { return strings_.str(frames_[id].function); }
  Frame::Kind kind(uint32_t id) const { return frames_[id].kind; }
  uint64_t addr(uint32_t id) const { return frames_[id].addr; }
  uint32_t frame_count() const { return uint32_t(frames_.size()); }

  // Nodes: the node of `frame` called from `node`, added if new.
  uint32_t child(uint32_t node, uint32_t frame) { return tree_.child(node, frame); }
  uint32_t parent(uint32_t node) const { return tree_.parent(node); }
  uint32_t frame_of(uint32_t node) const { return tree_.key(node); }
  uint32_t size() const { return tree_.size(); }
  const PrefixTree &tree() const { return tree_; }

  // The frame ids of a node's stack, root first, into `out`.
  void path(uint32_t node, std::vector<uint32_t> &out) const;
  // The frames of a node's stack, root first.
  std::vector<Frame> frames(uint32_t node) const;

 private:
  struct StoredFrame {
    uint32_t function, file, module, line;
    uint64_t addr;
    uint32_t first_line;
    Frame::Kind kind;
    bool operator==(const StoredFrame &o) const {
      return function == o.function && file == o.file && module == o.module && line == o.line &&
             addr == o.addr && first_line == o.first_line && kind == o.kind;
    }
  };
  static uint64_t hash(const StoredFrame &f);

  StringTable strings_;
  std::vector<StoredFrame> frames_;
  IdTable frame_index_;
  PrefixTree tree_;
  bool full_names_ = false;
};

}  // namespace prof
