// Splicing a guest VM's stack into the host stack that runs it.
//
// The rule, one table (kVmEntries in stack_merge.cpp) and three lines:
// - The guest stack, root first, is a sequence of Lua frames (Lua and fast
//   functions) and C frames (calls out of the VM into native code, which the
//   host stack shows itself, with file and line).
// - Walking the host stack root first, each host frame that is a VM entry
//   receives guest frames right above it: an entry that runs Lua code
//   (luaV_execute, lj_vm_call, lua_pcall, ...) skips the guest C frames and
//   takes the next run of Lua frames; an entry that runs a C function
//   (lua_cpcall, lj_vm_cpcall) skips one guest C frame and takes nothing;
//   LuaJIT's VM (lj_vm: each of its frames runs Lua, then calls at most one
//   C function; lua_cpcall's runs no Lua) takes the next run of Lua frames,
//   then skips the one guest C frame after it (its adapter marks native
//   code re-entering the VM with a C frame where no C function is on the
//   guest stack).
//   Entries that call each other directly (lua_pcall -> lj_vm_pcall) count
//   once, at the innermost of them.
// - Guest frames left over go above the innermost entry, C frames included:
//   trailing C frames are the native functions the Lua code called, named
//   as Lua names them (string.rep) above the host frames that run them.
// - With no entry on the host stack (a VM missing from the table, or a
//   truncated host stack) the whole guest stack goes above the innermost
//   host frame.
// - A guest stack cut at its depth limit (its root frame the cut frame,
//   format/sysprof.h) lacks its outermost runs: the rule is then read from
//   the innermost entry outwards, and the entries beyond its runs get none.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/frame.h"

namespace prof {

struct GuestPart {
  Frame frame;
  bool cfunc = false;  // a call out of the VM into native code
};

// Host and guest frames root first; returns the merged stack, root first.
std::vector<Frame> merge_stacks(std::vector<Frame> host, const std::vector<GuestPart> &guest,
                                bool guest_cut);

// The same rule for stacks known by other means (frame ids of a call tree):
// what each host frame (root first) is, from its function name, and whether
// each guest frame (root first) is a C frame; `out` gets the merged stack,
// root first, as positions: host frame i is i, guest frame g is host + g.
enum class VmEntry : uint8_t { None, RunsLua, RunsC, RunsLuaThenC };
VmEntry vm_entry(std::string_view function, Frame::Kind kind);
// What a host frame in a VM function the stream named (vm-function) is.
VmEntry vm_function_entry(std::string_view name);
void merge_positions(std::vector<VmEntry> &host, const std::vector<bool> &guest_cfunc,
                     bool guest_cut, std::vector<uint32_t> &out);

}  // namespace prof
