/*
** lj_build.h: the LuaJIT builds the adapter knows, as data: where each
** puts the parts of its GG_State (the block that holds the main lua_State,
** the global_State and the jit_State in a row). The objects themselves
** (lua_State's head, GCproto, GCstr, GCfunc, GCtrace, cframes) are laid out
** alike in every GC64 build listed here (lj_layout.h).
**
** Invariants callers rely on: lj_build is NULL until layout_check verified
** one row against a live VM, then that row for good (one LuaJIT build per
** process); nothing reads the VM through a row before that.
*/
#ifndef PROF_LUAJIT_LJ_BUILD_H
#define PROF_LUAJIT_LJ_BUILD_H

#include <stdint.h>

struct LjBuild {
  const char *name;
  uint32_t gg_g;         /* global_State in GG_State (after the main lua_State) */
  uint32_t gg_j;         /* jit_State */
  uint32_t gg_dispatch;  /* the interpreter's dispatch table */
};

#define LJ_NBUILDS 2
extern const struct LjBuild lj_builds[LJ_NBUILDS];
extern const struct LjBuild *lj_build;

/* The parts of the VM whose global_State is g, by the verified build. */
static inline const char *lj_jit_state(const char *g) { return g - lj_build->gg_g + lj_build->gg_j; }
static inline const char *lj_main_thread(const char *g) { return g - lj_build->gg_g; }
static inline const uint64_t *lj_dispatch(const char *g) {
  return (const uint64_t *)(g - lj_build->gg_g + lj_build->gg_dispatch);
}

#endif /* PROF_LUAJIT_LJ_BUILD_H */
