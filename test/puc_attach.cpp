// The PUC Lua adapters' entry for the agent (prof_adapter_attach), in a host
// linked against the shared liblua5.x.so.0 that calls it right after
// luaL_newstate, as the agent does, before any library is open; built once
// per release (5.1 to 5.4). The host stands in for the agent (lua_host.h);
// a counting allocator put on top of the adapter's walks each new block.
// Expected stacks by construction from the scripts' lines.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <map>
#include <string>
#include <vector>

#include "lua_host.h"

namespace {

using Stack = std::vector<std::string>;
using AttachFn = const char *(*)(lua_State *);

AttachFn attach_entry() {
  void *adapter = dlopen(PROF_LUA_ADAPTER, RTLD_NOW | RTLD_GLOBAL);
  REQUIRE(adapter);
  auto fn = reinterpret_cast<AttachFn>(dlsym(adapter, "prof_adapter_attach"));
  REQUIRE(fn);
  return fn;
}

Stack walk_now() {
  prof_guest_frame frames[64];
  int vmstate = 0;
  const int n = registered_backtracer()(nullptr, frames, 64, &vmstate);
  return frame_names(frames, n);
}

// A state made as the agent sees a program make one, attached, with its
// allocator's new blocks (size, stack) recorded while `recording`.
struct AttachedState {
  lua_State *L = luaL_newstate();
  lua_Alloc inner = nullptr;
  void *inner_ud = nullptr;
  bool recording = false;
  std::map<Stack, std::map<size_t, int>> blocks;
  const char *attach_result = "not attached";

  AttachedState() {
    REQUIRE(L);
    attach_result = attach_entry()(L);
    luaL_openlibs(L);
    inner = lua_getallocf(L, &inner_ud);
    lua_setallocf(L, counting, this);
  }
  ~AttachedState() { lua_close(L); }

  static void *counting(void *ud, void *ptr, size_t osize, size_t nsize) {
    auto *self = static_cast<AttachedState *>(ud);
    void *block = self->inner(self->inner_ud, ptr, osize, nsize);
    if (self->recording && block && !ptr && nsize > 0) self->blocks[walk_now()][nsize]++;
    return block;
  }

  std::string run(const std::string &source, const std::string &name) {
    recording = true;
    const std::string chunk = "@" + name;
    std::string err;
    if (luaL_loadbuffer(L, source.data(), source.size(), chunk.c_str()) != 0 ||
        lua_pcall(L, 0, 0, 0) != 0)
      err = lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object)";
    recording = false;
    return err;
  }
};

// Makes string.rep(c, n) for n = 100..199 from `make`, at line 3. Each run
// takes its own c: Lua 5.1 makes no block for a string that exists.
std::string rep_script(char c) {
  return std::string("local t = {}\n")                          // 1
         + "local function make(n)\n"                            // 2
         + "  t[#t + 1] = string.rep('" + c + "', n)\n"          // 3
         + "end\n"                                               // 4
         + "for n = 100, 199 do\n"                               // 5
         + "  make(n)\n"                                         // 6
         + "end\n";                                              // 7
}

// A long string's block: the header (24 bytes in every release), the bytes, NUL.
size_t string_block(int n) { return 24 + size_t(n) + 1; }

void check_rep_blocks(const AttachedState &s, const std::string &chunk) {
  const Stack rep{"string.rep", chunk + ":2:3", chunk + ":0:6"};
  REQUIRE(s.blocks.count(rep));
  const auto &sizes = s.blocks.at(rep);
  for (int n = 100; n <= 199; n++) {
    INFO("string.rep(c, " << n << ")");
    CHECK(sizes.count(string_block(n)));
    if (sizes.count(string_block(n))) CHECK(sizes.at(string_block(n)) == 1);
  }
}

Stack g_probed;
int probe(lua_State *) {
  g_probed = walk_now();
  return 0;
}

}  // namespace

TEST_CASE("attach: a state made with luaL_newstate is profiled before its libraries open",
          "[puc]") {
  AttachedState s;
  REQUIRE(s.attach_result == nullptr);
  REQUIRE(registered_backtracer());
  REQUIRE(s.run(rep_script('x'), "rep") == "");
  check_rep_blocks(s, "rep");
}

