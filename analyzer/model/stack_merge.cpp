#include "model/stack_merge.h"

#include <cstring>

namespace prof {
namespace {

enum class Entry { None, RunsLua, RunsC };

// Host functions through which a VM runs guest code.
struct VmEntry {
  const char *function;
  Entry kind;
};
const VmEntry kVmEntries[] = {
    {"luaV_execute", Entry::RunsLua},   // Lua 5.x: one interpreter loop per C boundary
    {"lj_vm_call", Entry::RunsLua},     // LuaJIT: the VM's own entries
    {"lj_vm_pcall", Entry::RunsLua},
    {"lj_vm_resume", Entry::RunsLua},
    {"lj_vm_cpcall", Entry::RunsC},
    {"lua_call", Entry::RunsLua},       // LuaJIT's public API, all a symbol table may name
    {"lua_pcall", Entry::RunsLua},
    {"lua_resume", Entry::RunsLua},
    {"lua_cpcall", Entry::RunsC},
};

Entry entry_of(const Frame &f) {
  if (f.kind == Frame::Kind::Inlined) return Entry::None;
  for (const VmEntry &e : kVmEntries)
    if (f.function == e.function) return e.kind;
  return Entry::None;
}

}  // namespace

std::vector<Frame> merge_stacks(std::vector<Frame> host, const std::vector<GuestPart> &guest) {
  std::vector<Entry> entries(host.size());
  size_t innermost = host.size();
  for (size_t i = 0; i < host.size(); i++) {
    entries[i] = entry_of(host[i]);
    // XXX: an entry called directly by the next one is the same way in.
    if (i > 0 && entries[i] != Entry::None && entries[i - 1] != Entry::None)
      entries[i - 1] = Entry::None;
  }
  for (size_t i = 0; i < host.size(); i++)
    if (entries[i] != Entry::None) innermost = i;

  std::vector<Frame> out;
  out.reserve(host.size() + guest.size());
  if (innermost == host.size()) {
    out = std::move(host);
    for (const GuestPart &g : guest) out.push_back(g.frame);
    return out;
  }
  size_t g = 0;
  for (size_t i = 0; i < host.size(); i++) {
    out.push_back(std::move(host[i]));
    if (entries[i] == Entry::RunsC) {
      if (g < guest.size() && guest[g].cfunc) g++;
    } else if (entries[i] == Entry::RunsLua) {
      while (g < guest.size() && guest[g].cfunc) g++;
      for (; g < guest.size() && !guest[g].cfunc; g++) out.push_back(guest[g].frame);
    }
    if (i != innermost) continue;
    // XXX: trailing C frames alone are the native code the host already shows.
    bool lua_left = false;
    for (size_t k = g; k < guest.size(); k++) lua_left |= !guest[k].cfunc;
    if (lua_left)
      for (; g < guest.size(); g++) out.push_back(guest[g].frame);
  }
  return out;
}

}  // namespace prof
