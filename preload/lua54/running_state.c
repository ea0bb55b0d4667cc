#include "running_state.h"

#include <stdint.h>
#include <sys/mman.h>

#include <lauxlib.h>

#include "call_walk.h"
#include "coroutine_wraps.h"
#include "libprof.h"

__thread struct ThreadSlot lua54_slot __attribute__((tls_model("initial-exec")));

/* XXX: the slot is read by this thread's own signal handlers, so a compiler
** barrier orders its writes; no other thread ever reads it. */
#define SIGNAL_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

static void *map_zeroed(size_t size) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

void running_state_switch(lua_State *main) {
  struct ThreadSlot *s = &lua54_slot;
  if (!s->cache) s->cache = map_zeroed(sizeof(struct LineCache));
  if (!s->trail) s->trail = map_zeroed(sizeof(struct WalkTrail));
  SIGNAL_FENCE();
  s->main = main;
  SIGNAL_FENCE();
}

void running_state_bind(lua_State *L) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State *main = lua_tothread(L, -1);
  lua_pop(L, 1);
  running_state_switch(main);
}

void running_state_unbind(lua_State *main) {
  if (lua54_slot.main != main) return;
  lua54_slot.main = NULL;
  SIGNAL_FENCE();
}

void running_state_resume_enter(lua_State *co) {
  lua_rawgeti(co, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State *main = lua_tothread(co, -1);
  lua_pop(co, 1);
  if (main && main != lua54_slot.main) running_state_switch(main);
  resume_links_enter(&lua54_slot.top, co);
}

void running_state_resume_leave(lua_State *co) {
  (void)co;
  resume_links_leave(&lua54_slot.top);
}

int coroutine_resume_tracked(lua_State *co, lua_State *from, int narg, int *nres) {
  struct ThreadSlot *s = &lua54_slot;
  if (!s->main) running_state_bind(from);
  struct ResumeLink link = {co, s->top};
  SIGNAL_FENCE();
  s->top = &link;
  SIGNAL_FENCE();
  const int status = lua_resume(co, from, narg, nres);
  SIGNAL_FENCE();
  s->top = link.prev;
  SIGNAL_FENCE();
  return status;
}

int coroutine_reset_tracked(lua_State *co) {
  struct ThreadSlot *s = &lua54_slot;
  struct ResumeLink link = {co, s->top};
  SIGNAL_FENCE();
  s->top = &link;
  SIGNAL_FENCE();
  const int status = lua_resetthread(co);
  SIGNAL_FENCE();
  s->top = link.prev;
  SIGNAL_FENCE();
  return status;
}

/* coroutine.close(co): as the standard one (lcorolib.c's luaB_close and
** auxstatus), with co tracked while its __close handlers run. */
static int coroutine_close(lua_State *L) {
  lua_State *co = lua_tothread(L, 1);
  luaL_argexpected(L, co, 1, "thread");
  const char *busy = NULL; /* the state that forbids closing it */
  lua_Debug ar;
  if (co == L)
    busy = "running";
  else if (lua_status(co) == LUA_OK && lua_getstack(co, 0, &ar))
    busy = "normal";
  if (busy) return luaL_error(L, "cannot close a %s coroutine", busy);
  if (coroutine_reset_tracked(co) == LUA_OK) {
    lua_pushboolean(L, 1);
    return 1;
  }
  lua_pushboolean(L, 0);
  lua_xmove(co, L, 1); /* the error */
  return 2;
}

void running_state_wrap_coroutines(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  coroutine_wraps_install(L, idx);
  lua_pushcfunction(L, coroutine_close);
  lua_setfield(L, idx, "close");
}
