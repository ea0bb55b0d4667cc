// Where each Lua library's guest adapter lies beside the agent (the build
// tree's preload/lua5x/ and luajit/, or the installed lib/lua/5.x/), for
// the automatic attach (lua_attach.cpp) and an attached process's Lua
// (attach/lua_states.cpp).
#pragma once

#include <cstddef>

namespace prof {

// The adapter for the Lua library whose file is named `library` (its base
// name starts "liblua5.4.so", "libluajit-5.1.so", ...): its path into
// `path`, true; else false with the reason in *why.
bool lua_adapter_path(const char *library, char *path, size_t size, const char **why);

}  // namespace prof
