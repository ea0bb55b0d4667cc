#define _GNU_SOURCE
#include "live_states.h"

#include <ucontext.h>

#include "agent_api.h"
#include "lj_build.h"
#include "live_alloc.h"
#include "luajit_backtracer.h"
#include "safe_read.h"
#include "symbols.h"
#include "universe.h"

static struct VmCode g_code; /* the VM's code: every state's; dispatch is each one's */

/* Whether g is a live VM's global_State: its main thread (at the head of
** the GG_State) is the one it names, and names it back. */
static bool vm_at(const char *g) {
  const struct LjLayout *o = lj_build->layout;
  const char *main = lj_main_thread(g);
  uint64_t mainthref = 0, glref = 0;
  if ((uintptr_t)g < 4096 || ((uintptr_t)g & 7) ||
      !lj_safe_read(&mainthref, g + lj_build->g_mainthref, o->ref) ||
      !lj_safe_read(&glref, main + o->L_glref, o->ref))
    return false;
  return mainthref == (uint64_t)(uintptr_t)main && glref == (uint64_t)(uintptr_t)g;
}

/* The universe this thread runs: the one bound to it while its VM lives,
** else the one the interrupted DISPATCH register leads to; the wrapper
** goes into it (live_alloc.h). */
static struct Universe *universe_here(void) {
  struct Universe *u = lj_thread_universe;
  const char *g = u ? __atomic_load_n(&u->g, __ATOMIC_ACQUIRE) : NULL;
  if (g && vm_at(g)) {
    live_alloc_wrap(u);
    return u;
  }
  const ucontext_t *uc = prof_guest_signal_context ? prof_guest_signal_context() : NULL;
  if (!uc) return NULL;
  const uint64_t dispatch = (uint64_t)uc->uc_mcontext.gregs[LJ_REG_DISPATCH];
  g = (const char *)(uintptr_t)(dispatch - lj_build->gg_dispatch + lj_build->gg_g);
  if (!vm_at(g)) return NULL;
  struct VmCode code = g_code;
  code.dispatch = dispatch;
  u = universe_adopt(g, &code);
  lj_thread_universe = u;
  if (u) live_alloc_wrap(u);
  return u;
}

static int live_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate) {
  if (!universe_here()) {
    *vmstate = -1;
    return 0;
  }
  return luajit_backtrace(ctx, frames, max, vmstate);
}

void live_states_start(const struct VmCode *code, bool memory) {
  g_code = *code;
  live_alloc_enable(memory);
  symbols_name_from_signals(true);
  prof_register_guest(live_backtrace, NULL);
}

void live_states_stop(void) {
  prof_register_guest(NULL, NULL);
  live_alloc_enable(false);
  live_alloc_unwrap_all();
  universe_forget_adopted();
}
