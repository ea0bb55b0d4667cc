#include "model/call_tree.h"

#include <algorithm>

#include "model/frame_names.h"

namespace prof {

uint64_t CallTree::hash(const StoredFrame &f) {
  return mix_hash(mix_hash(uint64_t(f.function) << 32 | f.file, uint64_t(f.module) << 32 | f.line),
                  (f.addr * 8 + uint64_t(f.kind)) ^ uint64_t(f.first_line) << 40);
}

uint32_t CallTree::frame_id(const Frame &f) {
  const bool host = f.kind == Frame::Kind::Native || f.kind == Frame::Kind::Inlined;
  const StoredFrame s{strings_.id(host && !full_names_ ? short_name(f.function) : f.function), strings_.id(f.file), strings_.id(f.module), f.line,
                      f.addr, f.first_line, f.kind};
  const uint64_t h = hash(s);
  uint32_t found = frame_index_.find(h, [&](uint32_t id) { return frames_[id] == s; });
  if (found != IdTable::kNone) return found;
  found = frame_count();
  frames_.push_back(s);
  frame_index_.insert(h, found, [&](uint32_t id) { return hash(frames_[id]); });
  return found;
}

Frame CallTree::frame(uint32_t id) const {
  const StoredFrame &s = frames_[id];
  Frame f;
  f.function = strings_.str(s.function);
  f.file = strings_.str(s.file);
  f.line = s.line;
  f.module = strings_.str(s.module);
  f.addr = s.addr;
  f.first_line = s.first_line;
  f.kind = s.kind;
  return f;
}

void CallTree::path(uint32_t node, std::vector<uint32_t> &out) const {
  out.clear();
  for (; node != kRoot; node = parent(node)) out.push_back(frame_of(node));
  std::reverse(out.begin(), out.end());
}

std::vector<Frame> CallTree::frames(uint32_t node) const {
  std::vector<uint32_t> ids;
  path(node, ids);
  std::vector<Frame> out;
  out.reserve(ids.size());
  for (uint32_t id : ids) out.push_back(frame(id));
  return out;
}

}  // namespace prof
