// The Lua VM of a process the agent was attached to (prof-run --pid): its
// states were made before the attach, so the automatic attach
// (lua_attach.cpp) never saw them. The agent finds which Lua the program
// runs (the library its luaL_newstate is, or the executable exporting the
// Lua API), loads that VM's adapter from beside itself, binds it to the
// agent's API (the agent is not in the program's scope: the adapter's weak
// references would stay NULL), and asks it to find the live states from
// CPU samples (prof_adapter_attach_live: preload/puc/live_states.h,
// preload/luajit/live_states.h); at the stop, to forget them.
//
// Invariants: start and stop run in normal context (the gdb calls), never
// in the handler; stop runs with no handler running, the process stopped.
// With memory recorded, the adapter puts its allocator wrapper into each
// state it finds (the allocator function alone) and gives each its own back
// at the stop; else nothing is written to the program's states.
#pragma once

namespace prof {
namespace attached_lua {

// Looks for the Lua (wanted: PROF_LUA is not 0) and starts its adapter
// (memory: the agent records memory, so the states get the wrapper).
void start(bool wanted, bool memory);
void stop();
// What start() made of the process's Lua, in one line for prof-run
// ("liblua5.4.so (/usr/bin/lua5.4): its states are sampled ...", "no Lua
// in the process", or why not); "" when not wanted.
const char *status();

}  // namespace attached_lua
}  // namespace prof
