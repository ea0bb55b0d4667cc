// Lua states made by a shared Lua library (libluajit-5.1.so.2, liblua5.x.so)
// get that VM's adapter with no edit to the program: luaL_newstate and
// lua_newstate are interposed, and the state they return is handed to the
// adapter's prof_adapter_attach (preload/luajit/, preload/puc/), loaded
// from beside the agent. lua_resume is interposed too: a PUC adapter is told
// when C resumes a coroutine (prof_adapter_resume_enter/_leave), whose
// frames it then walks. PROF_LUA=0 switches it off.
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
#include <pthread.h>

#include "agent.h"
#include "lua_adapters.h"
#include "lua_attach.h"
#include "next_symbol.h"

using namespace prof;

namespace {

std::atomic<bool> g_enabled{false};
std::atomic<uint64_t> g_not_profiled{0};  // states refused, for the stats
std::atomic<void *(*)()> g_luaL_newstate{nullptr};
std::atomic<void *(*)(void *, void *)> g_lua_newstate{nullptr};
__thread int t_making;  // states being made on this thread, nested

using AttachFn = const char *(*)(void *);
using ResumeFn = void (*)(void *);

// An adapter's entries: attach, and around a resume from C (a PUC adapter's
// prof_adapter_resume_enter/_leave; nullptr where it has none).
struct Entries {
  AttachFn attach = nullptr;
  ResumeFn resume_enter = nullptr, resume_leave = nullptr;
};

// The adapter for the library at `library_path`, loaded once: its entries,
// or none with the reason in *why.
Entries adapter_for(const char *library_path, const char **why) {
  char path[768];
  if (!lua_adapter_path(library_path, path, sizeof path, why)) return {};
  // XXX: RTLD_NOW: an adapter whose Lua API cannot be bound (a library
  // loaded RTLD_LOCAL) must fail here, not at its first call.
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    *why = "its adapter does not load (the Lua library is not global?)";
    return {};
  }
  Entries e;
  e.attach = reinterpret_cast<AttachFn>(dlsym(h, "prof_adapter_attach"));
  e.resume_enter = reinterpret_cast<ResumeFn>(dlsym(h, "prof_adapter_resume_enter"));
  e.resume_leave = reinterpret_cast<ResumeFn>(dlsym(h, "prof_adapter_resume_leave"));
  if (!e.attach) *why = "its adapter cannot attach to a state";
  return e;
}

// The adapters found so far, by the Lua library's load address: a library
// without one is told once, not at each state it makes.
struct Found {
  void *library;
  Entries fn;
  std::atomic<bool> told{false};  // a state of it was refused, and said so
};
Found g_found[8];
int g_nfound;
int g_nfound_published;  // entries complete, for readers without the mutex
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
    __atomic_store_n(&g_nfound_published, g_nfound, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_finding);
  if (found && found->fn.attach) why = found->fn.attach(L);
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

// The adapter entries of the library whose function `fn` is, if loaded.
const Entries *loaded_entries(void *fn) {
  const int n = __atomic_load_n(&g_nfound_published, __ATOMIC_ACQUIRE);
  if (n == 0) return nullptr;
  Dl_info lib;
  if (!dladdr(fn, &lib)) return nullptr;
  for (int i = 0; i < n; i++)
    if (g_found[i].library == lib.dli_fbase) return &g_found[i].fn;
  return nullptr;
}

std::atomic<int (*)(void *, void *, void *, void *)> g_lua_resume{nullptr};
std::atomic<const Entries *> g_resume_entries{nullptr};

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

// XXX: lua_resume's arguments differ by release (5.1 and LuaJIT: L, nargs;
// 5.2, 5.3: L, from, nargs; 5.4: L, from, nargs, nres): all are integer or
// pointer arguments, in registers on x86_64, so four words passed on as
// they came serve every release.
extern "C" __attribute__((visibility("default"))) int lua_resume(void *co, void *a, void *b,
                                                                 void *c) {
  auto real = next_symbol("lua_resume", g_lua_resume);
  if (!real) return -1;
  // A PUC adapter follows a coroutine that C resumes (HAProxy runs each
  // request so): its frames are walked while it runs.
  const Entries *e = g_resume_entries.load(std::memory_order_acquire);
  if (!e && g_enabled.load(std::memory_order_relaxed)) {
    e = loaded_entries(reinterpret_cast<void *>(real));
    if (e) g_resume_entries.store(e, std::memory_order_release);
  }
  if (!e || !e->resume_enter) return real(co, a, b, c);
  e->resume_enter(co);
  const int status = real(co, a, b, c);
  e->resume_leave(co);
  return status;
}
