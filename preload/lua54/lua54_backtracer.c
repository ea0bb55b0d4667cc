#include "lua54_backtracer.h"

#include "call_walk.h"
#include "running_state.h"

/* Coroutines resumed inside one another; deeper nests are cut here. */
#define MAX_RESUME_DEPTH 256

static uint64_t g_reentry;

void lua54_backtrace_set_reentry(uint64_t pc) { __atomic_store_n(&g_reentry, pc, __ATOMIC_RELAXED); }


static int vmstate_of(lua_State *main, const struct CallWalk *w) {
  if (l54_collecting(l54_state(main)->l_G)) return PROF_VMST_GC;
  if (w->n == 0) return PROF_VMST_INTERP;
  return w->frames[0].type == PROF_FRAME_LFUNC ? PROF_VMST_LFUNC : PROF_VMST_CFUNC;
}

/* The walk of every state this thread runs, innermost first, into w. */
static void walk_states(struct ThreadSlot *s, lua_State *main, struct CallWalk *w) {
  bool running = true;
  int depth = 0;
  for (const struct ResumeLink *link = __atomic_load_n(&s->top, __ATOMIC_RELAXED);
       link && depth < MAX_RESUME_DEPTH && w->n < w->max; link = link->prev, depth++) {
    call_walk_state(w, l54_state(link->co), running);
    running = false;
  }
  if (w->n < w->max) call_walk_state(w, l54_state(main), running);
}

/* Whether this thread runs the very CallInfos t noted, all but the
** innermost with the same saved pc or C function. */
static bool repeats(const struct WalkTrail *t, struct ThreadSlot *s, lua_State *main) {
  int at = 0, depth = 0;
  for (const struct ResumeLink *link = s->top; link; link = link->prev)
    if (++depth > MAX_RESUME_DEPTH || !call_walk_matches(t, l54_state(link->co), &at)) return false;
  return call_walk_matches(t, l54_state(main), &at) && at == t->entries;
}

int lua54_recall(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate, int *unchanged) {
  struct ThreadSlot *s = &lua54_slot;
  lua_State *main = s->main;
  struct WalkTrail *t = s->trail;
  *unchanged = 0;
  /* XXX: only where no frame is half-written (the allocator runs) and no
  ** other walk is under way; else a plain walk, and the trail is dropped. */
  if (!main || !t || s->in_alloc <= 0 || s->walking || max <= 0 || max > 2 * TRAIL_MAX) {
    if (t) t->entries = 0;
    return lua54_backtrace(ctx, frames, max, vmstate);
  }
  s->walking++;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  struct CallWalk w = {
      .clean_point = true,
      .cache = s->cache,
      .reentry = __atomic_load_n(&g_reentry, __ATOMIC_RELAXED),
      .epoch = call_walk_epoch(),
      .frames = frames,
      .max = 1,
      .steps_left = 1,
  };
  if (t->entries > 0 && t->whole && t->main == main && t->epoch == w.epoch &&
      t->reentry == w.reentry && t->n <= max && repeats(t, s, main)) {
    /* The innermost frame again (its line may have moved), the rest as noted. */
    walk_states(s, main, &w);
    if (w.n == 1) {
      t->frames[0] = frames[0];
      for (int i = 1; i < t->n; i++) frames[i] = t->frames[i];
      w.n = t->n;
      *unchanged = t->n - 1;
    }
  }
  if (*unchanged == 0) {
    t->entries = 0;
    t->whole = true;
    t->main = main;
    t->epoch = w.epoch;
    t->reentry = w.reentry;
    w = (struct CallWalk){.clean_point = true, .cache = s->cache, .reentry = t->reentry,
                          .epoch = t->epoch, .frames = frames, .max = max,
                          .steps_left = max + 64, .trail = t};
    walk_states(s, main, &w);
    t->n = w.n;
    for (int i = 0; i < w.n; i++) t->frames[i] = frames[i];
  }
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  s->walking--;
  *vmstate = vmstate_of(main, &w);
  return w.n;
}

int lua54_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate) {
  (void)ctx;
  struct ThreadSlot *s = &lua54_slot;
  lua_State *main = __atomic_load_n(&s->main, __ATOMIC_RELAXED);
  if (!main) {
    *vmstate = -1;
    return 0;
  }
  /* XXX: a walk interrupted by a signal whose handler walks again must not
  ** see the cache half-updated: only the outer walk uses it. */
  const int nested = s->walking++;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  struct prof_guest_frame innermost;
  struct CallWalk w = {
      .clean_point = s->in_alloc > 0,
      .cache = nested ? NULL : s->cache,
      .reentry = __atomic_load_n(&g_reentry, __ATOMIC_RELAXED),
      .epoch = call_walk_epoch(),
      .frames = max > 0 ? frames : &innermost,
      .max = max > 0 ? max : 1,
      .steps_left = (max > 0 ? max : 1) + 64,
  };
  walk_states(s, main, &w);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  s->walking--;
  *vmstate = vmstate_of(main, &w);
  return max > 0 ? w.n : 0;
}
