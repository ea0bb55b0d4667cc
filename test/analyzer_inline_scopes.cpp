// InlineScopes against libdw's own scope walk: at every eighth row of
// the line table of a C++ unit built -O2 -g with much inlined (the symbolizer's, in
// this test's executable), the chain of functions is the one
// dwarf_getscopes + dwarf_getscopes_die give.
#include <catch2/catch.hpp>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <string>
#include <vector>

#include "read/elf_file.h"
#include "read/inline_scopes.h"

namespace {

// Subprograms and inlined subroutines around addr, innermost first, up to
// the first subprogram, by libdw's walk of the unit's tree.
std::vector<Dwarf_Off> libdw_chain(Dwarf_Die *cu, Dwarf_Addr addr) {
  std::vector<Dwarf_Off> out;
  Dwarf_Die *scopes = nullptr;
  const int n = dwarf_getscopes(cu, addr, &scopes);
  Dwarf_Die *chain = nullptr;
  const int depth = n > 0 ? dwarf_getscopes_die(&scopes[0], &chain) : 0;
  for (int i = 0; i < depth; i++) {
    const int tag = dwarf_tag(&chain[i]);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
    out.push_back(dwarf_dieoffset(&chain[i]));
    if (tag == DW_TAG_subprogram) break;
  }
  free(chain);
  free(scopes);
  return out;
}

std::vector<Dwarf_Off> indexed_chain(const prof::InlineScopes &index, Dwarf_Addr addr) {
  std::vector<Dwarf_Die> dies;
  index.chain(addr, dies);
  std::vector<Dwarf_Off> out;
  for (Dwarf_Die &d : dies) {
    out.push_back(dwarf_dieoffset(&d));
    if (dwarf_tag(&d) == DW_TAG_subprogram) break;
  }
  return out;
}

// Whether link-time address addr is in an executable segment: rows of code
// the linker dropped (a duplicate inline function's) sit near 0, where the
// dropped functions overlap.
bool in_code(Dwfl_Module *mod, Dwarf_Addr addr) {
  GElf_Addr bias = 0;
  Elf *elf = dwfl_module_getelf(mod, &bias);
  size_t n = 0;
  if (!elf || elf_getphdrnum(elf, &n) != 0) return false;
  for (size_t i = 0; i < n; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, int(i), &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
        addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_memsz)
      return true;
  }
  return false;
}

bool ends_with(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TEST_CASE("indexed inline scopes agree with libdw's walk at rows of a line table") {
  auto elf = prof::ElfFile::open("/proc/self/exe");
  REQUIRE(elf);
  Dwfl_Module *mod = elf->module();
  const std::vector<std::string> units = {"read/symbolizer.cpp"};
  size_t units_seen = 0, rows = 0, inlined_rows = 0;
  Dwarf_Addr bias = 0;
  for (Dwarf_Die *cu = nullptr; (cu = dwfl_module_nextcu(mod, cu, &bias));) {
    const char *name = dwarf_diename(cu);
    bool wanted = false;
    for (const auto &u : units) wanted = wanted || (name && ends_with(name, u));
    if (!wanted) continue;
    units_seen++;
    const prof::InlineScopes &index = elf->inline_scopes(cu);
    Dwarf_Lines *lines = nullptr;
    size_t count = 0;
    REQUIRE(dwarf_getsrclines(cu, &lines, &count) == 0);
    // (Every row costs libdw a walk of the unit: every eighth keeps it short.)
    for (size_t i = 0; i < count; i += 8) {
      Dwarf_Addr addr = 0;
      REQUIRE(dwarf_lineaddr(dwarf_onesrcline(lines, i), &addr) == 0);
      if (!in_code(mod, addr)) continue;
      const std::vector<Dwarf_Off> expected = libdw_chain(cu, addr);
      INFO(name << " at 0x" << std::hex << addr);
      CHECK(indexed_chain(index, addr) == expected);
      rows++;
      if (expected.size() > 1) inlined_rows++;
    }
  }
  CHECK(units_seen == units.size());
  // (The comparison means something only where calls were inlined.)
  INFO(rows << " rows, " << inlined_rows << " in inlined code");
  CHECK(inlined_rows > 1000);
  CHECK(rows > inlined_rows);
}
