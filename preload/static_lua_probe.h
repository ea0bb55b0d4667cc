// The probe of an executable for a Lua built into it, and whether it
// exports the Lua API (static_lua_notice.h says what it found).
//
// How it tells: PUC Lua links its lua_ident into .rodata ("$Lua: Lua 5.1.5
// ..." in 5.1, "$LuaVersion: Lua 5.x.y ..." from 5.2 on), LuaJIT its
// version ("LuaJIT 2.1.0-beta3", its jit.version). An executable that has
// luaL_newstate or lua_newstate among its dynamic symbols exports the API
// (the stock lua5.x, luajit, tarantool, Redis: a module can bind to it,
// where its Lua loads one, `-l prof_lua`), or takes it from a shared Lua
// that the agent attaches itself.
//
// Invariants: the file is read (lseek, read) into the caller's buffer,
// never mapped, so a file that changes under it gives a wrong answer at
// worst, never a fault; no allocation, no lock, no stdio. At most the section
// headers, the first kMaxProbedRodata bytes of .rodata and, where a Lua
// is found there, .dynstr are read; a program whose .dynstr passes
// kMaxProbedDynstr (hundreds of thousands of exported names) is taken to
// export its Lua too.
#pragma once

#include <cstddef>
#include <cstdint>

namespace prof {

constexpr size_t kProbeScratchBytes = 64 << 10;
constexpr uint64_t kMaxProbedRodata = 8 << 20;
constexpr uint64_t kMaxProbedDynstr = 1 << 20;

enum class BuiltInLua {
  kNone,      // no Lua found in it (or its file cannot be read as this machine's ELF)
  kHidden,    // its Lua API is not exported: no adapter can bind to it
  kExported,  // its Lua API is exported (or taken from a shared Lua)
};

// The Lua or LuaJIT built into the ELF executable open on `fd`, its release
// in `release` ("Lua 5.1", "LuaJIT 2.1") unless kNone. `scratch` holds
// kProbeScratchBytes.
BuiltInLua built_in_lua(int fd, char *scratch, char (&release)[16]);

}  // namespace prof
