// The automatic attach of Lua adapters to states a shared Lua library makes
// (lua_attach.cpp).
#pragma once

#include <cstdint>

#include "config.h"

namespace prof {

// Arms it (cfg.lua), once the agent has started.
void lua_attach_start(const Config &cfg);
// The states made that their adapter refused (the first of each library is
// said on stderr), for the stats record.
uint64_t lua_states_not_profiled();

}  // namespace prof
