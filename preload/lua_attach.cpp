// Lua states made by a shared Lua library (libluajit-5.1.so.2, liblua5.x.so)
// get that VM's adapter with no edit to the program: luaL_newstate and
// lua_newstate are interposed, and the state they return is handed to the
// adapter's prof_adapter_attach (preload/luajit/, preload/lua54/), loaded
// from beside the agent. PROF_LUA=0 switches it off.
//
// Invariants: the program gets the state its call made, attached or not; a
// state made inside another's making (luaL_newstate calls lua_newstate; an
// adapter makes a scratch state for its check) is passed through untouched.
// A VM linked into the executable binds its calls to its own copy, which
// nothing interposes: such programs load the adapter with `require`.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <unistd.h>

#include "agent.h"
#include "lua_attach.h"
#include "next_symbol.h"

using namespace prof;

namespace {

// The adapter of each Lua library, by the start of its file name; paths
// are relative to the agent's directory: the build tree's, then the
// installed one's (cmake --install: P/lib/libprof.so, P/lib/lua/5.x/).
struct Adapter {
  const char *library;
  const char *paths[2];
};
constexpr Adapter kAdapters[] = {
    {"libluajit-5.1.so", {"luajit/prof_luajit.so", "lua/5.1/prof_luajit.so"}},
    {"liblua5.4.so", {"lua54/prof_lua.so", "lua/5.4/prof_lua.so"}},
};

std::atomic<bool> g_enabled{false};
std::atomic<uint64_t> g_not_profiled{0};  // states refused, for the stats
std::atomic<void *(*)()> g_luaL_newstate{nullptr};
std::atomic<void *(*)(void *, void *)> g_lua_newstate{nullptr};
__thread int t_making;  // states being made on this thread, nested

using AttachFn = const char *(*)(void *);

// The adapter for the library at `library_path`, loaded once: its entry,
// or nullptr with the reason in *why.
AttachFn adapter_for(const char *library_path, const char **why) {
  const char *base = strrchr(library_path, '/');
  base = base ? base + 1 : library_path;
  const Adapter *adapter = nullptr;
  for (const Adapter &a : kAdapters)
    if (strncmp(base, a.library, strlen(a.library)) == 0) adapter = &a;
  if (!adapter) {
    *why = "libprof has no adapter for this Lua library";
    return nullptr;
  }
  Dl_info self;
  if (!dladdr(reinterpret_cast<void *>(&adapter_for), &self) || !self.dli_fname) {
    *why = "the agent's own directory is unknown";
    return nullptr;
  }
  char dir[512];
  snprintf(dir, sizeof dir, "%s", self.dli_fname);
  const char *agent_dir = dirname(dir);
  *why = "its adapter is not beside the agent";
  for (const char *rel : adapter->paths) {
    char path[768];
    snprintf(path, sizeof path, "%s/%s", agent_dir, rel);
    if (access(path, R_OK) != 0) continue;
    // XXX: RTLD_NOW: an adapter whose Lua API cannot be bound (a library
    // loaded RTLD_LOCAL) must fail here, not at its first call.
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      *why = "its adapter does not load (the Lua library is not global?)";
      return nullptr;
    }
    auto fn = reinterpret_cast<AttachFn>(dlsym(h, "prof_adapter_attach"));
    if (!fn) *why = "its adapter cannot attach to a state";
    return fn;
  }
  return nullptr;
}

// The adapters found so far, by the Lua library's load address: a library
// without one is told once, not at each state it makes.
struct Found {
  void *library;
  AttachFn fn;
  std::atomic<bool> told{false};  // a state of it was refused, and said so
};
Found g_found[8];
int g_nfound;
pthread_mutex_t g_finding = PTHREAD_MUTEX_INITIALIZER;

// Hands L, which `maker` (a Lua library's function) just returned, to its
// adapter; one line on stderr if it is not profiled.
void attach(void *L, void *maker) {
  GuardScope guard;  // the adapter's load is the agent's, not the program's
  Dl_info lib;
  if (!dladdr(maker, &lib) || !lib.dli_fname) return;
  pthread_mutex_lock(&g_finding);
  Found *found = nullptr;
  for (int i = 0; i < g_nfound; i++)
    if (g_found[i].library == lib.dli_fbase) found = &g_found[i];
  const char *why = "too many Lua libraries";
  if (!found && g_nfound < int(sizeof g_found / sizeof g_found[0])) {
    found = &g_found[g_nfound++];
    found->library = lib.dli_fbase;
    found->fn = adapter_for(lib.dli_fname, &why);
  }
  pthread_mutex_unlock(&g_finding);
  if (found && found->fn) why = found->fn(L);
  if (!why) return;
  g_not_profiled.fetch_add(1, std::memory_order_relaxed);
  if (!found || !found->told.exchange(true))
    say("a Lua state of ", lib.dli_fname, " is not profiled: ", why,
        " (any more such states are counted: lua_states_not_profiled)");
}

template <class Make>
void *made(Make make, void *maker) {
  t_making++;
  void *L = make();
  // (Still counted while attaching: the adapter's scratch state passes through.)
  if (L && t_making == 1 && g_enabled.load(std::memory_order_acquire)) attach(L, maker);
  t_making--;
  return L;
}

}  // namespace

namespace prof {
void lua_attach_start(const Config &cfg) { g_enabled.store(cfg.lua, std::memory_order_release); }
uint64_t lua_states_not_profiled() { return g_not_profiled.load(std::memory_order_relaxed); }
}  // namespace prof

extern "C" __attribute__((visibility("default"))) void *luaL_newstate() {
  auto real = next_symbol("luaL_newstate", g_luaL_newstate);
  if (!real) return nullptr;
  return made([&] { return real(); }, reinterpret_cast<void *>(real));
}

extern "C" __attribute__((visibility("default"))) void *lua_newstate(void *f, void *ud) {
  auto real = next_symbol("lua_newstate", g_lua_newstate);
  if (!real) return nullptr;
  return made([&] { return real(f, ud); }, reinterpret_cast<void *>(real));
}
