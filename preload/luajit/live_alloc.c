#include "live_alloc.h"

#include <stdint.h>

#include <lua.h>

#include "alloc_trampolines.h"
#include "lj_build.h"
#include "safe_read.h"

_Static_assert(UNIVERSES_MAX == ALLOC_TRAMPOLINE_SLOTS, "a trampoline per universe");

static bool g_enabled;

static void *live_alloc(int i, void *ud, void *ptr, size_t osize, size_t nsize) {
  struct Universe *u = universe_at(i);
  if (__atomic_load_n(&u->live_wrap, __ATOMIC_ACQUIRE) != LIVE_WRAP_ON)
    return u->orig(ud, ptr, osize, nsize);
  return universe_alloc(u, ptr, osize, nsize);
}
ALLOC_TRAMPOLINES_32(live_alloc)
static const lua_Alloc g_trampolines[ALLOC_TRAMPOLINE_SLOTS] = ALLOC_TRAMPOLINE_TABLE_32;

void live_alloc_enable(bool yes) { __atomic_store_n(&g_enabled, yes, __ATOMIC_RELAXED); }

static int index_of(const struct Universe *u) { return (int)(u - universe_at(0)); }

static lua_Alloc *allocf_field(const struct Universe *u) {
  return (lua_Alloc *)(uintptr_t)(u->g + lj_build->g_allocf);
}

bool live_alloc_wrap(struct Universe *u) {
  if (u->live_wrap == LIVE_WRAP_ON) return true;
  if (!__atomic_load_n(&g_enabled, __ATOMIC_RELAXED) || !u->adopted) return false;
  lua_Alloc *field = allocf_field(u);
  lua_Alloc now = NULL;
  void *ud = NULL;
  if (!lj_safe_read(&now, field, sizeof now) || !now ||
      !lj_safe_read(&ud, u->g + lj_build->g_allocd, sizeof ud))
    return false;
  const lua_Alloc mine = g_trampolines[index_of(u)];
  if (now == mine) return true; /* another thread of the VM is putting it in */
  u->orig = now;
  u->orig_ud = ud;
  __atomic_store_n(&u->live_wrap, LIVE_WRAP_ON, __ATOMIC_RELEASE);
  /* XXX: the VM was read a moment ago on the thread that runs it; a field
  ** that changed since (lua_setallocf) keeps its new value. */
  if (__atomic_compare_exchange_n(field, &now, mine, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
    return true;
  __atomic_store_n(&u->live_wrap, LIVE_WRAP_NONE, __ATOMIC_RELEASE);
  return false;
}

void live_alloc_unwrap_all(void) {
  for (int i = 0; i < UNIVERSES_MAX; i++) {
    struct Universe *u = universe_at(i);
    if (__atomic_load_n(&u->live_wrap, __ATOMIC_ACQUIRE) != LIVE_WRAP_ON) continue;
    const char *g = __atomic_load_n(&u->g, __ATOMIC_ACQUIRE);
    if (!g || !u->adopted) continue; /* the VM closed: its slot is free */
    lua_Alloc *field = allocf_field(u);
    lua_Alloc expected = g_trampolines[i], now = NULL;
    /* XXX: a thread that read the trampoline just before may still be on
    ** its way into it: the slot keeps orig until it is adopted again. */
    const bool given_back =
        lj_safe_read(&now, field, sizeof now) && now == expected &&
        __atomic_compare_exchange_n(field, &expected, u->orig, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED);
    if (given_back) {
      __atomic_store_n(&u->live_wrap, LIVE_WRAP_NONE, __ATOMIC_RELEASE);
    } else {
      __atomic_store_n(&u->live_wrap, LIVE_WRAP_KEPT, __ATOMIC_RELEASE);
      universe_retire(u);
    }
  }
}
