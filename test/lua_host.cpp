#include "lua_host.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>

namespace {

struct Lfunc {
  std::string chunk;
  uint64_t line;
};

std::mutex g_mutex;
std::map<uint64_t, Lfunc> g_lfuncs;
std::map<uint64_t, std::string> g_cfuncs;
prof_guest_backtracer g_backtracer = nullptr;
prof_guest_stack_recaller g_recaller = nullptr;

std::string bare_chunk(const std::string &chunk) {
  return !chunk.empty() && (chunk[0] == '@' || chunk[0] == '=') ? chunk.substr(1) : chunk;
}

void *default_alloc(void *, void *ptr, size_t, size_t nsize) {
  if (nsize == 0) {
    free(ptr);
    return nullptr;
  }
  return realloc(ptr, nsize);
}

}  // namespace

// The agent's API as this host provides it (exported: the module binds to it).
extern "C" {
void prof_register_guest(prof_guest_backtracer fn, void *) {
  g_backtracer = fn;
  g_recaller = nullptr;
}
void prof_register_guest_stack_recall(prof_guest_stack_recaller fn, void *) { g_recaller = fn; }
void prof_guest_symbol(uint64_t addr, const char *chunk, uint64_t line) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_lfuncs[addr] = Lfunc{chunk, line};
}
void prof_guest_cfunc_symbol(uint64_t addr, const char *name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_cfuncs[addr] = name;
}
}

prof_guest_backtracer registered_backtracer() { return g_backtracer; }
prof_guest_stack_recaller registered_recaller() { return g_recaller; }

std::string frame_name(const prof_guest_frame &f) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (f.type == PROF_FRAME_LFUNC) {
    auto it = g_lfuncs.find(f.addr);
    if (it == g_lfuncs.end()) return "?";
    return bare_chunk(it->second.chunk) + ":" + std::to_string(it->second.line) + ":" +
           std::to_string(f.line);
  }
  auto it = g_cfuncs.find(f.addr);
  return it == g_cfuncs.end() ? "?" : it->second;
}

std::vector<std::string> frame_names(const prof_guest_frame *frames, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; i++) out.push_back(frame_name(frames[i]));
  return out;
}

bool frame_plausible(const prof_guest_frame &f, int chunk_lines) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (f.type == PROF_FRAME_CFUNC) return g_cfuncs.count(f.addr) != 0;
  if (f.type != PROF_FRAME_LFUNC) return false;
  auto it = g_lfuncs.find(f.addr);
  // Line 0: the frame is being replaced by a tail call (puc_walk.h).
  return it != g_lfuncs.end() &&
         (f.line == 0 || (f.line >= it->second.line && f.line <= uint64_t(chunk_lines)));
}

LuaHost::LuaHost(std::vector<HostGlobal> globals, lua_Alloc alloc, void *ud, bool with_module)
    : L_(lua_newstate(alloc ? alloc : default_alloc, ud)) {
  if (!L_) throw std::runtime_error("lua_newstate failed");
  luaL_openlibs(L_);
  for (const HostGlobal &g : globals) {
    lua_pushcfunction(L_, g.fn);
    lua_setglobal(L_, g.name);
  }
  lua_getglobal(L_, "package");
  lua_pushstring(L_, PROF_LUA_MODULE_DIR "/?.so");
  lua_setfield(L_, -2, "cpath");
  lua_pop(L_, 1);
  if (!with_module) return;
  lua_getglobal(L_, "require");
  lua_pushstring(L_, "prof_lua");
  if (lua_pcall(L_, 1, 1, 0) != LUA_OK)
    throw std::runtime_error(std::string("require prof_lua: ") + lua_tostring(L_, -1));
  lua_getfield(L_, -1, "enabled");
  enabled_ = lua_toboolean(L_, -1);
  lua_pop(L_, 2);
}

LuaHost::~LuaHost() { lua_close(L_); }

std::string LuaHost::run(const std::string &source, const std::string &name) {
  const std::string chunk = "@" + name;
  if (luaL_loadbufferx(L_, source.data(), source.size(), chunk.c_str(), "t") != LUA_OK ||
      lua_pcall(L_, 0, 0, 0) != LUA_OK) {
    std::string err = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "(error object)";
    lua_pop(L_, 1);
    return err;
  }
  return "";
}

SigprofHandler::SigprofHandler(void (*fn)(int)) {
  struct sigaction sa {};
  sa.sa_handler = fn;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  installed_ = sigaction(SIGPROF, &sa, &old_) == 0;
}

SigprofHandler::~SigprofHandler() {
  if (installed_) sigaction(SIGPROF, &old_, nullptr);
}
