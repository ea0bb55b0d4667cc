#include "lua54_backtracer.h"

#include "call_walk.h"
#include "running_state.h"

static uint64_t g_reentry;

void lua54_backtrace_set_reentry(uint64_t pc) { __atomic_store_n(&g_reentry, pc, __ATOMIC_RELAXED); }

/* Coroutines resumed inside one another; deeper nests are cut here. */
#define MAX_RESUME_DEPTH 256

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
  bool running = true;
  int depth = 0;
  for (const struct ResumeLink *link = __atomic_load_n(&s->top, __ATOMIC_RELAXED);
       link && depth < MAX_RESUME_DEPTH && w.n < w.max; link = link->prev, depth++) {
    call_walk_state(&w, l54_state(link->co), running);
    running = false;
  }
  if (w.n < w.max) call_walk_state(&w, l54_state(main), running);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  s->walking--;

  if (l54_collecting(l54_state(main)->l_G))
    *vmstate = PROF_VMST_GC;
  else if (w.n == 0)
    *vmstate = PROF_VMST_INTERP;
  else
    *vmstate = w.frames[0].type == PROF_FRAME_LFUNC ? PROF_VMST_LFUNC : PROF_VMST_CFUNC;
  return max > 0 ? w.n : 0;
}
