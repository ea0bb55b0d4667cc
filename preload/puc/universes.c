#include "universes.h"

#include <stddef.h>

static const void *g_live[UNIVERSES_MAX];

bool universe_add(const void *main) {
  for (int i = 0; i < UNIVERSES_MAX; i++) {
    const void *none = NULL;
    if (__atomic_compare_exchange_n(&g_live[i], &none, main, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED))
      return true;
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
  for (int i = 0; i < UNIVERSES_MAX; i++)
    if (__atomic_load_n(&g_live[i], __ATOMIC_RELAXED) == main) return true;
  return false;
}
