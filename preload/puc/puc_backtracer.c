#include "puc_backtracer.h"

#include "puc_threads.h"
#include "puc_walk.h"
#include "universes.h"

/* Coroutines resumed inside one another; deeper nests are cut here. */
#define MAX_RESUME_DEPTH 256

static uint64_t g_reentry;

void puc_backtrace_set_reentry(uint64_t pc) { __atomic_store_n(&g_reentry, pc, __ATOMIC_RELAXED); }

/* Room for the cut frame: walks get max - 1 frames when max > 1. */
static int walk_room(int max) { return max > 1 ? max - 1 : max; }

int puc_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate) {
  (void)ctx;
  struct PucSlot *s = &puc_slot;
  lua_State *main = __atomic_load_n(&s->main, __ATOMIC_RELAXED);
  if (!main || !universe_live(main)) {
    *vmstate = -1;
    return 0;
  }
  s->walking++;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  struct prof_guest_frame innermost;
  struct PucWalk w = {
      .clean_point = s->in_alloc > 0,
      .reentry = __atomic_load_n(&g_reentry, __ATOMIC_RELAXED),
      .frames = max > 0 ? frames : &innermost,
      .max = max > 0 ? walk_room(max) : 1,
      .steps_left = (max > 0 ? max : 1) + 64,
  };
  const void *global = puc_global(main);
  bool running = true;
  int depth = 0;
  /* Only the coroutines of this universe: another one's, resumed on this
  ** thread, are its own. */
  for (const struct ResumeLink *link = __atomic_load_n(&s->top, __ATOMIC_RELAXED);
       link && depth < MAX_RESUME_DEPTH; link = link->prev, depth++) {
    if (puc_global(link->co) != global) continue;
    puc_walk_state(&w, link->co, running);
    running = false;
  }
  puc_walk_state(&w, main, running);
  if (w.cut && max > 1)
    w.frames[w.n++] = (struct prof_guest_frame){PROF_FRAME_CFUNC, PROF_GUEST_CUT_ADDR, 0};
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  s->walking--;
  *vmstate = w.n == 0 ? PROF_VMST_INTERP
                      : w.frames[0].type == PROF_FRAME_LFUNC ? PROF_VMST_LFUNC : PROF_VMST_CFUNC;
  return max > 0 ? w.n : 0;
}
