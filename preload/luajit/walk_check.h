/*
** walk_check.h: a verification mode for the frame trail (frame_trail.h),
** for the tests: with PROF_LUAJIT_CHECK_WALKS=1 in the environment when the
** module loads, every capture the allocator wrapper takes over the trail
** is taken again without it and the two are compared; at exit one line on
** stderr says how many were checked, how many the trail served in part,
** and how many differed (with the first difference).
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
/* Compares c, captured over u's trail with at most max frames, with a
** capture without it. */
void walk_check(const struct Universe *u, int max, const struct VmCapture *c);

#endif /* PROF_LUAJIT_WALK_CHECK_H */
