// StringTable: strings interned as dense ids, from 0, in the order they were
// first met; their bytes share one buffer.
//
// Invariants: equal strings have one id; an id's string never changes;
// memory is the strings' bytes plus 16 bytes each.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/id_table.h"

namespace prof {

class StringTable {
 public:
  uint32_t id(std::string_view s) {
    const uint64_t h = std::hash<std::string_view>()(s);
    uint32_t found = ids_.find(h, [&](uint32_t id) { return str(id) == s; });
    if (found != IdTable::kNone) return found;
    found = size();
    chars_.append(s);
    starts_.push_back(chars_.size());
    ids_.insert(h, found, [&](uint32_t id) { return std::hash<std::string_view>()(str(id)); });
    return found;
  }
  std::string_view str(uint32_t id) const {
    return std::string_view(chars_).substr(starts_[id], starts_[id + 1] - starts_[id]);
  }
  uint32_t size() const { return uint32_t(starts_.size() - 1); }

 private:
  std::string chars_;
  std::vector<uint64_t> starts_{0};
  IdTable ids_;
};

}  // namespace prof
