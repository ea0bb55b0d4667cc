#include "lua_adapters.h"

#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <libgen.h>
#include <unistd.h>

namespace prof {
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
    {"liblua5.1.so", {"lua51/prof_lua.so", "lua/5.1/prof_lua.so"}},
    {"liblua5.2.so", {"lua52/prof_lua.so", "lua/5.2/prof_lua.so"}},
    {"liblua5.3.so", {"lua53/prof_lua.so", "lua/5.3/prof_lua.so"}},
    {"liblua5.4.so", {"lua54/prof_lua.so", "lua/5.4/prof_lua.so"}},
};

}  // namespace

bool lua_adapter_path(const char *library, char *path, size_t size, const char **why) {
  const char *base = strrchr(library, '/');
  base = base ? base + 1 : library;
  const Adapter *adapter = nullptr;
  for (const Adapter &a : kAdapters)
    if (strncmp(base, a.library, strlen(a.library)) == 0) adapter = &a;
  if (!adapter) {
    *why = "libprof has no adapter for this Lua library";
    return false;
  }
  Dl_info self;
  if (!dladdr(reinterpret_cast<void *>(&lua_adapter_path), &self) || !self.dli_fname) {
    *why = "the agent's own directory is unknown";
    return false;
  }
  char dir[512];
  snprintf(dir, sizeof dir, "%s", self.dli_fname);
  const char *agent_dir = dirname(dir);
  for (const char *rel : adapter->paths) {
    snprintf(path, size, "%s/%s", agent_dir, rel);
    if (access(path, R_OK) == 0) return true;
  }
  *why = "its adapter is not beside the agent";
  return false;
}

}  // namespace prof
