/*
** walk_check.h: a verification mode for the frame memo (frame_memo.h), for
** the tests: with PROF_LUAJIT_CHECK_WALKS=1 in the environment when the
** module loads, every capture the allocator wrapper takes through the memo
** is taken again without it and the two are compared; at exit one line on
** stderr says how many were checked, how many the memo served in part, and
** how many differed (with the first difference).
**
** Invariants callers rely on: normal context (the allocator wrapper), no
** allocation; off, it costs the wrapper one load.
*/
#ifndef PROF_LUAJIT_WALK_CHECK_H
#define PROF_LUAJIT_WALK_CHECK_H

#include <stdbool.h>

#include "universe.h"
#include "vm_capture.h"

extern bool walk_check_on;

/* Reads the environment; reports at exit when on. */
void walk_check_start(void);
/* Compares c, captured through u's memo with at most max frames, with a
** capture without it. */
void walk_check(const struct Universe *u, int max, const struct VmCapture *c);

#endif /* PROF_LUAJIT_WALK_CHECK_H */