TEST_CASE("attach: coroutines and C functions are walked as in the interpreter", "[puc]") {
  AttachedState s;
  REQUIRE(s.attach_result == nullptr);
  lua_pushcfunction(s.L, probe);
  lua_setglobal(s.L, "probe");
  g_probed.clear();
  // The first Lua call finishes the attach: it names the globals (probe
  // among them) and wraps the coroutine functions.
  REQUIRE(s.run("local x = 1\n", "first") == "");
  REQUIRE(s.run("local function body()\n"          // 1
                "  probe()\n"                      // 2
                "end\n"                            // 3
                "local co = coroutine.wrap(body)\n"  // 4
                "co()\n",                          // 5
                "co") == "");
  CHECK(g_probed == Stack{"probe", "co:1:2", "coroutine.wrap()", "co:0:5"});
  g_probed.clear();
  REQUIRE(s.run("local co = coroutine.create(function()\n"  // 1
                "  probe()\n"                               // 2
                "end)\n"                                    // 3
                "coroutine.resume(co)\n",                   // 4
                "resume") == "");
  CHECK(g_probed == Stack{"probe", "resume:1:2", "coroutine.resume", "resume:0:4"});
}

TEST_CASE("attach: several states on one thread are each walked as themselves", "[puc]") {
  AttachedState a, b;
  REQUIRE(a.attach_result == nullptr);
  REQUIRE(b.attach_result == nullptr);
  // Interleaved: b made last, a runs first, then b, then a again.
  REQUIRE(a.run(rep_script('a'), "a1") == "");
  REQUIRE(b.run(rep_script('b'), "b") == "");
  REQUIRE(a.run(rep_script('c'), "a2") == "");
  check_rep_blocks(a, "a1");
  check_rep_blocks(b, "b");
  check_rep_blocks(a, "a2");
  for (const auto &[stack, sizes] : a.blocks)
    for (const std::string &frame : stack) CHECK(frame.rfind("b:", 0) != 0);
  for (const auto &[stack, sizes] : b.blocks)
    for (const std::string &frame : stack) CHECK(frame.rfind("a", 0) != 0);
}

TEST_CASE("attach: attaching a state twice is one attach", "[puc]") {
  AttachedState s;
  REQUIRE(s.attach_result == nullptr);
  CHECK(attach_entry()(s.L) == nullptr);
}

TEST_CASE("attach: a coroutine the program resumes from C, as the agent reports it", "[puc]") {
  AttachedState s;
  REQUIRE(s.attach_result == nullptr);
  lua_pushcfunction(s.L, probe);
  lua_setglobal(s.L, "probe");
  REQUIRE(s.run("local x = 1\n", "first") == "");
  void *adapter = dlopen(PROF_LUA_ADAPTER, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(adapter);
  using ResumeFn = void (*)(lua_State *);
  auto enter = reinterpret_cast<ResumeFn>(dlsym(adapter, "prof_adapter_resume_enter"));
  auto leave = reinterpret_cast<ResumeFn>(dlsym(adapter, "prof_adapter_resume_leave"));
  REQUIRE(enter);
  REQUIRE(leave);
  auto resume_probe = [&](bool reported) {
    lua_State *co = lua_newthread(s.L);
    const std::string chunk = "\n  probe()\n";  // line 2
    REQUIRE(luaL_loadbuffer(co, chunk.data(), chunk.size(), "@cres") == 0);
    g_probed = {"not called"};
    int nres = 0;
    if (reported) enter(co);
    const int status = puc_resume(co, s.L, 0, &nres);
    if (reported) leave(co);
    CHECK(status == 0);
    lua_pop(s.L, 1);
  };
  // Unreported, the running coroutine is unknown: the main thread, which
  // runs nothing, has no frames.
  resume_probe(false);
  CHECK(g_probed.empty());
  resume_probe(true);
  CHECK(g_probed == Stack{"probe", "cres:0:2"});
  // Left: the main thread again.
  CHECK(walk_now().empty());
}
