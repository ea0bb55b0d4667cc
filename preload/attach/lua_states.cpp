// attached_lua (lua_states.h): the adapter of the program's Lua, loaded and
// bound at the attach, told at the stop.
#include "attach/lua_states.h"

#include <cstdio>
#include <cstring>
#include <dlfcn.h>

#include "lua_adapters.h"
#include "thread_state.h"

namespace prof {
void on_modules_changed();  // lifecycle.cpp

namespace attached_lua {
namespace {

using AttachLiveFn = const char *(*)(int memory);
using DetachLiveFn = void (*)();
using BindFn = void (*)(void *(*)(const char *));

DetachLiveFn g_detach = nullptr;  // the adapter's, while its states are sampled
char g_status[600];

void *g_self = nullptr;  // the agent's own handle: its API by name
void *agent_symbol(const char *name) { return dlsym(g_self, name); }

// The library name whose adapter serves the Lua of the object at `object`
// (a shared Lua library's own file name, or what an executable that exports
// the Lua API carries: LuaJIT, or lua_ident's release), or nullptr.
const char *library_name(void *program, const Dl_info &object, char *name, size_t size) {
  const char *base = strrchr(object.dli_fname, '/');
  base = base ? base + 1 : object.dli_fname;
  if (strncmp(base, "liblua", 6) == 0) return object.dli_fname;
  Dl_info at;
  void *jit = dlsym(program, "luaJIT_setmode");
  if (jit && dladdr(jit, &at) && at.dli_fbase == object.dli_fbase) return "libluajit-5.1.so";
  // lua_ident: "$Lua: Lua 5.1.5 ..." (5.1), "$LuaVersion: Lua 5.4.4 ..." (later).
  const char *ident = static_cast<const char *>(dlsym(program, "lua_ident"));
  const char *release = ident ? strstr(ident, "Lua 5.") : nullptr;
  if (!release || release[6] < '1' || release[6] > '4') return nullptr;
  snprintf(name, size, "liblua5.%c.so", release[6]);
  return name;
}

// Binds the loaded adapter to the agent's API and asks it to find the
// states: nullptr (and g_detach set) when it does, else why not.
const char *start_adapter(void *adapter, bool memory) {
  Dl_info self;
  if (!g_self && dladdr(reinterpret_cast<void *>(&agent_symbol), &self) && self.dli_fname)
    g_self = dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  auto bind = reinterpret_cast<BindFn>(dlsym(adapter, "prof_adapter_bind_agent"));
  auto attach = reinterpret_cast<AttachLiveFn>(dlsym(adapter, "prof_adapter_attach_live"));
  auto detach = reinterpret_cast<DetachLiveFn>(dlsym(adapter, "prof_adapter_detach_live"));
  if (!bind || !attach || !detach || !g_self) return "its adapter cannot attach to live states";
  bind(agent_symbol);
  const char *why = attach(memory ? 1 : 0);
  if (!why) g_detach = detach;
  return why;
}

}  // namespace

void start(bool wanted, bool memory) {
  g_status[0] = 0;
  if (!wanted) return;
  GuardScope guard;  // the adapter's load and its scratch state are the agent's
  void *program = dlopen(nullptr, RTLD_LAZY);
  void *maker = program ? dlsym(program, "luaL_newstate") : nullptr;
  Dl_info object;
  if (!maker || !dladdr(maker, &object) || !object.dli_fname) {
    snprintf(g_status, sizeof g_status, "no Lua in the process");
    return;
  }
  char name_room[32], path[768], loader_said[400];
  const char *name = library_name(program, object, name_room, sizeof name_room);
  const char *why = "libprof has no adapter for it";
  if (name && lua_adapter_path(name, path, sizeof path, &why)) {
    void *adapter = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (adapter) {
      on_modules_changed();  // (its wrapper's frames are in the memory stream's stacks)
      why = start_adapter(adapter, memory);
    } else {
      snprintf(loader_said, sizeof loader_said, "its adapter does not load: %s", dlerror());
      why = loader_said;
    }
  }
  const char *base = name ? strrchr(name, '/') : nullptr;
  const char *found = memory ? "its states are sampled with their Lua frames, and their "
                               "allocations charged to their Lua lines"
                             : "its states are sampled with their Lua frames";
  snprintf(g_status, sizeof g_status, "%s (%s): %s", base ? base + 1 : name ? name : "a Lua",
           object.dli_fname, why ? why : found);
}

void stop() {
  if (g_detach) g_detach();
  g_detach = nullptr;
}

const char *status() { return g_status; }

}  // namespace attached_lua
}  // namespace prof
