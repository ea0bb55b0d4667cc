/*
** lj_layout.h: the few private structures of LuaJIT 2.1 (x86_64, GC64, two-
** slot frames) that the adapter reads, mirrored by hand: only the fields it
** needs, at the offsets of the GC64 builds lj_build.h lists (where they differ
** is there).
** layout_check.c verifies them against the running VM before anything here
** is trusted.
**
** Words of the VM used below:
** - a TValue is 64 bits; a GC object reference in one is its low 47 bits,
**   its type tag the arithmetic shift right by 47 (LJ_T* as ~n);
** - a frame lives on the Lua stack: the function slot at base-2, the link
**   at base-1 (a return PC for frames called from Lua, else a size and
**   type in the low 3 bits);
** - a C frame (cframe) is the VM's own C stack frame: it keeps the
**   lua_State, the saved bytecode PC and the previous cframe; a frame
**   whose link is C (lua_call, lua_pcall, lua_cpcall) or the continuation
**   of an FFI callback runs on a new one, entered from native code;
** - vmstate is ~LJ_VMST_* while the VM runs, or the number of the trace
**   whose machine code runs.
*/
#ifndef PROF_LUAJIT_LJ_LAYOUT_H
#define PROF_LUAJIT_LJ_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* VM states (lj_obj.h's LJ_VMST_*), as stored: vmstate == ~state. */
enum { LJ_STATE_INTERP, LJ_STATE_C, LJ_STATE_GC, LJ_STATE_EXIT, LJ_STATE_RECORD,
       LJ_STATE_OPT, LJ_STATE_ASM };

/* Object type tags, as the gct byte of a GC object holds them (~LJ_T*). */
enum { LJ_GCT_STR = 4, LJ_GCT_UPVAL = 5, LJ_GCT_THREAD = 6, LJ_GCT_PROTO = 7,
       LJ_GCT_FUNC = 8, LJ_GCT_TRACE = 9, LJ_GCT_CDATA = 10, LJ_GCT_TAB = 11,
       LJ_GCT_UDATA = 12 };

#define LJ_GCVMASK ((UINT64_C(1) << 47) - 1)
#define LJ_FF_LUA 0 /* a Lua function's ffid */
#define LJ_FF_C 1   /* a C function's; built-ins have larger ones */
#define LJ_FRAME_TYPE 3
#define LJ_FRAME_TYPEP 7
enum { LJ_FRAME_LUA = 0, LJ_FRAME_C = 1, LJ_FRAME_CONT = 2, LJ_FRAME_VARG = 3 };
#define LJ_CFRAME_RAWMASK (~(uintptr_t)3)
/* A continuation frame's continuation (three slots below its link) when C
** called back into Lua through an FFI callback (lj_frame.h). */
#define LJ_CONT_FFI_CALLBACK 1

/* GCHeader: every GC object starts so (fields, not a padded struct). */
#define LJ_GC_HEADER \
  uint64_t nextgc;   \
  uint8_t marked;    \
  uint8_t gct /* the type tag: LJ_GCT_* */

typedef struct LJState { /* lua_State */
  LJ_GC_HEADER;
  uint8_t dummy_ffid, status;
  uint8_t pad0[4];
  uint64_t glref;      /* 16: global_State */
  uint64_t gclist;
  uint64_t *base;      /* 32: valid where the VM last synced it */
  uint64_t *top;
  uint64_t *maxstack;
  uint64_t *stack;     /* 56 */
  uint64_t openupval, env;
  void *cframe;        /* 80: innermost cframe, low 2 bits are flags */
  uint32_t stacksize;  /* 88: slots */
} LJState;

/* global_State: fields at fixed offsets; its size places the jit_State. */
#define LJ_G_ALLOCF 0
#define LJ_G_ALLOCD 8
#define LJ_G_GC_TOTAL 16 /* bytes the VM holds (collectgarbage "count" * 1024) */
#define LJ_G_VMSTATE 184
#define LJ_G_MAINTHREF 192
#define LJ_G_CUR_L 368
#define LJ_G_JIT_BASE 376
/* GG_State: lua_State (main thread), global_State, jit_State in a row,
** placed by the build (lj_build.h); its dispatch table holds this many code
** addresses (handlers, fast functions). */
#define LJ_GG_DISPATCH_LEN 243
#define LJ_J_TRACE 384     /* GCRef *trace: traces by number */
#define LJ_J_SIZETRACE 396 /* uint32_t: the size of that array */

