// prof-analyze diff between two builds: decreases in the units of increases,
// and guest stacks from two checkouts in different directories matched.
#include <catch2/catch.hpp>

#include "agent_run.h"
#include "analyzer_streams.h"
#include "temp_files.h"

using namespace analyzer_test;

namespace {

RunResult analyze(std::vector<std::string> args) {
  args.insert(args.begin(), PROF_ANALYZER_PATH);
  return run_bare(args);
}

// A LuaJIT-style memory stream: prototype 0x500 of chunk "@DIR/g.lua"
// allocates `count` blocks of 4096 B at line 9.
std::vector<uint8_t> lua_stream(const std::string &dir, int count) {
  VecOut o;
  put_prologue(o, SectionKind::Symtab, false);
  Symbol lua;
  lua.type = kSymLfunc;
  lua.addr = 0x500;
  lua.name = "@" + dir + "/g.lua";
  lua.line = 1;
  put_symtab_entry(o, lua);
  put_symtab_final(o);
  put_prologue(o, SectionKind::Memprof, false);
  GuestLoc loc;
  loc.source = kAsourceLfunc;
  loc.addr = 0x500;
  loc.line = 9;
  for (int i = 0; i < count; i++)
    put_memprof_event(o, AllocEvent{kAeventAlloc, loc, false, 0, 0, 0, 0,
                                    0x10000 + uint64_t(i) * 0x1000, 4096});
  put_memprof_epilogue(o);
  return o.b;
}

}  // namespace

TEST_CASE("diff: stacks of builds in two directories match, both directions in the same units") {
  const TempFile before(lua_stream("/build/one", 10)), after(lua_stream("/home/ci/two", 4));
  const RunResult down = analyze({"diff", before.path, after.path});
  INFO(down.err);
  REQUIRE(down.exit_code == 0);
  INFO(down.out);
  // One stack (the same chunk and line), 40 KiB -> 16 KiB.
  CHECK(down.out.find("  -24KiB allocated, -6 calls") != std::string::npos);
  CHECK(down.out.find("(allocated 40KiB -> 16KiB)") != std::string::npos);
  CHECK(down.out.find("/g.lua:9\n") != std::string::npos);
  CHECK(down.out.find("+16KiB allocated") == std::string::npos);  // not a stack of its own
  const RunResult up = analyze({"diff", after.path, before.path});
  CHECK(up.out.find("  +24KiB allocated, +6 calls") != std::string::npos);
}
