#include "live_alloc.h"

#include <stdint.h>

#include <lua.h>

#include "agent_api.h"
#include "alloc_trampolines.h"
#include "puc_alloc.h"
#include "puc_layout.h"
#include "puc_threads.h"
#include "puc_walk.h"
#include "safe_read.h"
#include "universes.h"

#define LAY puc_layout

enum SlotState {
  SLOT_FREE,
  SLOT_CLAIMED, /* being filled by live_alloc_wrap */
  SLOT_WRAPPED,
  SLOT_CLOSED,  /* the universe was closed while wrapped: nothing to give back */
  SLOT_KEPT,    /* the program put its own function over the trampoline: kept forever */
};

struct LiveAlloc {
  int state;
  lua_Alloc orig;      /* the allocator the state had */
  const void *main;    /* its universe */
  lua_Alloc *frealloc; /* the global_State's field */
};

static struct LiveAlloc g_slots[ALLOC_TRAMPOLINE_SLOTS];
static bool g_enabled;

static void *live_alloc(int i, void *ud, void *ptr, size_t osize, size_t nsize);
ALLOC_TRAMPOLINES_32(live_alloc)
static const lua_Alloc g_trampolines[ALLOC_TRAMPOLINE_SLOTS] = ALLOC_TRAMPOLINE_TABLE_32;

/* Whether the block [ptr, ptr + osize) holds main: lua_close's last free. */
static bool holds(const void *ptr, size_t osize, const void *main) {
  return (const char *)ptr <= (const char *)main && (const char *)main < (const char *)ptr + osize;
}

static void *live_alloc(int i, void *ud, void *ptr, size_t osize, size_t nsize) {
  struct LiveAlloc *la = &g_slots[i];
  const lua_Alloc orig = la->orig;
  if (__atomic_load_n(&la->state, __ATOMIC_ACQUIRE) != SLOT_WRAPPED)
    return orig(ud, ptr, osize, nsize);
  const void *main = la->main;
  struct PucSlot *s = &puc_slot;
  if (ptr && nsize == 0) {
    if (holds(ptr, osize, main)) {
      universe_remove(main); /* before the free: no walk reads it again */
      if (s->main == main) puc_thread_runs(NULL);
      __atomic_store_n(&la->state, SLOT_CLOSED, __ATOMIC_RELEASE);
      return orig(ud, ptr, osize, nsize);
    }
    if (osize == LAY.proto_size) puc_walk_protos_freed();
  }
  if (__builtin_expect(s->main != main, 0)) puc_thread_runs((lua_State *)main);
  const int typed = LAY.alloc_tagged && nsize != 0 && prof_guest_object_type != NULL;
  if (typed) prof_guest_object_type(puc_object_type(ptr, osize));
  s->in_alloc++;
  void *block = orig(ud, ptr, osize, nsize);
  s->in_alloc--;
  if (typed) prof_guest_object_type(PROF_OBJECT_NONE);
  return block;
}

void live_alloc_enable(bool yes) { __atomic_store_n(&g_enabled, yes, __ATOMIC_RELAXED); }

static bool is_trampoline(lua_Alloc f) {
  for (int i = 0; i < ALLOC_TRAMPOLINE_SLOTS; i++)
    if (f == g_trampolines[i]) return true;
  return false;
}

bool live_alloc_wanted(const void *main) {
  if (!__atomic_load_n(&g_enabled, __ATOMIC_RELAXED)) return false;
  for (int i = 0; i < ALLOC_TRAMPOLINE_SLOTS; i++)
    if (__atomic_load_n(&g_slots[i].state, __ATOMIC_ACQUIRE) == SLOT_WRAPPED &&
        g_slots[i].main == main)
      return false;
  return true;
}

bool live_alloc_wrap(const void *main) {
  if (!live_alloc_wanted(main)) return false;
  char *g;
  lua_Alloc now;
  if (!safe_read(&g, (const char *)main + LAY.state_l_G, sizeof g) || !g) return false;
  lua_Alloc *field = (lua_Alloc *)(g + LAY.global_frealloc);
  if (!safe_read(&now, field, sizeof now) || !now) return false;
  if (is_trampoline(now)) return true; /* another thread of it is putting it in */
  for (int i = 0; i < ALLOC_TRAMPOLINE_SLOTS; i++) {
    struct LiveAlloc *la = &g_slots[i];
    int free_state = SLOT_FREE;
    if (!__atomic_compare_exchange_n(&la->state, &free_state, SLOT_CLAIMED, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
      continue;
    la->orig = now;
    la->main = main;
    la->frealloc = field;
    __atomic_store_n(&la->state, SLOT_WRAPPED, __ATOMIC_RELEASE);
    /* XXX: the state was read a moment ago on the thread that runs it; a
    ** field that changed since (lua_setallocf) keeps its new value. */
    if (__atomic_compare_exchange_n(field, &now, g_trampolines[i], false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED))
      return true;
    __atomic_store_n(&la->state, SLOT_FREE, __ATOMIC_RELEASE);
    return false;
  }
  return false;
}

void live_alloc_unwrap_all(void) {
  for (int i = 0; i < ALLOC_TRAMPOLINE_SLOTS; i++) {
    struct LiveAlloc *la = &g_slots[i];
    const int state = __atomic_load_n(&la->state, __ATOMIC_ACQUIRE);
    if (state == SLOT_CLOSED) __atomic_store_n(&la->state, SLOT_FREE, __ATOMIC_RELEASE);
    if (state != SLOT_WRAPPED) continue;
    lua_Alloc expected = g_trampolines[i], now = NULL;
    /* XXX: a thread that read the trampoline just before may still be on
    ** its way into it: the slot keeps orig until it is claimed again. */
    const bool given_back =
        safe_read(&now, la->frealloc, sizeof now) && now == expected &&
        __atomic_compare_exchange_n(la->frealloc, &expected, la->orig, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED);
    __atomic_store_n(&la->state, given_back ? SLOT_FREE : SLOT_KEPT, __ATOMIC_RELEASE);
  }
}
