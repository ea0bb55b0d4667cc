#include "luajit_streams.h"

#include <fcntl.h>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "byte_reader.h"
#include "symtab.h"

namespace {

std::string chunk_base(const std::string &chunk) {
  std::string c = !chunk.empty() && (chunk[0] == '@' || chunk[0] == '=') ? chunk.substr(1) : chunk;
  const size_t slash = c.rfind('/');
  return slash == std::string::npos ? c : c.substr(slash + 1);
}

struct Names {
  std::map<uint64_t, std::string> lfuncs, cfuncs;
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> traces;  // traceno -> (proto, line)
  void add(const prof::Symbol &s) {
    if (s.type == prof::kSymLfunc) lfuncs[s.addr] = chunk_base(s.name);
    if (s.type == prof::kSymCfunc) cfuncs[s.addr] = s.name;
    if (s.type == prof::kSymTrace) traces[s.traceno] = {s.addr, s.line};
  }
  std::string lua(uint64_t addr, uint64_t line) const {
    auto it = lfuncs.find(addr);
    return (it == lfuncs.end() ? "?" : it->second) + ":" + std::to_string(line);
  }
  std::string frame(uint64_t type, uint64_t addr, uint64_t line) const {
    if (type == prof::kFrameLfunc) return lua(addr, line);
    auto it = cfuncs.find(addr);
    return it == cfuncs.end() ? "?" : it->second;
  }
  std::string site(const prof::GuestLoc &loc) const {
    switch (loc.source) {
      case prof::kAsourceLfunc: return lua(loc.addr, loc.line);
      case prof::kAsourceCfunc: return frame(prof::kFrameCfunc, loc.addr, 0);
      case prof::kAsourceTrace: {
        auto it = traces.find(loc.traceno);
        return it == traces.end() ? "TRACE?" : "TRACE@" + lua(it->second.first, it->second.second);
      }
      default: return "INTERNAL";
    }
  }
};

// Reads path's symtab into names, then hands the section that follows to
// read(in); returns false if the stream was cut (kept up to its last whole
// record).
template <class Read>
bool read_stream(const std::string &path, Names &names, Read &&read) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  prof::ByteReader in(fd);
  try {
    prof::SymtabReader symtab(in);
    prof::Symbol sym;
    while (symtab.next(sym)) names.add(sym);
    read(in);
  } catch (const prof::FormatError &e) {
    close(fd);
    if (!e.truncated()) throw;
    return false;
  }
  close(fd);
  return true;
}

}  // namespace

uint64_t VmStream::count(prof::MemprofRecord record, const std::string &site,
                         uint64_t nsize) const {
  uint64_t n = 0;
  for (const VmEvent &e : events)
    if (e.record == record && e.site == site && (record == prof::MemprofRecord::Free || e.nsize == nsize))
      n++;
  return n;
}

// The regions a stream's process mapped: start -> end.
std::map<uint64_t, uint64_t> mapped_regions(const std::string &path) {
  std::map<uint64_t, uint64_t> mapped;
  Names names;
  read_stream(path, names, [&](prof::ByteReader &in) {
    prof::MemprofReader reader(in);
    prof::MemprofEvent ev;
    while (reader.next(ev))
      if (ev.record == prof::MemprofRecord::Ext)
        if (const auto *m = std::get_if<prof::ext::Map>(&ev.ext)) mapped[m->addr] = m->addr + m->length;
  });
  return mapped;
}

