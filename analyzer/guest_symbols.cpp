#include "guest_symbols.h"

#include <cstdio>

namespace prof {

std::string hex_addr(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

void GuestSymbols::add(const Symbol &s) {
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
    auto t = traces_.find(loc.traceno);
    if (t != traces_.end()) name += " started at " + lua_name(t->second.addr, t->second.line);
    return name;
  }
  return lua_name(loc.addr, loc.line);
}

std::string GuestSymbols::frame_name(uint8_t frame_type, uint64_t addr, uint64_t line) const {
  switch (frame_type) {
    case kFrameLfunc:
      return lua_name(addr, line);
    case kFrameFfunc:
      return "ffunc#" + std::to_string(addr);
    default: {
      auto it = cfuncs_.find(addr);
      if (it != cfuncs_.end()) return it->second;
      std::string c = cfunc_floor(addr);
      return c.empty() ? "CFUNC " + hex_addr(addr) : c;
    }
  }
}

}  // namespace prof
