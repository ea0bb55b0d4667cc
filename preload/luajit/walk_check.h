/*
** walk_check.h: a verification mode for the frame trail (frame_trail.h),
** for the tests: with PROF_LUAJIT_CHECK_WALKS=1 in the environment when the
** module loads, every capture the allocator wrapper takes over the trail
** is taken again without it and the two are compared, and the frames it
** tells the agent are unchanged (prof_guest_walk) are compared with those
** it passed last; at exit one line on stderr says how many were checked,
** how many the trail served in part, how many differed (with the first
** difference), how many frames were told unchanged and how many of those
** were not.
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
/* Compares the frames of c that walk tells unchanged with those of the
** capture checked last, then keeps c's. */
void walk_check_unchanged(const struct prof_guest_walk *walk, const struct VmCapture *c);

#endif /* PROF_LUAJIT_WALK_CHECK_H */
