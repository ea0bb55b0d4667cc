/*
** universes.h: the Lua universes (main threads) an adapter profiles now,
** so that a walk never reads one that was closed, whatever thread last ran
** it. Shared by the PUC Lua adapters (5.1 to 5.4).
**
** Invariants callers rely on: lock-free, async-signal-safe lookups; at most
** UNIVERSES_MAX live at once.
*/
#ifndef PROF_PUC_UNIVERSES_H
#define PROF_PUC_UNIVERSES_H

#include <stdbool.h>

#define UNIVERSES_MAX 64

/* Adds main (false: too many live universes), removes it, tells it. */
bool universe_add(const void *main);
void universe_remove(const void *main);
bool universe_live(const void *main);

#endif /* PROF_PUC_UNIVERSES_H */
