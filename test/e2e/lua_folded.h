// Lua frames in the stacks `prof-analyze folded` prints (folded_stacks.h),
// as the PUC Lua end-to-end tests check them.
#pragma once

#include <string>

#include "folded_stacks.h"

// The interpreter loop, as the analyzer names it (the adapters find it).
inline const std::string kVm = "luaV_execute";

// A Lua frame of `script` ("name (@path/script:line)" or "@path/script:line").
inline bool is_lua(const std::string &frame, const std::string &script) {
  return frame.find("/" + script + ":") != std::string::npos;
}

// Whether every run of Lua frames sits right above luaV_execute, with only
// re-entries into it (native code ending in luaV_execute) between runs.
inline bool merged_right(const FoldedStack &s, const std::string &script) {
  bool seen_lua = false;
  for (size_t i = 0; i < s.size(); i++) {
    if (!is_lua(s[i], script)) continue;
    if (i == 0) return false;
    if (!is_lua(s[i - 1], script) && s[i - 1] != kVm) return false;
    seen_lua = true;
  }
  return seen_lua;
}
