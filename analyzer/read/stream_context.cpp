#include "read/stream_context.h"

namespace prof {

void StreamContext::add_symbol(const Symbol &s) {
  file.symbols().add(s);
  naming_epoch++;
}

bool StreamContext::absorb(const ExtRecord &r) {
  switch (r.kind) {
    case ExtKind::StackHost:
    case ExtKind::StackGuest:
      stacks.add(r, symbolizer.epoch());
      return true;
    case ExtKind::ModuleLoad:
      symbolizer.module_load(r);
      naming_epoch++;
      return true;
    case ExtKind::ModuleUnload:
      symbolizer.module_unload(r.addr);
      naming_epoch++;
      return true;
    case ExtKind::Process:
      pid = r.value;
      ppid = r.value2;
      exe = r.text;
      symbolizer.load_perf_map(pid);
      return true;
    case ExtKind::Stats:
      for (const auto &kv : r.stats) stats[kv.first] += kv.second;
      return true;
    case ExtKind::UncleanEnd:
      unclean = UncleanEnd{true, r.time_ns, r.value};
      return true;
    case ExtKind::Marker:
      window.marker(r.text);
      if (markers.size() < kMaxMarkers)
        markers.emplace_back(r.time_ns, r.text);
      else
        markers_dropped++;
      return true;
    default:
      return false;
  }
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
