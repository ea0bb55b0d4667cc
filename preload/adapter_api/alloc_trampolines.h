/*
** alloc_trampolines.h: lua_Alloc functions, one per slot of an adapter's
** table, each passing its slot's index on. An allocator wrapper put into a
** VM that is already running (prof-run --pid) replaces the VM's allocator
** function alone, by one atomic store, and keeps its user data (the
** function and the data are two fields: a thread of the VM may read one
** before the store and the other after it); so the function itself must
** tell which VM it serves.
**
**   ALLOC_TRAMPOLINES_32(body)  defines alloc_trampoline_0..31(ud, ptr,
**                               osize, nsize), each returning
**                               body(i, ud, ptr, osize, nsize)
**   ALLOC_TRAMPOLINE_TABLE_32   { alloc_trampoline_0, ..., _31 }
*/
#ifndef PROF_ALLOC_TRAMPOLINES_H
#define PROF_ALLOC_TRAMPOLINES_H

#include <stddef.h>

#define ALLOC_TRAMPOLINE_(body, i)                                                        \
  static void *alloc_trampoline_##i(void *ud, void *ptr, size_t osize, size_t nsize) { \
    return body(i, ud, ptr, osize, nsize);                                             \
  }
#define ALLOC_TRAMPOLINES_8_(body, a, b, c, d, e, f, g, h)                         \
  ALLOC_TRAMPOLINE_(body, a) ALLOC_TRAMPOLINE_(body, b) ALLOC_TRAMPOLINE_(body, c) \
  ALLOC_TRAMPOLINE_(body, d) ALLOC_TRAMPOLINE_(body, e) ALLOC_TRAMPOLINE_(body, f) \
  ALLOC_TRAMPOLINE_(body, g) ALLOC_TRAMPOLINE_(body, h)
#define ALLOC_TRAMPOLINES_32(body)                                   \
  ALLOC_TRAMPOLINES_8_(body, 0, 1, 2, 3, 4, 5, 6, 7)                 \
  ALLOC_TRAMPOLINES_8_(body, 8, 9, 10, 11, 12, 13, 14, 15)           \
  ALLOC_TRAMPOLINES_8_(body, 16, 17, 18, 19, 20, 21, 22, 23)         \
  ALLOC_TRAMPOLINES_8_(body, 24, 25, 26, 27, 28, 29, 30, 31)

#define ALLOC_TRAMPOLINE_TABLE_32                                                          \
  {alloc_trampoline_0,  alloc_trampoline_1,  alloc_trampoline_2,  alloc_trampoline_3,  \
   alloc_trampoline_4,  alloc_trampoline_5,  alloc_trampoline_6,  alloc_trampoline_7,  \
   alloc_trampoline_8,  alloc_trampoline_9,  alloc_trampoline_10, alloc_trampoline_11, \
   alloc_trampoline_12, alloc_trampoline_13, alloc_trampoline_14, alloc_trampoline_15, \
   alloc_trampoline_16, alloc_trampoline_17, alloc_trampoline_18, alloc_trampoline_19, \
   alloc_trampoline_20, alloc_trampoline_21, alloc_trampoline_22, alloc_trampoline_23, \
   alloc_trampoline_24, alloc_trampoline_25, alloc_trampoline_26, alloc_trampoline_27, \
   alloc_trampoline_28, alloc_trampoline_29, alloc_trampoline_30, alloc_trampoline_31}

#define ALLOC_TRAMPOLINE_SLOTS 32

#endif /* PROF_ALLOC_TRAMPOLINES_H */