VmStream read_vm_stream(const std::string &path, const std::string &parent_path) {
  VmStream out;
  Names names;
  // start -> end of the regions the VM mapped (a fork child's VM: its parent's too)
  std::map<uint64_t, uint64_t> mapped;
  if (!parent_path.empty()) mapped = mapped_regions(parent_path);
  std::map<uint64_t, prof::ext::StackGuest> nodes;
  std::vector<prof::MemprofEvent> events;  // named at the end
  out.truncated = !read_stream(path, names, [&](prof::ByteReader &in) {
    prof::MemprofReader reader(in);
    prof::MemprofEvent ev;
    while (reader.next(ev)) {
      if (ev.record == prof::MemprofRecord::Symbol) {
        names.add(ev.symbol);
        if (ev.symbol.type == prof::kSymTrace) out.traces++;
      } else if (ev.record == prof::MemprofRecord::Ext) {
        if (const auto *m = std::get_if<prof::ext::Map>(&ev.ext)) mapped[m->addr] = m->addr + m->length;
        if (const auto *g = std::get_if<prof::ext::StackGuest>(&ev.ext)) nodes[g->id] = *g;
      } else {
        events.push_back(ev);
      }
    }
  });
  const auto in_vm = [&mapped](uint64_t addr) {
    auto it = mapped.upper_bound(addr);
    return it != mapped.begin() && addr < (--it)->second;
  };
  for (const prof::MemprofEvent &ev : events) {
    if (!in_vm(ev.record == prof::MemprofRecord::Free ? ev.oaddr : ev.naddr)) continue;
    VmEvent v{ev.record, ev.oaddr, ev.osize, ev.naddr, ev.nsize, names.site(ev.loc), {}};
    for (uint64_t id = ev.guest_stack; id && v.stack.size() < 4096;) {
      auto it = nodes.find(id);
      if (it == nodes.end()) break;
      v.stack.push_back(names.frame(it->second.frame_type, it->second.frame_addr, it->second.line));
      id = it->second.parent;
    }
    out.events.push_back(std::move(v));
  }
  return out;
}

uint64_t CpuStream::at(const std::string &frame) const {
  uint64_t n = 0;
  for (const CpuSample &c : samples)
    if (!c.stack.empty() && c.stack[0] == frame) n++;
  return n;
}

uint64_t CpuStream::in_state(uint8_t vmstate) const {
  uint64_t n = 0;
  for (const CpuSample &c : samples) n += c.vmstate == vmstate;
  return n;
}

CpuStream read_cpu_stream(const std::string &path) {
  CpuStream out;
  Names names;
  std::vector<prof::SysprofSample> samples;  // named at the end
  out.truncated = !read_stream(path, names, [&](prof::ByteReader &in) {
    prof::SysprofReader reader(in);
    prof::SysprofSample s;
    prof::ext::TraceSample trace{};  // the next sample's (ext.h, trace-sample), if traced
    bool traced = false;
    int relabel = -1;  // the next sample's state (ext.h, vm-state), if labelled
    while (reader.next(s)) {
      if (s.record == prof::SysprofRecord::Symbol) names.add(s.symbol);
      if (s.record == prof::SysprofRecord::Ext) {
        if (const auto *t = std::get_if<prof::ext::TraceSample>(&s.ext)) trace = *t, traced = true;
        if (const auto *v = std::get_if<prof::ext::VmState>(&s.ext)) relabel = int(v->vmstate);
      }
      if (s.record != prof::SysprofRecord::Sample) continue;
      if (traced) {
        s.vmstate = prof::kVmstTrace;
        s.traceno = trace.traceno, s.trace_addr = trace.addr, s.trace_line = trace.line;
        traced = false;
      } else if (relabel >= 0) {
        s.vmstate = uint8_t(relabel);
      }
      relabel = -1;
      samples.push_back(s);
    }
  });
  for (const prof::SysprofSample &s : samples) {
    CpuSample c{s.vmstate, {}, s.host.size(), s.traceno};
    if (s.vmstate == prof::kVmstTrace) c.stack.push_back("TRACE@" + names.lua(s.trace_addr, s.trace_line));
    for (const prof::GuestFrame &f : s.guest) c.stack.push_back(names.frame(f.type, f.addr, f.line));
    out.samples.push_back(std::move(c));
  }
  return out;
}

Placement placement(const std::string &folded, const std::regex &callee,
                    const std::regex &caller, const std::regex &middle, const std::regex &root) {
  Placement p;
  std::istringstream lines(folded);
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    std::vector<std::string> frames;
    std::istringstream names(line.substr(0, space));
    for (std::string f; std::getline(names, f, ';');) frames.push_back(f);
    auto first = [&](const std::regex &re) {
      for (size_t i = 0; i < frames.size(); i++)
        if (std::regex_match(frames[i], re)) return i;
      return frames.size();
    };
    const size_t at = first(callee);
    if (at == frames.size() || first(root) == frames.size()) continue;
    const uint64_t count = std::stoull(line.substr(space + 1));
    p.whole += count;
    const size_t call = first(caller), in_middle = first(middle);
    if (call < in_middle && in_middle < at) p.placed += count;
  }
  return p;
}
