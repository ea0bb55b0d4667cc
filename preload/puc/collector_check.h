/*
** collector_check.h: the part of the layout check for a release whose
** global state tells when its collector runs (5.4: puc_collecting): those
** fields must say "running" in the frees made inside a collector step, in
** both of its modes, and only there.
**
** Invariants callers rely on: normal context only; the collector's mode
** and whether it runs are as they were when it returns.
*/
#ifndef PROF_PUC_COLLECTOR_CHECK_H
#define PROF_PUC_COLLECTOR_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include <lua.h>

struct CollectorWatch {
  const void *g;     /* the global state */
  bool observing;
  int frees_in_step; /* frees seen while the collector runs */
  int odd_flag;      /* impossible values of the collector's fields */
};

/* The checking allocator's part: a free (nsize 0) of a block. */
void collector_watch_free(struct CollectorWatch *cw);

/* True if the fields behave; else a one-line reason is in why. */
bool collector_check(struct CollectorWatch *cw, lua_State *L, char *why, size_t why_len);

#endif /* PROF_PUC_COLLECTOR_CHECK_H */
