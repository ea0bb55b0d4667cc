/*
** lj_build.h: the LuaJIT builds the adapter knows, as data: each build's
** object layout (lj_layout.h: GC64 or 32-bit references), where its
** global_State's and jit_State's fields lie, where it puts the parts of its
** GG_State (the block that holds the main lua_State, the global_State and
** the jit_State in a row), and its GCstr's.
**
** Invariants callers rely on: lj_build is NULL until layout_check verified
** one row against a live VM, then that row for good (one LuaJIT build per
** process); nothing reads the VM through a row before that.
*/
#ifndef PROF_LUAJIT_LJ_BUILD_H
#define PROF_LUAJIT_LJ_BUILD_H

#include <stdint.h>

#include "lj_layout.h"

struct LjBuild {
  const char *name;
  const char *marker; /* a symbol only this build's programs export, or NULL */
  const struct LjLayout *layout;
  /* global_State: allocf, allocd (pointers), vmstate (int32); gc.total,
  ** mainthref, cur_L, jit_base (a reference wide: layout->ref) */
  uint16_t g_allocf, g_allocd, g_gc_total, g_vmstate, g_mainthref, g_cur_L, g_jit_base;
  uint32_t gg_g;         /* global_State in GG_State (after the main lua_State) */
  uint32_t gg_j;         /* jit_State */
  uint32_t gg_dispatch;  /* the interpreter's dispatch table */
  uint16_t j_trace;      /* jit_State: GCRef *trace, traces by number */
  uint16_t j_sizetrace;  /* uint32_t: the size of that array */
  uint16_t str_len, str_size; /* GCstr: its length (uint32_t), its size */
};

#define LJ_NBUILDS 4
extern const struct LjBuild lj_builds[LJ_NBUILDS];
extern const struct LjBuild *lj_build;

/* The parts of the VM whose global_State is g, by the verified build. */
static inline const char *lj_jit_state(const char *g) { return g - lj_build->gg_g + lj_build->gg_j; }
static inline const char *lj_main_thread(const char *g) { return g - lj_build->gg_g; }
static inline const uint64_t *lj_dispatch(const char *g) {
  return (const uint64_t *)(g - lj_build->gg_g + lj_build->gg_dispatch);
}
/* A global_State field a reference wide, read directly. */
static inline uint64_t lj_g_ref(const char *g, uint16_t off) {
  return lj_ref(g, off, lj_build->layout);
}
/* The global_State of the lua_State L, read directly. */
static inline const char *lj_state_g(const void *L) {
  return (const char *)(uintptr_t)lj_ref(L, lj_build->layout->L_glref, lj_build->layout);
}

#endif /* PROF_LUAJIT_LJ_BUILD_H */
