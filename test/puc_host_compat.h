// Force-included into the PUC Lua host tests: the Lua headers with C
// linkage, then the adapter family's API compatibility (5.1's LUA_OK, ...).
#pragma once
#include <lua.hpp>

#include "puc_compat.h"
