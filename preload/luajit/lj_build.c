#include "lj_build.h"

#include <stddef.h>

/* XXX: the offsets are offsetof() of each build's own headers (lj_obj.h,
** lj_jit.h, lj_dispatch.h) compiled for x86_64; layout_check.c verifies
** each against the running VM before it is used. */
const struct LjBuild lj_builds[LJ_NBUILDS] = {
    /* LuaJIT 2.1 as released (Debian's luajit and libluajit-5.1-2, 2.1.0~beta3+git20220320) */
    {"LuaJIT 2.1 (GC64)", NULL, &lj_layout_gc64, 0, 8, 16, 184, 192, 368, 376, 96, 824, 4064, 384, 396,
     20, 24},
    /* OpenResty's LuaJIT 2.1 (libluajit2-5.1-2, 2.1-20230119): lua_State has
    ** exdata and exdata2, global_State saved_jit_base, jit_State its own prng */
    {"OpenResty LuaJIT 2.1 (GC64)", "lua_setexdata", &lj_layout_gc64, 0, 8, 16, 184, 192, 368, 376, 112, 848, 4120,
     384, 396, 20, 24},
    /* Tarantool 2.6's LuaJIT (its fork at ad1d4441, built into the executable
    ** without GC64, LUAJIT_SMART_STRINGS: global_State starts with the string
    ** table's bloom filters; GCstr has no sid) */
    {"Tarantool 2.6 LuaJIT 2.1 (without GC64)", "tarantool_version", &lj_layout_ref32, 48, 56, 64, 120, 160, 280, 284,
     64, 512, 3208, 368, 380, 12, 16},
    /* The release above built with LUAJIT_DISABLE_GC64 */
    {"LuaJIT 2.1 (without GC64)", NULL, &lj_layout_ref32, 0, 8, 16, 136, 140, 288, 292, 64, 552, 3240,
     360, 372, 16, 20},
};
const struct LjBuild *lj_build;
