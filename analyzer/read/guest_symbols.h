// GuestSymbols: the symbols a stream carries (its symtab section and in-stream
// symbol events), and the location names LuaJIT's parser gives with them.
//
// Invariants: names are computed from the symbols known at the moment of the
// call, exactly as the reference parser demangles while it reads, so a name
// may change once a later symbol arrives; callers that must match the
// reference name a location when they first meet it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/frame.h"
#include "memprof.h"
#include "sysprof.h"

namespace prof {

class GuestSymbols {
 public:
  void add(const Symbol &s);

  // "@chunk:line", "INTERNAL", "name:0xaddr", "CFUNC 0x..", "TRACE [n] started at ...".
  std::string location_name(const GuestLoc &loc) const;
  // A guest stack frame: "@chunk:line" for Lua functions, the C symbol's name
  // for C functions, fast functions by the C symbol at their id or "ffunc#N".
  Frame guest_frame(uint8_t frame_type, uint64_t addr, uint64_t line) const;
  // Whether a C symbol names the function at addr exactly.
  bool names_cfunc(uint64_t addr) const { return cfuncs_.count(addr) != 0; }
  // A host address named by the C symbol at or below it (genuine LuaJIT
  // streams carry no module map), else by the address.
  Frame host_frame(uint64_t addr) const;

  // Chunks whose name holds a newline (load() of a string), shown as aliases.
  const std::vector<std::string> &aliased_chunks() const { return alias_order_; }
  const std::string &alias_of(const std::string &chunk) const { return aliases_.at(chunk); }

 private:
  std::string lua_name(uint64_t addr, uint64_t line) const;
  // The name of the C symbol at or below addr ("name:0xaddr"), or empty.
  std::string cfunc_floor(uint64_t addr) const;

  struct Lfunc {
    std::string chunk;
    uint64_t line;
  };
  std::unordered_map<uint64_t, Lfunc> lfuncs_;
  std::map<uint64_t, std::string> cfuncs_;
  std::unordered_map<uint64_t, Symbol> traces_;
  std::unordered_map<std::string, std::string> aliases_;
  std::vector<std::string> alias_order_;
};

// "0x1f" as Lua's %#x prints it ("0" for zero).
std::string hex_addr(uint64_t v);

}  // namespace prof
