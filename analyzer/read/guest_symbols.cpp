#include "read/guest_symbols.h"

#include <cstdio>

namespace prof {

std::string hex_addr(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

void GuestSymbols::add(const Symbol &read) {
  Symbol s = read;
  s.name = printable(std::move(s.name));
  switch (s.type) {
    case kSymLfunc:
      if (s.name.find('\n') != std::string::npos && !aliases_.count(s.name)) {
        alias_order_.push_back(s.name);
        aliases_[s.name] = "function_alias_" + std::to_string(alias_order_.size());
      }
      lfuncs_[s.addr] = Lfunc{s.name, s.line};
      break;
    case kSymCfunc:
      cfuncs_[s.addr] = s.name;
      break;
    case kSymTrace:
      traces_[s.traceno] = s;
      break;
  }
}

std::string GuestSymbols::cfunc_floor(uint64_t addr) const {
  auto it = cfuncs_.upper_bound(addr);
  if (it == cfuncs_.begin()) return "";
  --it;
  return it->second + ":" + hex_addr(it->first);
}

std::string GuestSymbols::lua_name(uint64_t addr, uint64_t line) const {
  if (addr == 0) return "INTERNAL";
  auto lf = lfuncs_.find(addr);
  if (lf != lfuncs_.end()) {
    auto alias = aliases_.find(lf->second.chunk);
    const std::string &chunk = alias != aliases_.end() ? alias->second : lf->second.chunk;
    return chunk + ":" + std::to_string(line);
  }
  // XXX: like the reference, an unknown prototype falls back to the C symbols.
  std::string c = cfunc_floor(addr);
  return c.empty() ? "CFUNC " + hex_addr(addr) : c;
}

std::string GuestSymbols::location_name(const GuestLoc &loc) const {
  if (loc.source == kAsourceTrace && loc.traceno != 0) {
    std::string name = "TRACE [" + std::to_string(loc.traceno) + "]";
    // A sysprof sample names where its trace started itself (the number may
    // have been reused since the trace's symbol), a memprof event does not.
    if (loc.addr != 0) return name + " started at " + lua_name(loc.addr, loc.line);
    auto t = traces_.find(loc.traceno);
    if (t != traces_.end()) name += " started at " + lua_name(t->second.addr, t->second.line);
    return name;
  }
  // A trace the agent could not number (a guest adapter names only its start).
  if (loc.source == kAsourceTrace && loc.addr != 0)
    return "TRACE started at " + lua_name(loc.addr, loc.line);
  return lua_name(loc.addr, loc.line);
}

Frame GuestSymbols::guest_frame(uint8_t frame_type, uint64_t addr, uint64_t line) const {
  Frame f;
  f.kind = Frame::Kind::Guest;
  switch (frame_type) {
    case kFrameLfunc: {
      f.function = lua_name(addr, line);
      auto lf = lfuncs_.find(addr);
      if (lf != lfuncs_.end()) {
        auto alias = aliases_.find(lf->second.chunk);
        f.file = alias != aliases_.end() ? alias->second : lf->second.chunk;
        f.line = uint32_t(line);
        f.first_line = uint32_t(lf->second.line);
      }
      return f;
    }
    case kFrameFfunc: {
      // A guest adapter may name fast functions, by id, as C symbols.
      auto it = cfuncs_.find(addr);
      f.function = it != cfuncs_.end() ? it->second : "ffunc#" + std::to_string(addr);
      return f;
    }
    default: {
      auto it = cfuncs_.find(addr);
      if (it != cfuncs_.end()) {
        f.function = it->second;
        return f;
      }
      const std::string c = cfunc_floor(addr);
      f.function = c.empty() ? "CFUNC " + hex_addr(addr) : c;
      return f;
    }
  }
}

Frame GuestSymbols::host_frame(uint64_t addr) const {
  Frame f;
  auto it = cfuncs_.upper_bound(addr);
  if (it == cfuncs_.begin()) {
    f.function = hex_addr(addr);
    return f;
  }
  f.function = (--it)->second;
  f.kind = Frame::Kind::Native;
  return f;
}

}  // namespace prof
