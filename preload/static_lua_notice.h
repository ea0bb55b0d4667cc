// The one line on stderr for a program with Lua built into its executable
// that no adapter attaches to (docs/lua.md): its Lua code shows as the
// native functions that run it. Either its Lua API is not exported (no
// adapter can bind to it), or it is but no adapter was loaded by the time
// of the probe (Redis, whose Lua cannot require a module; a stock
// interpreter run without `-l prof_lua`). static_lua_probe.h tells which.
//
// Invariants: said at most once in a process and the processes forked from
// it, and never at start: the executable is probed at the process's first
// fork (before it: every child then knows), or once the process has run
// kMinRunNs (the memory stream's tick, the end of the streams); a shorter
// process that never forks is never probed. A failing probe says nothing
// and changes nothing; nothing is probed in a signal handler.
#pragma once

#include <cstdint>

#include "config.h"

namespace prof {

// Arms it (cfg.lua), once the agent has started.
void static_lua_notice_start(const Config &cfg);
// Not in a signal handler: probes the executable and says so, unless done
// in this process or one it was forked from, if the process has run `ran_ns`
// long enough.
void say_if_lua_built_in(uint64_t ran_ns);

}  // namespace prof
