/*
** adapter_entry.h: the entries every PUC Lua adapter (5.1 to 5.4) exports,
** written once: the module `prof_lua` (luaopen_prof_lua: `lua5.x -l
** prof_lua`, require), prof_adapter_attach for the agent, which calls it
** right after the program's luaL_newstate or lua_newstate returned L (no
** library is open in L yet), and prof_adapter_resume_enter/_leave, which
** it calls around the program's own lua_resume, and prof_adapter_attach_live
** and prof_adapter_detach_live for an agent attached to a running process,
** whose states were made before (live_states.h: the check on a scratch
** state, the states found by CPU samples). Each adapter supplies what is
** its release's (adapter_ops).
**
** Both ways in check the layout first: require on the state itself, attach
** on a scratch state of the same library (luaL_newstate + luaL_openlibs,
** closed again). Then the universe is started (start), and what needs the
** standard libraries (start_libs) runs once: at once for require, at the
** first call of a Lua function for attach (a call hook, removed then). The
** backtracer is registered last for require, so that every stack recorded
** is named, and at once for attach. Without the agent, or on a mismatch
** (one line on stderr for require, the reason returned for attach), the
** program runs unchanged.
**
** The module returns a table: enabled (boolean) and, when not enabled,
** reason (string).
*/
#ifndef PROF_PUC_ADAPTER_ENTRY_H
#define PROF_PUC_ADAPTER_ENTRY_H

#include <stdbool.h>
#include <stddef.h>

#include <lua.h>

/* The registry field that anchors a started universe. */
#define ADAPTER_UNIVERSE_KEY "prof_lua.universe"

struct AdapterOps {
  /* Whether the layout is the VM's, on L (standard libraries open); else a
  ** one-line reason in why. */
  bool (*check)(lua_State *L, char *why, size_t why_len);
  /* Starts the universe of L (main: its main thread), anchoring it at
  ** ADAPTER_UNIVERSE_KEY; NULL, or why it could not. */
  const char *(*start)(lua_State *L, lua_State *main);
  void (*start_libs)(lua_State *L);
  /* Names the library's C functions and finds its interpreter, from L
  ** (standard libraries open): what every state of the library shares. */
  void (*name_code)(lua_State *L);
  void (*register_guest)(void);
  /* A coroutine resumed from C enters, and leaves (resume_links.h). */
  void (*resume_enter)(lua_State *co);
  void (*resume_leave)(lua_State *co);
};

extern const struct AdapterOps adapter_ops;

#endif /* PROF_PUC_ADAPTER_ENTRY_H */
