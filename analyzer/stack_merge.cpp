#include "stack_merge.h"

#include <cstring>

namespace prof {

// Host functions through which a VM runs guest code.
static const char *const kVmEntries[] = {
    "luaV_execute",                                    // Lua 5.x interpreter loop
    "lj_vm_call", "lj_vm_pcall", "lj_vm_cpcall",       // LuaJIT VM entries
    "lj_vm_resume", "lua_pcall", "lua_cpcall",         // LuaJIT public entries
};

bool is_vm_entry(const std::string &function) {
  for (const char *e : kVmEntries) {
    const size_t n = strlen(e);
    // "name", "name (file:line)" or LuaJIT's "name:0xaddr".
    if (function.compare(0, n, e) == 0 &&
        (function.size() == n || function[n] == ' ' || function[n] == ':'))
      return true;
  }
  return false;
}

std::vector<std::string> merge_stacks(const std::vector<NamedFrame> &host,
                                      const std::vector<NamedFrame> &guest) {
  std::vector<std::vector<std::string>> segments(1);
  for (const NamedFrame &g : guest) {
    if (g.guest_cfunc) {
      segments.emplace_back();
      continue;
    }
    segments.back().push_back(g.name);
  }
  size_t entries = 0, innermost_entry = host.size();
  for (size_t i = 0; i < host.size(); i++)
    if (is_vm_entry(host[i].name)) entries++, innermost_entry = i;

  std::vector<std::string> out;
  size_t next = 0;
  auto emit_segment = [&](size_t upto) {
    for (; next < segments.size() && next < upto; next++)
      out.insert(out.end(), segments[next].begin(), segments[next].end());
  };
  if (entries == 0) {
    for (const NamedFrame &h : host) out.push_back(h.name);
    emit_segment(segments.size());
    return out;
  }
  for (size_t i = 0; i < host.size(); i++) {
    out.push_back(host[i].name);
    if (!is_vm_entry(host[i].name)) continue;
    emit_segment(i == innermost_entry ? segments.size() : next + 1);
  }
  return out;
}

}  // namespace prof
