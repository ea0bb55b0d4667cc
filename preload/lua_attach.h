// The automatic attach of Lua adapters to states a shared Lua library makes
// (lua_attach.cpp).
#pragma once

#include "config.h"

namespace prof {

// Arms it (cfg.lua), once the agent has started.
void lua_attach_start(const Config &cfg);

}  // namespace prof
