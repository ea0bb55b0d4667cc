#include "stream_context.h"

#include <algorithm>

namespace prof {

static std::string function_only(const std::string &name) {
  // "fn (file:line)" -> "fn"; LuaJIT's "fn:0xaddr" -> "fn".
  const size_t paren = name.find(" (");
  std::string f = paren == std::string::npos ? name : name.substr(0, paren);
  const size_t colon = f.rfind(":0x");
  return colon == std::string::npos || f[0] == '@' ? f : f.substr(0, colon);
}

bool StreamContext::absorb(const ExtRecord &r) {
  switch (r.kind) {
    case ExtKind::StackHost:
    case ExtKind::StackGuest:
      stacks.add(r, symbolizer.epoch());
      return true;
    case ExtKind::ModuleLoad:
      symbolizer.module_load(r);
      return true;
    case ExtKind::ModuleUnload:
      symbolizer.module_unload(r.addr);
      return true;
    case ExtKind::Process:
      pid = r.value;
      exe = r.text;
      symbolizer.load_perf_map(pid);
      return true;
    case ExtKind::Stats:
      stats.insert(stats.end(), r.stats.begin(), r.stats.end());
      return true;
    case ExtKind::Marker:
      markers.emplace_back(r.time_ns, r.text);
      return false;  // reports may window on markers
    case ExtKind::Sampling:
      sampling_mean = r.value;
      return false;
    default:
      return false;
  }
}

void StreamContext::read_memprof(const std::function<void(const MemprofEvent &)> &fn) {
  end = read_records([&] {
    MemprofReader reader(file.reader(), file.prologue());
    MemprofEvent ev;
    while (reader.next(ev)) {
      if (ev.record == MemprofRecord::Symbol) {
        file.symbols().add(ev.symbol);
        continue;
      }
      if (ev.record == MemprofRecord::Ext && absorb(ev.ext)) continue;
      fn(ev);
    }
  });
}

void StreamContext::read_sysprof(const std::function<void(const SysprofSample &)> &fn) {
  end = read_records([&] {
    SysprofReader reader(file.reader(), file.prologue());
    SysprofSample s;
    while (reader.next(s)) {
      if (s.record == SysprofRecord::Symbol) {
        file.symbols().add(s.symbol);
        continue;
      }
      if (s.record == SysprofRecord::Ext && absorb(s.ext)) continue;
      fn(s);
    }
  });
}

void StreamContext::host_names(uint64_t ip, uint32_t epoch, bool return_address,
                               bool short_names, std::vector<NamedFrame> &out) {
  if (!file.prologue().extended) {
    // XXX: genuine streams name native code through the symtab's C symbols.
    std::string c = file.symbols().cfunc_floor(ip);
    if (c.empty()) c = hex_addr(ip);
    out.push_back({short_names ? function_only(c) : c, false});
    return;
  }
  // Outermost function first, then what was inlined into it.
  for (const std::string &n : symbolizer.frame(ip, epoch, return_address))
    out.push_back({short_names ? function_only(n) : n, false});
}

std::vector<std::string> StreamContext::stack_names(uint64_t host, uint64_t guest,
                                                    bool short_names) {
  std::vector<NamedFrame> h, g;
  stacks.frames(host, frames_);
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
    host_names(it->addr, it->module_epoch, true, short_names, h);
  stacks.frames(guest, frames_);
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
    g.push_back({file.symbols().frame_name(it->frame_type, it->addr, it->line),
                 it->frame_type == kFrameCfunc});
  return merge_stacks(h, g);
}

std::vector<std::string> StreamContext::sample_names(const SysprofSample &s, bool short_names) {
  std::vector<NamedFrame> h, g;
  const uint32_t epoch = symbolizer.epoch();
  for (size_t i = s.host.size(); i-- > 0;)
    host_names(s.host[i], epoch, i != 0, short_names, h);
  for (auto it = s.guest.rbegin(); it != s.guest.rend(); ++it)
    g.push_back({file.symbols().frame_name(it->type, it->addr, it->line),
                 it->type == kFrameCfunc});
  if (s.vmstate == kVmstTrace)
    g.push_back({file.symbols().location_name(GuestLoc{kAsourceTrace, 0, 0, s.traceno}), false});
  return merge_stacks(h, g);
}

uint32_t StreamContext::site_of(const GuestLoc &loc) {
  const std::string name = file.symbols().location_name(loc);
  auto it = site_ids_.find(name);
  if (it != site_ids_.end()) return it->second;
  sites_.push_back(name);
  return site_ids_[name] = uint32_t(sites_.size());
}

std::string StreamContext::top_frame_name(uint64_t host) {
  const StackFrame *f = stacks.top(host);
  if (!f) return "INTERNAL";
  const auto &names = symbolizer.frame(f->addr, f->module_epoch, true);
  return names.back();
}

}  // namespace prof
