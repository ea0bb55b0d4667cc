#include "lua_streams.h"

#include <fcntl.h>
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

// The records both sections share.
void add_ext(GuestProfile &p, const prof::ExtRecord &r) {
  if (const auto *m = std::get_if<prof::ext::ModuleLoad>(&r)) p.modules.push_back(*m);
  if (const auto *proc = std::get_if<prof::ext::Process>(&r))
    p.pid = proc->pid, p.ppid = proc->ppid;
  if (const auto *s = std::get_if<prof::ext::Sampler>(&r)) p.sampler = *s;
  if (const auto *st = std::get_if<prof::ext::Stats>(&r))
    for (const prof::ext::Stat &c : st->counters) p.stats[c.name] += c.value;
}

void add_symbol(GuestProfile &p, const prof::Symbol &s) {
  if (s.type == prof::kSymLfunc) p.lfuncs[s.addr] = GuestProfile::Lfunc{s.name, s.line};
  if (s.type == prof::kSymCfunc) p.cfuncs[s.addr] = s.name;
}

// Reads path's symtab, then hands each record of the section that follows
// to read(in); cut streams are kept up to their last whole record.
template <class Read>
void read_stream(const std::string &path, GuestProfile &p, Read &&read) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  prof::ByteReader in(fd);
  try {
    prof::SymtabReader symtab(in);
    prof::Symbol sym;
    while (symtab.next(sym)) add_symbol(p, sym);
    read(in);
  } catch (const prof::FormatError &e) {
    close(fd);
    if (!e.truncated()) throw;
    p.truncated = true;
    return;
  }
  close(fd);
}

}  // namespace

std::string GuestProfile::name_of(uint8_t type, uint64_t addr, uint64_t line) const {
  if (type == prof::kFrameLfunc) {
    auto it = lfuncs.find(addr);
    if (it == lfuncs.end()) return "?";
    return chunk_base(it->second.chunk) + ":" + std::to_string(it->second.line) + ":" +
           std::to_string(line);
  }
  auto it = cfuncs.find(addr);
  return it == cfuncs.end() ? "?" : it->second;
}

GuestNames GuestProfile::names(const std::vector<prof::GuestFrame> &frames) {
  GuestNames out;
  bool odd = false;
  for (size_t i = 0; i < frames.size(); i++) {
    const prof::GuestFrame &f = frames[i];
    out.push_back(name_of(f.type, f.addr, f.line));
    if (out.back() == "?" && i + 1 < frames.size()) odd = true;
    if (f.type == prof::kFrameLfunc && f.line != 0) {
      auto it = lfuncs.find(f.addr);
      if (it != lfuncs.end() && f.line < it->second.line) odd = true;
    }
  }
  if (odd && odd_stacks++ == 0) {
    for (const std::string &n : out) first_odd_stack += n + ";";
  }
  return out;
}

GuestProfile read_guest_memprof(const std::string &path) {
  GuestProfile p;
  // Names by guest stack id, valid until the next symbol arrives.
  std::map<uint64_t, const GuestNames *> named;
  read_stream(path, p, [&](prof::ByteReader &in) {
    prof::MemprofReader reader(in);
    prof::MemprofEvent ev;
    while (reader.next(ev)) {
      if (ev.record == prof::MemprofRecord::Symbol) {
        add_symbol(p, ev.symbol);
        named.clear();
        continue;
      }
      if (ev.record == prof::MemprofRecord::Ext) {
        if (const auto *g = std::get_if<prof::ext::StackGuest>(&ev.ext)) p.guest_nodes[g->id] = *g;
        add_ext(p, ev.ext);
        continue;
      }
      if (ev.record == prof::MemprofRecord::Free) continue;
      auto known = named.find(ev.guest_stack);
      if (known != named.end()) {
        p.allocs.push_back(GuestAlloc{ev.record, ev.oaddr, ev.nsize, ev.loc, known->second});
        continue;
      }
      std::vector<prof::GuestFrame> frames;
      for (uint64_t id = ev.guest_stack; id && frames.size() < 4096;) {
        auto it = p.guest_nodes.find(id);
        if (it == p.guest_nodes.end()) break;
        frames.push_back(prof::GuestFrame{uint8_t(it->second.frame_type), it->second.frame_addr,
                                          it->second.line});
        id = it->second.parent;
      }
      p.stack_names.push_back(p.names(frames));
      named[ev.guest_stack] = &p.stack_names.back();
      p.allocs.push_back(GuestAlloc{ev.record, ev.oaddr, ev.nsize, ev.loc, named[ev.guest_stack]});
    }
  });
  return p;
}

GuestProfile read_guest_sysprof(const std::string &path) {
  GuestProfile p;
  read_stream(path, p, [&](prof::ByteReader &in) {
    prof::SysprofReader reader(in);
    prof::SysprofSample s;
    uint64_t weight = 1, tid = 0;
    while (reader.next(s)) {
      if (s.record == prof::SysprofRecord::Symbol) {
        add_symbol(p, s.symbol);
        continue;
      }
      if (s.record == prof::SysprofRecord::Ext) {
        if (const auto *w = std::get_if<prof::ext::Weight>(&s.ext)) weight = w->sample_weight;
        if (const auto *t = std::get_if<prof::ext::Thread>(&s.ext)) tid = t->tid;
        add_ext(p, s.ext);
        continue;
      }
      p.samples.push_back(GuestSample{s.vmstate, weight, tid, p.names(s.guest), s.host, s.guest});
      weight = 1;
    }
  });
  return p;
}
