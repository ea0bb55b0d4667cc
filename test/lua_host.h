// A host program for the Lua 5.4 adapter's tests: it embeds liblua5.4,
// stands in for the agent (it defines prof_register_guest and the symbol
// functions, so the module registers with it) and loads prof_lua.so.
//
// Invariants: the symbols the module published are kept for the whole
// process (a prototype address may be reused by a later universe: the newest
// name wins, as in a stream); frames are named "chunk:linedefined:line" for
// Lua functions (chunk without its '@' or '='), by their published name for
// C functions, "?" when nothing was published for the address.
#pragma once

#include <csignal>
#include <string>
#include <vector>

#include <lua.hpp>

#include "libprof.h"

// The backtracer the module registered (nullptr before any registration).
prof_guest_backtracer registered_backtracer();
// The stack recaller it registered beside it (nullptr: none).
prof_guest_stack_recaller registered_recaller();

std::string frame_name(const prof_guest_frame &f);
std::vector<std::string> frame_names(const prof_guest_frame *frames, int n);
// Whether a Lua frame's line lies in its function (published first line up
// to the chunk's last line); C frames must be named.
bool frame_plausible(const prof_guest_frame &f, int chunk_lines);

struct HostGlobal {
  const char *name;
  lua_CFunction fn;
};

class LuaHost {
 public:
  // A fresh universe with the standard libraries, `globals` set, then the
  // module required unless told not to (after the globals, so that its scan
  // names them); `alloc` (optional) replaces the default allocator.
  explicit LuaHost(std::vector<HostGlobal> globals = {}, lua_Alloc alloc = nullptr,
                   void *ud = nullptr, bool with_module = true);
  ~LuaHost();
  LuaHost(const LuaHost &) = delete;
  LuaHost &operator=(const LuaHost &) = delete;

  lua_State *L() const { return L_; }
  bool module_enabled() const { return enabled_; }
  // Runs `source` as chunk "@name"; returns the error message, or "" when it
  // ran. package.cpath finds the module.
  std::string run(const std::string &source, const std::string &name = "t");

 private:
  lua_State *L_;
  bool enabled_ = false;
};

// Makes fn the SIGPROF handler (SA_RESTART) for its lifetime.
class SigprofHandler {
 public:
  explicit SigprofHandler(void (*fn)(int));
  ~SigprofHandler();
  SigprofHandler(const SigprofHandler &) = delete;
  SigprofHandler &operator=(const SigprofHandler &) = delete;
  bool installed() const { return installed_; }

 private:
  struct sigaction old_ {};
  bool installed_;
};
