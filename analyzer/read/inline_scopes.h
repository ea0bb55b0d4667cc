// InlineScopes: the functions of one DWARF compile unit, concrete
// subprograms and the subroutines inlined into them, with their address
// ranges, indexed once, so that the chain of functions around an address is
// a search. libdw's dwarf_getscopes walks the unit's whole tree at every
// call: a few thousand addresses in CPython's ceval.c took a second.
//
// Invariants: the chain for an address equals the subprogram and
// inlined-subroutine DIEs of dwarf_getscopes_die over the innermost scope
// dwarf_getscopes finds (test/analyzer_inline_scopes.cpp checks it on
// every call site of a binary); DIEs nest no deeper than kMaxDepth (a
// hostile file's deeper ones are left out); the unit's Dwarf outlives it.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <vector>

namespace prof {

class InlineScopes {
 public:
  static constexpr int kMaxDepth = 256;

  explicit InlineScopes(Dwarf_Die *cu);

  // The DIEs of the functions whose code covers `addr` (the unit's own
  // addresses: link-time address minus the module's bias), innermost first:
  // inlined subroutines, then the subprogram they were inlined into. Empty
  // where no function covers it.
  void chain(uint64_t addr, std::vector<Dwarf_Die> &out) const;

 private:
  struct Scope {
    Dwarf_Die die;
    int parent;  // index in scopes_, -1 for a subprogram at the top
  };
  struct Range {
    uint64_t low, high;  // [low, high)
    int depth;
    int scope;
  };
  void index_children(Dwarf_Die *die, int parent, int depth);

  std::vector<Scope> scopes_;
  std::vector<Range> ranges_;  // by low, the outer first at one low
};

}  // namespace prof
