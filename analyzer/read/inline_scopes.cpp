#include "read/inline_scopes.h"

#include <dwarf.h>

#include <algorithm>

namespace prof {
namespace {

bool is_function(int tag) { return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine; }

// The DIEs whose children may hold functions: those libdw's scope walk
// descends into.
bool may_hold_functions(int tag) {
  switch (tag) {
    case DW_TAG_compile_unit:
    case DW_TAG_partial_unit:
    case DW_TAG_module:
    case DW_TAG_lexical_block:
    case DW_TAG_with_stmt:
    case DW_TAG_catch_block:
    case DW_TAG_try_block:
    case DW_TAG_entry_point:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_subprogram:
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
      return true;
    default:
      return false;
  }
}

}  // namespace

InlineScopes::InlineScopes(Dwarf_Die *cu) {
  index_children(cu, -1, 0);
  std::sort(ranges_.begin(), ranges_.end(), [](const Range &a, const Range &b) {
    return a.low != b.low ? a.low < b.low : a.depth < b.depth;
  });
}

void InlineScopes::index_children(Dwarf_Die *die, int parent, int depth) {
  if (depth >= kMaxDepth) return;
  Dwarf_Die child;
  if (dwarf_child(die, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_imported_unit) {
      // (dwz moves shared DIEs into partial units that units import.)
      Dwarf_Attribute attr;
      Dwarf_Die unit;
      if (dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &attr), &unit))
        index_children(&unit, parent, depth + 1);
      continue;
    }
    int scope = parent;
    if (is_function(tag)) {
      Dwarf_Addr base = 0, low = 0, high = 0;
      bool covers = false;
      for (ptrdiff_t at = 0; (at = dwarf_ranges(&child, at, &base, &low, &high)) > 0;) {
        if (low >= high) continue;
        if (!covers) scopes_.push_back({child, parent});
        covers = true;
        ranges_.push_back({low, high, depth, int(scopes_.size() - 1)});
      }
      // (A function without code, a declaration or an abstract instance,
      // holds none either.)
      if (!covers) continue;
      scope = int(scopes_.size() - 1);
    } else if (!may_hold_functions(tag)) {
      continue;
    }
    index_children(&child, scope, depth + 1);
  } while (dwarf_siblingof(&child, &child) == 0);
}

void InlineScopes::chain(uint64_t addr, std::vector<Dwarf_Die> &out) const {
  out.clear();
  // The innermost range over addr is the first one found going down from
  // the last that starts at or below it: functions nest, and at one start
  // the inner one sorts last.
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), addr,
                             [](uint64_t a, const Range &r) { return a < r.low; });
  while (it != ranges_.begin()) {
    --it;
    if (addr >= it->high) continue;
    for (int s = it->scope; s >= 0; s = scopes_[size_t(s)].parent)
      out.push_back(scopes_[size_t(s)].die);
    return;
  }
}

}  // namespace prof
