#include "puc_backtracer.h"

#include "puc_threads.h"
#include "puc_walk.h"
#include "universes.h"

/* Coroutines resumed inside one another; deeper nests are cut here. */
#define MAX_RESUME_DEPTH 256

static uint64_t g_reentry;
/* Universes found live (live_states.h) are read through safe_read alone. */
static bool g_all_safe;
/* The trail of the last remembered walk on any thread: the marks it leaves
** (puc_walk.h) vouch only for that trail's record. */
static struct WalkTrail *g_marking;

void puc_backtrace_set_reentry(uint64_t pc) { __atomic_store_n(&g_reentry, pc, __ATOMIC_RELAXED); }

void puc_backtrace_read_safely(bool yes) { __atomic_store_n(&g_all_safe, yes, __ATOMIC_RELAXED); }

static int vmstate_of(lua_State *main, const struct prof_guest_frame *frames, int n) {
  if (puc_collecting(puc_global(main))) return PROF_VMST_GC;
  if (n == 0) return PROF_VMST_INTERP;
  return frames[0].type == PROF_FRAME_LFUNC ? PROF_VMST_LFUNC : PROF_VMST_CFUNC;
}

/* Whether co belongs to the universe of main: another universe's
** coroutines, resumed on this thread, are walked as that universe's. */
static bool same_universe(lua_State *co, lua_State *main) {
  return puc_global(co) == puc_global(main);
}

/* Room for the cut frame: walks get max - 1 frames when max > 1. */
static int walk_room(int max) { return max > 1 ? max - 1 : max; }

/* Ends a walk that stopped at its limit with the cut frame (libprof.h). */
static void mark_cut(struct PucWalk *w, int max) {
  if (w->cut && max > 1)
    w->frames[w->n++] = (struct prof_guest_frame){PROF_FRAME_CFUNC, PROF_GUEST_CUT_ADDR, 0};
}

int puc_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate) {
  (void)ctx;
  struct PucSlot *s = &puc_slot;
  lua_State *main = __atomic_load_n(&s->main, __ATOMIC_RELAXED);
  if (!main || !universe_live(main)) {
    *vmstate = -1;
    return 0;
  }
  /* XXX: a walk interrupted by a signal whose handler walks again must not
  ** see the cache half-updated: only the outer walk uses it. */
  const int nested = s->walking++;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  struct prof_guest_frame innermost;
  struct PucWalk w = {
      /* (a universe whose allocator runs on this thread lives) */
      .all_safe = __atomic_load_n(&g_all_safe, __ATOMIC_RELAXED) && s->in_alloc <= 0,
      .clean_point = s->in_alloc > 0,
      .cache = nested ? NULL : s->cache,
      .reentry = __atomic_load_n(&g_reentry, __ATOMIC_RELAXED),
      .epoch = puc_walk_epoch(),
      .frames = max > 0 ? frames : &innermost,
      .max = max > 0 ? walk_room(max) : 1,
      .steps_left = (max > 0 ? max : 1) + 64,
  };
  bool running = true;
  int depth = 0;
  for (const struct ResumeLink *link = __atomic_load_n(&s->top, __ATOMIC_RELAXED);
       link && depth < MAX_RESUME_DEPTH; link = link->prev, depth++) {
    if (!same_universe(link->co, main)) continue;
    puc_walk_state(&w, link->co, running);
    running = false;
  }
  puc_walk_state(&w, main, running);
  mark_cut(&w, max);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  s->walking--;
  *vmstate = vmstate_of(main, w.frames, w.n);
  return max > 0 ? w.n : 0;
}

const struct prof_guest_frame *puc_recall(void *ctx, struct prof_guest_frame *room, int max,
                                          int *n, int *vmstate, int *unchanged) {
  struct PucSlot *s = &puc_slot;
  lua_State *main = s->main;
  struct WalkTrail *t = s->trail;
  *unchanged = 0;
  /* XXX: only where no frame is half-written (the allocator runs) and no
  ** other walk is under way; else a plain walk, and the trail is dropped. */
  if (!main || !t || s->in_alloc <= 0 || s->walking || max <= 0) {
    if (t) t->entries = 0;
    *n = puc_backtrace(ctx, room, max, vmstate);
    return room;
  }
  s->walking++;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  /* XXX: another thread's walk of the same universe (one that resumed a
  ** coroutine) marks frames this trail does not describe: forget it. */
  if (__atomic_load_n(&g_marking, __ATOMIC_RELAXED) != t) {
    t->entries = 0;
    __atomic_store_n(&g_marking, t, __ATOMIC_RELAXED);
  }
  const uint64_t reentry = __atomic_load_n(&g_reentry, __ATOMIC_RELAXED);
  const uint32_t epoch = puc_walk_epoch();
  const struct prof_guest_frame *kept =
      s->top ? NULL : puc_walk_nothing_pushed(t, main, walk_room(max), epoch, reentry, main, n);
  if (kept) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    s->walking--;
    *unchanged = *n;
    *vmstate = vmstate_of(main, kept, *n);
    return kept;
  }
  const void *states[MAX_RESUME_DEPTH + 1];
  int nstates = 0;
  for (const struct ResumeLink *link = s->top; link && nstates < MAX_RESUME_DEPTH; link = link->prev)
    if (same_universe(link->co, main)) states[nstates++] = link->co;
  states[nstates++] = main;
  struct PucWalk w = {
      .clean_point = true,
      .cache = s->cache,
      .reentry = reentry,
      .epoch = epoch,
      .frames = room,
      .max = walk_room(max),
      .steps_left = max + 64,
  };
  const struct prof_guest_frame *frames = puc_walk_remembered(&w, states, nstates, t, main, unchanged);
  mark_cut(&w, max); /* only a plain walk is cut, and it lies in room */
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  s->walking--;
  *n = w.n;
  *vmstate = vmstate_of(main, frames, w.n);
  return frames;
}
