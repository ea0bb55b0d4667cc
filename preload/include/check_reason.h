/*
** check_reason.h: the one-line reason a guest adapter's layout check gives
** for a mismatch (preload/luajit/, preload/puc/). Not part
** of the agent's API.
**
** Invariants callers rely on: the first reason is kept, later ones are
** dropped; never more than why_len bytes, NUL-terminated.
*/
#ifndef PROF_CHECK_REASON_H
#define PROF_CHECK_REASON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

/* Writes the reason into why, unless one is there already; false always
** (a failed check's value). */
static inline __attribute__((format(printf, 3, 4))) bool check_reason(char *why, size_t why_len,
                                                                      const char *fmt, ...) {
  if (why[0]) return false; /* keep the first reason */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, why_len, fmt, ap);
  va_end(ap);
  return false;
}

#endif /* PROF_CHECK_REASON_H */
