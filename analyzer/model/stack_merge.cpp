#include "model/stack_merge.h"

#include <utility>

namespace prof {
namespace {

// Host functions through which a VM runs guest code.
struct KnownEntry {
  const char *function;
  VmEntry kind;
};
const KnownEntry kVmEntries[] = {
    {"luaV_execute", VmEntry::RunsLua},   // Lua 5.x: one interpreter loop per C boundary
    {"lj_vm_call", VmEntry::RunsLua},     // LuaJIT: the VM's own entries
    {"lj_vm_pcall", VmEntry::RunsLua},
    {"lj_vm_resume", VmEntry::RunsLua},
    {"lj_vm_cpcall", VmEntry::RunsC},
    {"lua_call", VmEntry::RunsLua},       // LuaJIT's public API, all a symbol table may name
    {"lua_pcall", VmEntry::RunsLua},
    {"lua_resume", VmEntry::RunsLua},
    {"lua_cpcall", VmEntry::RunsC},
    {"lj_vm", VmEntry::RunsLuaThenC},     // LuaJIT's whole VM, as its adapter names it (vm-function)
};

// merge_positions for a guest stack cut at its root end (its outermost
// frames left out at the walk's limit, a cut frame in their place): the same
// rule read from the innermost end, so that each run of Lua frames sits
// above the entry that ran it, the cut frame above the outermost run kept;
// the entries beyond get none. Guest frames no entry takes go at the root.
void merge_from_inside(const std::vector<VmEntry> &entries, size_t innermost,
                       const std::vector<bool> &cfunc, std::vector<uint32_t> &out) {
  const size_t nhost = entries.size();
  std::vector<std::pair<size_t, size_t>> taken(nhost, {0, 0});  // guest [first, end) per entry
  size_t g = cfunc.size();  // guest frames [0, g) are left
  size_t unskipped = g;     // g before the last entry's C frames were passed
  auto pass = [&](bool c) {
    while (g > 0 && cfunc[g - 1] == c) g--;
  };
  for (size_t i = innermost + 1; i-- > 0;) {
    const VmEntry e = entries[i];
    if (e == VmEntry::None) continue;
    size_t end = g;
    if (i == innermost) {
      pass(true);  // the native functions the last Lua frame called
    } else if (e != VmEntry::RunsLua && g > 0 && cfunc[g - 1]) {
      end = --g;  // the C function it called (RunsLuaThenC) or runs (RunsC)
    }
    if (e != VmEntry::RunsC) pass(false);
    // An innermost RunsC runs the outermost of the C frames: its host frames show it.
    taken[i] = {e == VmEntry::RunsC && i == innermost && g < end ? g + 1 : g, end};
    unskipped = g;
    if (e == VmEntry::RunsLua) pass(true);  // the C frames that called into it
  }
  // Frames left over keep the C frames that called into the outermost run:
  // no host frame shows them.
  if (g > 0) g = unskipped;
  for (size_t k = 0; k < g; k++) out.push_back(uint32_t(nhost + k));
  for (size_t i = 0; i < nhost; i++) {
    out.push_back(uint32_t(i));
    for (size_t k = taken[i].first; k < taken[i].second; k++) out.push_back(uint32_t(nhost + k));
  }
}

}  // namespace

VmEntry vm_entry(std::string_view function, Frame::Kind kind) {
  if (kind == Frame::Kind::Inlined) return VmEntry::None;
  for (const KnownEntry &e : kVmEntries)
    if (function == e.function) return e.kind;
  return VmEntry::None;
}

VmEntry vm_function_entry(std::string_view name) {
  const VmEntry known = vm_entry(name, Frame::Kind::Native);
  return known == VmEntry::None ? VmEntry::RunsLua : known;
}

void merge_positions(std::vector<VmEntry> &entries, const std::vector<bool> &cfunc,
                     bool guest_cut, std::vector<uint32_t> &out) {
  const size_t nhost = entries.size(), nguest = cfunc.size();
  out.clear();
  size_t innermost = nhost;
  for (size_t i = 1; i < nhost; i++)
    // XXX: an entry called directly by the next one is the same way in.
    if (entries[i] != VmEntry::None && entries[i - 1] != VmEntry::None)
      entries[i - 1] = VmEntry::None;
  for (size_t i = 0; i < nhost; i++)
    if (entries[i] != VmEntry::None) innermost = i;

  auto guest_at = [&](size_t g) { return uint32_t(nhost + g); };
  if (innermost == nhost) {
    for (size_t i = 0; i < nhost; i++) out.push_back(uint32_t(i));
    for (size_t g = 0; g < nguest; g++) out.push_back(guest_at(g));
    return;
  }
  if (guest_cut) {
    merge_from_inside(entries, innermost, cfunc, out);
    return;
  }
  size_t g = 0;
  for (size_t i = 0; i < nhost; i++) {
    out.push_back(uint32_t(i));
    if (entries[i] == VmEntry::RunsC) {
      if (g < nguest && cfunc[g]) g++;
    } else if (entries[i] == VmEntry::RunsLua) {
      while (g < nguest && cfunc[g]) g++;
      for (; g < nguest && !cfunc[g]; g++) out.push_back(guest_at(g));
    } else if (entries[i] == VmEntry::RunsLuaThenC) {
      for (; g < nguest && !cfunc[g]; g++) out.push_back(guest_at(g));
      // The C function it called, which the host frames above it show.
      if (g < nguest && i != innermost) g++;
    }
    if (i != innermost) continue;
    // XXX: trailing C frames are the native functions the last Lua frame
    // called: the host frames after this entry run them, but only the guest
    // stack has their Lua names (string.rep), which stripped binaries lack.
    for (; g < nguest; g++) out.push_back(guest_at(g));
  }
}

std::vector<Frame> merge_stacks(std::vector<Frame> host, const std::vector<GuestPart> &guest,
                                bool guest_cut) {
  std::vector<VmEntry> entries;
  for (const Frame &f : host) entries.push_back(vm_entry(f.function, f.kind));
  std::vector<bool> cfunc;
  for (const GuestPart &g : guest) cfunc.push_back(g.cfunc);
  std::vector<uint32_t> order;
  merge_positions(entries, cfunc, guest_cut, order);
  std::vector<Frame> out;
  out.reserve(order.size());
  for (uint32_t at : order)
    out.push_back(at < host.size() ? std::move(host[at]) : guest[at - host.size()].frame);
  return out;
}

}  // namespace prof
