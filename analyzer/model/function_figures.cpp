#include "model/function_figures.h"

#include <algorithm>
#include <map>

#include "model/frame_names.h"
#include "model/string_table.h"
#include "read/symbolizer.h"

namespace prof {

namespace {

void add(MemoryFigures &to, const StackStats &s) {
  to.alloc_bytes += s.alloc_bytes;
  to.alloc_count += s.alloc_count;
  to.leaked_bytes += s.live_bytes;
  to.peak_bytes += s.peak_bytes;
}

// The rows' names, and the frames of each stack as row names, innermost
// first, allocator frames folded as Profile::node folds them.
class FunctionNames {
 public:
  FunctionNames(Profile &profile, bool by_line) : profile_(profile), by_line_(by_line) {}

  const StringTable &names() const { return names_; }

  // The row names of stack `id`'s frames, innermost first, into `out`.
  void stack(uint32_t id, std::vector<uint32_t> &out) {
    out.clear();
    const StackKey &key = profile_.stack_key(id);
    StreamContext &ctx = *profile_.streams()[key.file];
    if (key.site || key.guest || !ctx.host_frames_plain()) {
      // Guest frames spliced in: the named stack's frames (few stacks).
      // A guest allocation is the innermost guest frame's (a Lua function,
      // or a C function Lua called: string.rep): the VM's frames above it
      // allocate on its behalf, folded in as the allocator's are.
      const CallTree &calls = profile_.calls();
      bool guest = false;
      for (uint32_t n = profile_.node(id); n != CallTree::kRoot; n = calls.parent(n)) {
        const uint32_t frame = calls.frame_of(n);
        if (!guest && calls.kind(frame) == Frame::Kind::Guest) {
          guest = true;
          out.clear();
        }
        out.push_back(of_call_frame(frame));
      }
      return;
    }
    // XXX: a host stack's frames are named node by node of its stream's
    // stack table (4 bytes a node), not into the call tree: naming every
    // stack there would cost far more than the figures of a stack.
    std::vector<uint32_t> &lists = node_lists_[key.file];
    if (lists.size() < ctx.stacks.size()) lists.resize(ctx.stacks.size(), IdTable::kNone);
    for (uint32_t h = key.host; h != 0; h = ctx.stacks.parent(h)) {
      if (lists[h] == IdTable::kNone) lists[h] = list_of(ctx, ctx.stacks.frame(h));
      const std::vector<uint32_t> &l = lists_[lists[h]];
      out.insert(out.end(), l.rbegin(), l.rend());  // a list is outermost first
    }
    // The allocator's frames at the leaf go, unless that leaves none.
    size_t skip = 0;
    while (skip + 1 < out.size() && (out[skip] & kAllocator)) skip++;
    out.erase(out.begin(), out.begin() + long(skip));
    for (uint32_t &name : out) name &= ~kAllocator;
  }

 private:
  static constexpr uint32_t kAllocator = 1u << 31;  // in a list: the allocator's frame

  uint32_t name_id(const Frame &f) {
    if (f.kind == Frame::Kind::Unknown) return names_.id("[unknown]");  // as heaptrack_print
    return names_.id(by_line_ ? f.label() : function_name(f));
  }
  uint32_t of_call_frame(uint32_t frame) {
    if (call_names_.size() <= frame) call_names_.resize(profile_.calls().frame_count(), IdTable::kNone);
    if (call_names_[frame] == IdTable::kNone) call_names_[frame] = name_id(profile_.calls().frame(frame));
    return call_names_[frame];
  }
  // The row names of a host node's frames (its function, then those inlined
  // into it), as host_frames() names them into the call tree; kAllocator
  // marks the allocator's.
  uint32_t list_of(StreamContext &ctx, const StackFrame &node) {
    list_.clear();
    for (Frame f : ctx.symbolizer.frames(node.addr, node.module_epoch)) {
      if (f.function == kAgentFrame) continue;  // transparent, as in stack_node()
      const bool host = f.kind == Frame::Kind::Native || f.kind == Frame::Kind::Inlined;
      if (host && !profile_.full_names()) f.function = short_name(f.function);
      list_.push_back(name_id(f) | (host && is_allocator_function(f.function) ? kAllocator : 0));
    }
    const auto it = list_ids_.emplace(list_, uint32_t(lists_.size())).first;
    if (it->second == lists_.size()) lists_.push_back(list_);
    return it->second;
  }

  Profile &profile_;
  const bool by_line_;
  StringTable names_;
  std::vector<uint32_t> call_names_;  // by call-tree frame id
  std::map<uint32_t, std::vector<uint32_t>> node_lists_;  // by stream: by stack-table index
  std::vector<std::vector<uint32_t>> lists_;
  std::map<std::vector<uint32_t>, uint32_t> list_ids_;
  std::vector<uint32_t> list_;
};

}  // namespace

FunctionTables memory_by_function(Profile &profile, bool by_line, size_t top) {
  const std::vector<StackStats> &stacks = profile.memory().stacks();
  FunctionNames names(profile, by_line);
  std::vector<MemoryFigures> self, total;  // by name id
  std::vector<uint32_t> counted_in;  // by name id: the last stack counted in its total, + 1
  std::vector<uint32_t> frames;
  for (uint32_t id = 0; id < stacks.size(); id++) {
    const StackStats &s = stacks[id];
    if (s.allocs == 0) continue;  // the mmap domain's
    names.stack(id, frames);
    if (frames.empty()) continue;
    const uint32_t count = names.names().size();
    if (self.size() < count) {
      self.resize(count);
      total.resize(count);
      counted_in.resize(count);
    }
    add(self[frames.front()], s);
    // A function recurring on a stack counts once in its total.
    for (uint32_t name : frames) {
      if (counted_in[name] == id + 1) continue;
      counted_in[name] = id + 1;
      add(total[name], s);
    }
  }
  auto tops = [&](const std::vector<MemoryFigures> &by) {
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < by.size(); i++)
      if (by[i].alloc_bytes > 0 || by[i].alloc_count > 0) order.push_back(i);
    auto before = [&](uint32_t a, uint32_t b) {
      return by[a].alloc_bytes != by[b].alloc_bytes ? by[a].alloc_bytes > by[b].alloc_bytes
                                                    : names.names().str(a) < names.names().str(b);
    };
    const size_t n = std::min(top, order.size());
    std::partial_sort(order.begin(), order.begin() + long(n), order.end(), before);
    std::vector<FunctionFigures> out;
    for (size_t i = 0; i < n; i++)
      out.push_back({std::string(names.names().str(order[i])), self[order[i]], total[order[i]]});
    return out;
  };
  return {tops(self), tops(total)};
}

}  // namespace prof