typedef struct LJProto { /* GCproto, bytecode follows it */
  LJ_GC_HEADER;
  uint8_t numparams, framesize;
  uint32_t sizebc;       /* 12 */
  uint8_t pad0[40];
  uint32_t sizept;       /* 56: the whole allocation */
  uint8_t sizeuv, flags;
  uint16_t trace;
  uint64_t chunkname;    /* 64: GCstr */
  int32_t firstline;     /* 72 */
  int32_t numline;       /* 76 */
  const void *lineinfo;  /* 80: uint8/16/32 per instruction, by numline */
  uint64_t uvinfo, varinfo;
} LJProto;

typedef struct LJStr { /* GCstr, the characters follow it */
  LJ_GC_HEADER;
  uint8_t reserved, hashalg;
  uint32_t sid, hash;
  uint32_t len;          /* 20 */
} LJStr;

typedef struct LJFunc { /* GCfunc: GCfuncC and GCfuncL share the head */
  LJ_GC_HEADER;
  uint8_t ffid;          /* 10 */
  uint8_t nupvalues;
  uint8_t pad0[4];
  uint64_t env, gclist;
  uint64_t pc;           /* 32: Lua: the bytecode after its GCproto */
  void *f;               /* 40: C: the lua_CFunction */
} LJFunc;

typedef struct LJTrace { /* GCtrace */
  LJ_GC_HEADER;
  uint8_t pad0[54];
  uint64_t startpt;      /* 64: GCproto where it starts */
  const uint32_t *startpc; /* 72 */
  uint32_t startins;
  uint32_t szmcode;      /* 84 */
  const void *mcode;     /* 88 */
  uint32_t mcloop;
  uint16_t nchild;
  uint16_t spadjust;     /* 102: the stack its code took below the interpreter's frame */
  uint16_t traceno;      /* 104 */
} LJTrace;

/* The interpreter's registers (x86_64, System V): it keeps its frame base,
** bytecode PC and dispatch table there. */
#define LJ_REG_BASE REG_RDX
#define LJ_REG_PC REG_RBX
#define LJ_REG_DISPATCH REG_R14

/* What the interpreter puts below its frame before it jumps to a trace's
** code: r12 and r13, saved in 16 bytes (vm_x64.dasc's BC_JLOOP, POSIX). A
** trace's code then lowers the stack pointer by its spadjust. */
#define LJ_TRACE_ENTRY_SAVE 16

/* A cframe's fields (x86_64 GC64). */
#define LJ_CFRAME_OFS_L 16
#define LJ_CFRAME_OFS_PC 24
#define LJ_CFRAME_OFS_PREV 32

_Static_assert(offsetof(LJState, base) == 32 && offsetof(LJState, cframe) == 80 &&
               offsetof(LJState, stacksize) == 88, "lua_State mirror");
_Static_assert(offsetof(LJProto, sizept) == 56 && offsetof(LJProto, chunkname) == 64 &&
               offsetof(LJProto, lineinfo) == 80 && sizeof(LJProto) == 104, "GCproto mirror");
_Static_assert(offsetof(LJStr, len) == 20 && sizeof(LJStr) == 24, "GCstr mirror");
_Static_assert(offsetof(LJFunc, ffid) == 10 && offsetof(LJFunc, pc) == 32 &&
               offsetof(LJFunc, f) == 40, "GCfunc mirror");
_Static_assert(offsetof(LJTrace, startpt) == 64 && offsetof(LJTrace, szmcode) == 84 &&
               offsetof(LJTrace, spadjust) == 102 && offsetof(LJTrace, traceno) == 104,
               "GCtrace mirror");

static inline uint64_t lj_gcref(uint64_t tv) { return tv & LJ_GCVMASK; }
static inline int32_t lj_tag(uint64_t tv) { return (int32_t)((int64_t)tv >> 47); }
static inline const char *lj_str_data(const LJStr *s) { return (const char *)(s + 1); }
static inline const uint32_t *lj_proto_bc(const LJProto *pt) {
  return (const uint32_t *)(pt + 1);
}
static inline const LJProto *lj_func_proto(const LJFunc *fn) {
  return (const LJProto *)(uintptr_t)(fn->pc - sizeof(LJProto));
}

#endif /* PROF_LUAJIT_LJ_LAYOUT_H */
