#include "read/stream_context.h"

#include <algorithm>

namespace prof {

void StreamContext::add_symbol(const Symbol &s) {
  file.symbols().add(s);
  naming_epoch++;
}

const std::string &StreamContext::thread_name(uint64_t tid) const {
  static const std::string kUnnamed;
  const auto it = thread_names.find(tid);
  return it == thread_names.end() ? kUnnamed : it->second;
}

bool StreamContext::absorb(const ExtRecord &r, uint64_t offset) {
  if (const auto *host = std::get_if<ext::StackHost>(&r)) {
    StackFrame f;
    f.addr = host->ip;
    f.module_epoch = symbolizer.epoch();
    stacks.add(host->id, host->parent, f, offset);
  } else if (const auto *guest = std::get_if<ext::StackGuest>(&r)) {
    StackFrame f;
    f.guest = true;
    f.frame_type = guest->frame_type;
    f.addr = guest->frame_addr;
    f.line = guest->line;
    f.module_epoch = symbolizer.epoch();
    stacks.add(guest->id, guest->parent, f, offset);
  } else if (const auto *vm = std::get_if<ext::VmFunction>(&r)) {
    Frame f;
    f.function = vm->name.empty() ? "(guest VM)" : vm->name;
    f.kind = Frame::Kind::Native;
    f.addr = vm->start;
    vm_functions_.emplace(vm->start, VmFunctionRange{vm->size, std::move(f)});
    if (vm->size > vm_max_size_) vm_max_size_ = vm->size;
    naming_epoch++;
  } else if (const auto *load = std::get_if<ext::ModuleLoad>(&r)) {
    symbolizer.module_load(*load);
    naming_epoch++;
  } else if (const auto *unload = std::get_if<ext::ModuleUnload>(&r)) {
    symbolizer.module_unload(unload->base);
    naming_epoch++;
  } else if (const auto *process = std::get_if<ext::Process>(&r)) {
    pid = process->pid;
    ppid = process->ppid;
    exe = printable(process->exe_path);
    start_unix_ns = process->time_unix_ns;
    symbolizer.load_perf_map(pid);
  } else if (const auto *attached = std::get_if<ext::Attached>(&r)) {
    attach_number = attached->attach_number;
  } else if (const auto *dir = std::get_if<ext::WorkingDir>(&r)) {
    lua_names_.set_working_dir(dir->path);
    naming_epoch++;
  } else if (const auto *counters = std::get_if<ext::Stats>(&r)) {
    for (const ext::Stat &c : counters->counters) stats[c.name] += c.value;
  } else if (const auto *end = std::get_if<ext::UncleanEnd>(&r)) {
    unclean = UncleanEnd{true, end->time_ns, end->lost_bytes};
  } else if (const auto *t = std::get_if<ext::ThreadName>(&r)) {
    thread_renames++;
    auto it = thread_names.find(t->tid);
    if (it != thread_names.end())
      it->second = printable(t->name);
    else if (thread_names.size() < kMaxThreadNames)
      thread_names.emplace(t->tid, printable(t->name));
    else
      thread_names_dropped++;
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

void StreamContext::window_time(const ExtRecord &r) {
  if (const auto *t = std::get_if<ext::TimeMark>(&r))
    window.time(t->time_ns);
  else if (const auto *h = std::get_if<ext::HeapTotal>(&r))
    window.time(h->time_ns);
  else if (const auto *m = std::get_if<ext::Marker>(&r))
    window.time(m->time_ns);
}

void StreamContext::refuse_size(const MemprofEvent &ev) const {
  // XXX: no address space holds 2^57 bytes (5-level paging), so such a
  // size is not one a program was given, and sums of a few would overflow;
  // mmap lengths (map records) may be anything a program asked for, and are
  // not checked.
  throw FormatError(ev.offset, false,
                    "a block of " + std::to_string(std::max(ev.nsize, ev.osize)) +
                        " bytes (no address space holds 2^57)");
}

const StreamContext::VmFunctionRange *StreamContext::vm_function_at(uint64_t pc) const {
  for (auto it = vm_functions_.upper_bound(pc); it != vm_functions_.begin();) {
    --it;
    if (pc - it->first >= vm_max_size_) break;
    if (pc - it->first < it->second.size) return &it->second;
  }
  return nullptr;
}

void StreamContext::host_frames(uint64_t ip, uint32_t epoch, CallTree &calls,
                                std::vector<uint32_t> &out, bool innermost) {
  // XXX: genuine streams name native code through the symtab's C symbols.
  if (!file.prologue().extended) {
    out.push_back(calls.frame_id(file.symbols().host_frame(ip)));
    return;
  }
  // XXX: the guest VM's interpreter is one frame, its name known even where
  // the binary is stripped: the merge finds it by that name.
  // (A sample's innermost address is the interrupted instruction itself.)
  const uint64_t pc = innermost ? ip : ip - 1;
  if (const VmFunctionRange *vm = vm_function_at(pc)) {
    const uint32_t id = calls.frame_id(vm->frame);
    vm_frame_ids_.insert(id);
    out.push_back(id);
    return;
  }
  const std::vector<Frame> &frames = symbolizer.frames(ip, epoch, innermost);
  // The agent's interposers are transparent; it shows only where a sample
  // interrupted it.
  if (!innermost && frames.size() == 1 && frames[0].function == kAgentFrame) return;
  for (const Frame &f : frames) out.push_back(calls.frame_id(f));
}

Frame StreamContext::named_guest_frame(uint8_t type, uint64_t addr, uint64_t line) {
  Frame f = file.symbols().guest_frame(type, addr, line);
  if (type == kFrameLfunc && !f.file.empty()) {
    const std::string &name = lua_names_.name(f.file, f.first_line);
    if (!name.empty()) f.function = name + " (" + f.function + ")";
  } else if (type == kFrameCfunc && file.prologue().extended && !file.symbols().names_cfunc(addr)) {
    f.function = symbolizer.frames(addr, symbolizer.epoch(), true).front().function;
  }
  return f;
}

uint32_t StreamContext::guest_frame(uint8_t type, uint64_t addr, uint64_t line, CallTree &calls) {
  return calls.frame_id(named_guest_frame(type, addr, line));
}

std::string StreamContext::location_name(const GuestLoc &loc) {
  if (!file.prologue().extended || (loc.source != kAsourceLfunc && loc.source != kAsourceCfunc))
    return file.symbols().location_name(loc);
  return named_guest_frame(loc.source == kAsourceLfunc ? kFrameLfunc : kFrameCfunc, loc.addr,
                           loc.line)
      .function;
}

uint32_t StreamContext::host_node(uint32_t host, CallTree &calls) {
  if (named_.size() < stacks.size()) named_.resize(stacks.size(), IdTable::kNone);
  named_[0] = CallTree::kRoot;
  // Up to the nearest node named already, then down, each node named once.
  for (; named_[host] == IdTable::kNone; host = stacks.parent(host)) todo_.push_back(host);
  uint32_t node = named_[host];
  for (; !todo_.empty(); todo_.pop_back()) {
    const StackFrame f = stacks.frame(todo_.back());
    ip_ids_.clear();
    host_frames(f.addr, f.module_epoch, calls, ip_ids_, false);
    for (uint32_t id : ip_ids_) node = calls.child(node, id);
    named_[todo_.back()] = node;
  }
  return node;
}

uint32_t StreamContext::merged_node(const std::vector<uint32_t> &host,
                                    const std::vector<uint32_t> &guest,
                                    const std::vector<bool> &guest_cfunc, bool guest_cut,
                                    CallTree &calls) {
  entries_.clear();
  // XXX: a stream that names its VM's interpreter (vm-function) is merged by
  // that alone: names such as lua_resume mean other things in other VMs.
  for (uint32_t id : host)
    entries_.push_back(
        vm_functions_.empty() ? vm_entry(calls.function(id), calls.kind(id))
        : vm_frame_ids_.count(id)
            ? vm_function_entry(calls.function(id))
            : VmEntry::None);
  merge_positions(entries_, guest_cfunc, guest_cut, order_);
  uint32_t node = CallTree::kRoot;
  for (uint32_t at : order_)
    node = calls.child(node, at < host.size() ? host[at] : guest[at - host.size()]);
  return node;
}

uint32_t StreamContext::stack_node(uint32_t host, uint32_t guest, CallTree &calls) {
  const uint32_t node = host_node(host, calls);
  if (guest == 0) return node;
  calls.path(node, host_ids_);
  if (named_.size() < stacks.size()) named_.resize(stacks.size(), IdTable::kNone);
  guest_ids_.clear();
  guest_cfunc_.clear();
  bool cut = false;  // the root frame, seen last, is the cut frame
  for (uint32_t g = guest; g != 0; g = stacks.parent(g)) {
    const StackFrame f = stacks.frame(g);
    if (named_[g] == IdTable::kNone)
      named_[g] = guest_frame(uint8_t(f.frame_type), f.addr, f.line, calls);
    guest_ids_.push_back(named_[g]);
    guest_cfunc_.push_back(calls_native(uint8_t(f.frame_type), f.addr));
    cut = is_guest_cut(uint8_t(f.frame_type), f.addr);
  }
  std::reverse(guest_ids_.begin(), guest_ids_.end());
  std::reverse(guest_cfunc_.begin(), guest_cfunc_.end());
  return merged_node(host_ids_, guest_ids_, guest_cfunc_, cut, calls);
}

uint32_t StreamContext::sample_node(const SysprofSample &s, CallTree &calls) {
  const uint32_t epoch = symbolizer.epoch();
  host_ids_.clear();
  for (size_t i = s.host.size(); i-- > 0;) host_frames(s.host[i], epoch, calls, host_ids_, i == 0);
  // XXX: an unwind that stepped out of its outermost real frame onto
  // garbage (out of LuaJIT's lj_vm in a collector step) leaves addresses no
  // module covers at the root: left out, so that no stack roots at one.
  size_t raw = 0;
  while (raw < host_ids_.size() && calls.kind(host_ids_[raw]) == Frame::Kind::Unknown) raw++;
  if (raw < host_ids_.size()) host_ids_.erase(host_ids_.begin(), host_ids_.begin() + long(raw));
  // A sample that interrupted the agent keeps it as its leaf, after the
  // guest frames that called into it too.
  const bool in_agent = !host_ids_.empty() && calls.function(host_ids_.back()) == kAgentFrame;
  const uint32_t agent = in_agent ? host_ids_.back() : 0;
  if (in_agent) host_ids_.pop_back();
  guest_ids_.clear();
  guest_cfunc_.clear();
  for (size_t i = s.guest.size(); i-- > 0;) {
    guest_ids_.push_back(guest_frame(s.guest[i].type, s.guest[i].addr, s.guest[i].line, calls));
    guest_cfunc_.push_back(calls_native(s.guest[i].type, s.guest[i].addr));
  }
  if (s.vmstate == kVmstTrace) {
    // A sample of ours keeps the trace's callers but not the frame of the
    // function it started in (its place and line name the trace): that
    // function is put back as the trace's caller, so that it owns the
    // trace's time. (sysprof's trace samples, bare, have no stack.)
    if (s.trace_addr != 0 && (!s.guest.empty() || !s.host.empty())) {
      guest_ids_.push_back(guest_frame(kFrameLfunc, s.trace_addr, s.trace_line, calls));
      guest_cfunc_.push_back(false);
    }
    Frame t;
    t.kind = Frame::Kind::Guest;
    t.function = file.symbols().location_name(
        GuestLoc{kAsourceTrace, s.trace_addr, s.trace_line, s.traceno});
    guest_ids_.push_back(calls.frame_id(t));
    guest_cfunc_.push_back(false);
  }
  const bool cut = !s.guest.empty() && is_guest_cut(s.guest.back().type, s.guest.back().addr);
  const uint32_t node = merged_node(host_ids_, guest_ids_, guest_cfunc_, cut, calls);
  return in_agent ? calls.child(node, agent) : node;
}

const Frame *StreamContext::top_frame(uint32_t host) {
  if (host == 0) return nullptr;
  const StackFrame f = stacks.frame(host);
  return &symbolizer.frames(f.addr, f.module_epoch).back();
}

}  // namespace prof
