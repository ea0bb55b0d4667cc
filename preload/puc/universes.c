#include "universes.h"

#include <stddef.h>

static const void *g_live[UNIVERSES_MAX];
/* Slots at or above it were never used: lookups stop there. */
static int g_used;

bool universe_add(const void *main) {
  for (int i = 0; i < UNIVERSES_MAX; i++) {
    const void *none = NULL;
    if (__atomic_compare_exchange_n(&g_live[i], &none, main, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED)) {
      int used = __atomic_load_n(&g_used, __ATOMIC_RELAXED);
      while (used < i + 1 && !__atomic_compare_exchange_n(&g_used, &used, i + 1, false,
                                                         __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
      }
      return true;
    }
  }
  return false;
}

void universe_remove(const void *main) {
  for (int i = 0; i < UNIVERSES_MAX; i++) {
    const void *was = main;
    __atomic_compare_exchange_n(&g_live[i], &was, NULL, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_RELAXED);
  }
}

bool universe_live(const void *main) {
  const int used = __atomic_load_n(&g_used, __ATOMIC_RELAXED);
  for (int i = 0; i < used; i++)
    if (__atomic_load_n(&g_live[i], __ATOMIC_RELAXED) == main) return true;
  return false;
}
