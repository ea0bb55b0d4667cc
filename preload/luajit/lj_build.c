#include "lj_build.h"

#include <stddef.h>

/* XXX: the offsets are offsetof() of each build's own headers (lj_obj.h,
** lj_jit.h, lj_dispatch.h) compiled for x86_64; layout_check.c verifies
** each against the running VM before it is used. */
const struct LjBuild lj_builds[LJ_NBUILDS] = {
    /* LuaJIT 2.1 as released (Debian's luajit and libluajit-5.1-2, 2.1.0~beta3+git20220320) */
    {"LuaJIT 2.1 (GC64)", 96, 824, 4064},
    /* OpenResty's LuaJIT 2.1 (libluajit2-5.1-2, 2.1-20230119): lua_State has
    ** exdata and exdata2, global_State saved_jit_base, jit_State its own prng */
    {"OpenResty LuaJIT 2.1 (GC64)", 112, 848, 4120},
};
const struct LjBuild *lj_build;
