#include "read/stream_context.h"

namespace prof {

void StreamContext::add_symbol(const Symbol &s) {
  file.symbols().add(s);
  naming_epoch++;
}

bool StreamContext::absorb(const ExtRecord &r) {
  if (const auto *host = std::get_if<ext::StackHost>(&r)) {
    stacks.add(*host, symbolizer.epoch());
  } else if (const auto *guest = std::get_if<ext::StackGuest>(&r)) {
    stacks.add(*guest, symbolizer.epoch());
  } else if (const auto *load = std::get_if<ext::ModuleLoad>(&r)) {
    symbolizer.module_load(*load);
    naming_epoch++;
  } else if (const auto *unload = std::get_if<ext::ModuleUnload>(&r)) {
    symbolizer.module_unload(unload->base);
    naming_epoch++;
  } else if (const auto *process = std::get_if<ext::Process>(&r)) {
    pid = process->pid;
    ppid = process->ppid;
    exe = process->exe_path;
    symbolizer.load_perf_map(pid);
  } else if (const auto *counters = std::get_if<ext::Stats>(&r)) {
    for (const ext::Stat &c : counters->counters) stats[c.name] += c.value;
  } else if (const auto *end = std::get_if<ext::UncleanEnd>(&r)) {
    unclean = UncleanEnd{true, end->time_ns, end->lost_bytes};
  } else if (const auto *marker = std::get_if<ext::Marker>(&r)) {
    window.marker(marker->label);
    if (markers.size() < kMaxMarkers)
      markers.emplace_back(marker->time_ns, marker->label);
    else
      markers_dropped++;
  } else {
    return false;
  }
  return true;
}

void StreamContext::host_frames(uint64_t ip, uint32_t epoch, std::vector<Frame> &out) {
  // XXX: genuine streams name native code through the symtab's C symbols.
  if (!file.prologue().extended) {
    out.push_back(file.symbols().host_frame(ip));
    return;
  }
  const std::vector<Frame> &f = symbolizer.frames(ip, epoch);
  out.insert(out.end(), f.begin(), f.end());
}

std::vector<Frame> StreamContext::stack_frames(uint64_t host, uint64_t guest) {
  std::vector<Frame> h;
  std::vector<GuestPart> g;
  stacks.frames(host, scratch_);
  for (size_t i = scratch_.size(); i-- > 0;)
    host_frames(scratch_[i].addr, scratch_[i].module_epoch, h);
  stacks.frames(guest, scratch_);
  for (size_t i = scratch_.size(); i-- > 0;) {
    const StackFrame &f = scratch_[i];
    g.push_back({file.symbols().guest_frame(f.frame_type, f.addr, f.line),
                 f.frame_type == kFrameCfunc});
  }
  return merge_stacks(std::move(h), g);
}

std::vector<Frame> StreamContext::sample_frames(const SysprofSample &s) {
  std::vector<Frame> h;
  std::vector<GuestPart> g;
  const uint32_t epoch = symbolizer.epoch();
  for (size_t i = s.host.size(); i-- > 0;) host_frames(s.host[i], epoch, h);
  for (size_t i = s.guest.size(); i-- > 0;)
    g.push_back({file.symbols().guest_frame(s.guest[i].type, s.guest[i].addr, s.guest[i].line),
                 s.guest[i].type == kFrameCfunc});
  if (s.vmstate == kVmstTrace) {
    Frame t;
    t.kind = Frame::Kind::Guest;
    t.function = file.symbols().location_name(GuestLoc{kAsourceTrace, 0, 0, s.traceno});
    g.push_back({t, false});
  }
  return merge_stacks(std::move(h), g);
}

const Frame *StreamContext::top_frame(uint64_t host) {
  const StackFrame *f = stacks.top(host);
  if (!f) return nullptr;
  return &symbolizer.frames(f->addr, f->module_epoch).back();
}

}  // namespace prof
