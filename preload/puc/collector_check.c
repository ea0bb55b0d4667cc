#include "collector_check.h"

#include "check_reason.h"
#include "puc_layout.h"
#include "puc_walk.h"

#define LAY puc_layout
/* The incremental mode's gckind (KGC_INC), beside the layout's gen_kind. */
#define KGC_INC 0

#define differs(why, why_len, fmt, ...) \
  check_reason((why), (why_len), "internals differ from %s: " fmt, LAY.release, ##__VA_ARGS__)

void collector_watch_free(struct CollectorWatch *cw) {
  if (!cw->observing) return;
  if (puc_byte(cw->g, LAY.global_gcstopem) > 1 || puc_byte(cw->g, LAY.global_gckind) > LAY.gen_kind)
    cw->odd_flag++;
  cw->frees_in_step += puc_collecting(cw->g);
}

/* Runs one collection step by step over fresh garbage and checks that the
** frees inside it, and only they, see the collector running. */
static bool one_mode(struct CollectorWatch *cw, lua_State *L, int kind, char *why, size_t why_len) {
  const bool gen = kind == LAY.gen_kind;
  if (puc_byte(cw->g, LAY.global_gckind) != kind)
    return differs(why, why_len, "collector mode field");
  /* XXX: the garbage is made between two cycles, with the collector held,
  ** so that all of it dies inside the steps below (a full collection frees
  ** some outside any step, see puc_collecting). */
  const int running = lua_gc(L, LUA_GCISRUNNING);
  lua_gc(L, LUA_GCCOLLECT);
  lua_gc(L, LUA_GCSTOP);
  for (int i = 0; i < 64; i++) {
    lua_createtable(L, 1, 0);
    lua_pop(L, 1);
  }
  lua_gc(L, LUA_GCRESTART);
  const bool idle = !puc_collecting(cw->g);
  cw->frees_in_step = 0;
  cw->observing = true;
  /* A generational step (a young collection) never ends a cycle: it ends
  ** once the garbage is gone. */
  for (int step = 0; step < 100000 && !(gen && cw->frees_in_step >= 64) &&
                     !lua_gc(L, LUA_GCSTEP, 0);
       step++) {
  }
  cw->observing = false;
  if (!running) lua_gc(L, LUA_GCSTOP);
  if (!idle || cw->frees_in_step < 64 || cw->odd_flag || puc_collecting(cw->g))
    return differs(why, why_len, "collector state (%s mode)", gen ? "generational" : "incremental");
  return true;
}

bool collector_check(struct CollectorWatch *cw, lua_State *L, char *why, size_t why_len) {
  if (puc_collecting(cw->g)) return differs(why, why_len, "collector seen running outside it");
  /* lua_gc's mode switches return the previous mode: they prove gckind. */
  const int mode = lua_gc(L, LUA_GCINC, 0, 0, 0);
  if (mode != LUA_GCINC && mode != LUA_GCGEN)
    return check_reason(why, why_len, "cannot run the collector here (inside a finalizer?)");
  const bool inc_ok = one_mode(cw, L, KGC_INC, why, why_len);
  lua_gc(L, LUA_GCGEN, 0, 0);
  const bool gen_ok = inc_ok && one_mode(cw, L, LAY.gen_kind, why, why_len);
  if (mode == LUA_GCINC) lua_gc(L, LUA_GCINC, 0, 0, 0);
  return gen_ok;
}
