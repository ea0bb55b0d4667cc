#include "puc_threads.h"

#include <stdint.h>
#include <sys/mman.h>

#include <lauxlib.h>

#include "coroutine_wraps.h"
#include "agent_api.h"
#include "puc_walk.h"

__thread struct PucSlot puc_slot __attribute__((tls_model("initial-exec")));

/* XXX: the slot is read by this thread's own signal handlers, so a compiler
** barrier orders its writes; no other thread ever reads it. */
#define SIGNAL_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

static void *map_zeroed(size_t size) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

void puc_thread_runs(lua_State *main) {
  struct PucSlot *s = &puc_slot;
  if (main && !s->cache) s->cache = map_zeroed(sizeof(struct LineCache));
  if (main && !s->trail && puc_walk_can_remember()) s->trail = map_zeroed(sizeof(struct WalkTrail));
  SIGNAL_FENCE();
  s->main = main;
  SIGNAL_FENCE();
}

/* The main thread of the universe of L (PUC_MAIN_KEY, set when it starts). */
static lua_State *main_of(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, PUC_MAIN_KEY);
  lua_State *main = lua_tothread(L, -1);
  lua_pop(L, 1);
  return main;
}

void puc_resume_enter(lua_State *co) {
  lua_State *main = main_of(co);
  if (main && main != puc_slot.main) puc_thread_runs(main);
  resume_links_enter(&puc_slot.top, co);
}

void puc_resume_leave(lua_State *co) {
  (void)co;
  resume_links_leave(&puc_slot.top);
}

int coroutine_resume_tracked(lua_State *co, lua_State *from, int narg, int *nres) {
  struct PucSlot *s = &puc_slot;
  if (!s->main || puc_global(s->main) != puc_global(from)) puc_thread_runs(main_of(from));
  struct ResumeLink link = {co, s->top};
  SIGNAL_FENCE();
  s->top = &link;
  SIGNAL_FENCE();
  const int status = puc_resume(co, from, narg, nres);
  SIGNAL_FENCE();
  s->top = link.prev;
  SIGNAL_FENCE();
  return status;
}

#if LUA_VERSION_NUM >= 504
int coroutine_reset_tracked(lua_State *co) {
  struct PucSlot *s = &puc_slot;
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
#endif
