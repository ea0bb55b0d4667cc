/*
** lj_layout.h: the few private structures of LuaJIT 2.1 (x86_64) that the
** adapter reads, described as data: where each field lies and how wide a
** reference is, for the two encodings LuaJIT builds use:
** - GC64 (Debian's luajit, OpenResty's): 64-bit references, two-slot
**   frames (LJ_FR2);
** - without GC64 (Tarantool's bundled VM, a stock build with
**   LUAJIT_DISABLE_GC64): 32-bit references (every GC object lies in the
**   low 4 GiB), one-slot frames.
** lj_build.h's rows say which one a build uses, and where its global_State,
** jit_State and GCstr fields lie (those differ between builds of one
** encoding). layout_check.c verifies a row against the running VM before
** anything here is trusted.
**
** Words of the VM used below:
** - a TValue is 64 bits; a GC object reference in one is its low 47 bits
**   (GC64) or 32 bits, its type tag (LJ_T* as ~n) the bits above;
** - a frame lives on the Lua stack below its base: GC64, the function slot
**   at base-2 and the link at base-1; else one slot at base-1, the
**   function's reference in its low half and the link in its high half. The
**   link is a return PC for frames called from Lua, else a size and type in
**   the low 3 bits;
** - a C frame (cframe) is the VM's own C stack frame: it keeps the
**   lua_State, the saved bytecode PC and the previous cframe; a frame
**   whose link is C (lua_call, lua_pcall, lua_cpcall) or the continuation
**   of an FFI callback runs on a new one, entered from native code;
** - vmstate is ~LJ_VMST_* while the VM runs, or the number of the trace
**   whose machine code runs.
**
** The objects are opaque here (LJState, LJProto, LJFunc, LJStr, LJTrace):
** they are read through the accessors below, at the offsets of a layout.
*/
#ifndef PROF_LUAJIT_LJ_LAYOUT_H
#define PROF_LUAJIT_LJ_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* VM states (lj_obj.h's LJ_VMST_*), as stored: vmstate == ~state. */
enum { LJ_STATE_INTERP, LJ_STATE_C, LJ_STATE_GC, LJ_STATE_EXIT, LJ_STATE_RECORD,
       LJ_STATE_OPT, LJ_STATE_ASM };

/* Object type tags, as the gct byte of a GC object holds them (~LJ_T*). */
enum { LJ_GCT_STR = 4, LJ_GCT_UPVAL = 5, LJ_GCT_THREAD = 6, LJ_GCT_PROTO = 7,
       LJ_GCT_FUNC = 8, LJ_GCT_TRACE = 9, LJ_GCT_CDATA = 10, LJ_GCT_TAB = 11,
       LJ_GCT_UDATA = 12 };

#define LJ_FF_LUA 0 /* a Lua function's ffid */
#define LJ_FF_C 1   /* a C function's; built-ins have larger ones */
#define LJ_FRAME_TYPE 3
#define LJ_FRAME_TYPEP 7
enum { LJ_FRAME_LUA = 0, LJ_FRAME_C = 1, LJ_FRAME_CONT = 2, LJ_FRAME_VARG = 3 };
#define LJ_CFRAME_RAWMASK (~(uintptr_t)3)
/* A continuation frame's continuation (below its link) when C called back
** into Lua through an FFI callback (lj_frame.h). */
#define LJ_CONT_FFI_CALLBACK 1
/* GG_State's dispatch table holds this many code addresses (handlers, fast
** functions): BC__MAX + GG_NUM_ASMFF + BC_FUNCF in every build listed. */
#define LJ_GG_DISPATCH_LEN 243

typedef struct LJState LJState;  /* lua_State */
typedef struct LJProto LJProto;  /* GCproto, its bytecode follows it */
typedef struct LJFunc LJFunc;    /* GCfunc: GCfuncC and GCfuncL share the head */
typedef struct LJStr LJStr;      /* GCstr, its characters follow it */
typedef struct LJTrace LJTrace;  /* GCtrace */

/* Where a layout's fields lie: byte offsets into each object; `_size`, the
** bytes a copy of one must hold (up to its last field read). A GC object's
** header is its next reference, the marked byte and the type tag byte. */
struct LjLayout {
  uint8_t ref;        /* bytes of a GCRef or MRef field: 8 or 4 */
  uint8_t fr2;        /* slots a frame takes beyond one: 1 (GC64) or 0 */
  uint8_t tag_shift;  /* a TValue's tag: (int64_t)tv >> tag_shift, as int32 */
  uint8_t link_shift; /* a frame's link: its link slot >> link_shift */
  uint8_t fn_tagged;  /* a frame's function slot carries the function tag */
  uint64_t ref_mask;  /* a reference in a TValue or a frame slot */
  uint16_t L_glref, L_base, L_top, L_stack, L_cframe, L_stacksize, L_size;
  uint16_t fn_ffid, fn_pc, fn_f, fn_size;
  uint16_t pt_sizebc, pt_sizept, pt_chunkname, pt_firstline, pt_numline, pt_lineinfo, pt_size;
  uint16_t pt_k, pt_sizekgc; /* its constants: GC ones (nested prototypes) below k, a ref each */
  uint16_t T_startpt, T_startpc, T_traceno, T_size;
  uint16_t T_szmcode, T_mcode; /* its machine code: size (uint32_t), start (a pointer) */
  uint16_t cf_L, cf_pc; /* a cframe's lua_State and saved PC (ref wide) */
  uint16_t cf_prev;     /* the cframe it was entered from (a pointer, with flag bits) */
};

/* The interpreter's registers (x86_64, System V): it keeps its frame base,
** bytecode PC and dispatch table there, with GC64 (vm_x64.dasc) and without
** (vm_x86.dasc: edx, ebx, r14d). */
#define LJ_REG_BASE REG_RDX
#define LJ_REG_PC REG_RBX
#define LJ_REG_DISPATCH REG_R14

/* XXX: the offsets are offsetof() of LuaJIT 2.1's own headers (lj_obj.h,
** lj_jit.h, lj_frame.h), compiled for x86_64 with and without GC64; the
** Tarantool fork's objects are the stock non-GC64 ones. Static copies in
** every file: the allocator wrapper's walk is compiled once per layout, with
** the offsets as constants (frame_walk.c, vm_capture.c). */
static const struct LjLayout lj_layout_gc64 = {
    .ref = 8, .fr2 = 1, .tag_shift = 47, .link_shift = 0, .fn_tagged = 1,
    .ref_mask = (UINT64_C(1) << 47) - 1,
    .L_glref = 16, .L_base = 32, .L_top = 40, .L_stack = 56, .L_cframe = 80, .L_stacksize = 88,
    .L_size = 96,
    .fn_ffid = 10, .fn_pc = 32, .fn_f = 40, .fn_size = 48,
    .pt_sizebc = 12, .pt_sizept = 56, .pt_chunkname = 64, .pt_firstline = 72, .pt_numline = 76,
    .pt_lineinfo = 80, .pt_size = 104, .pt_k = 32, .pt_sizekgc = 48,
    .T_startpt = 64, .T_startpc = 72, .T_traceno = 104, .T_size = 106,
    .T_szmcode = 84, .T_mcode = 88,
    .cf_L = 16, .cf_pc = 24, .cf_prev = 32,
};
static const struct LjLayout lj_layout_ref32 = {
    .ref = 4, .fr2 = 0, .tag_shift = 32, .link_shift = 32, .fn_tagged = 0,
    .ref_mask = UINT32_MAX,
    .L_glref = 8, .L_base = 16, .L_top = 24, .L_stack = 36, .L_cframe = 48, .L_stacksize = 56,
    .L_size = 64,
    .fn_ffid = 6, .fn_pc = 16, .fn_f = 24, .fn_size = 32,
    .pt_sizebc = 8, .pt_sizept = 32, .pt_chunkname = 40, .pt_firstline = 44, .pt_numline = 48,
    .pt_lineinfo = 52, .pt_size = 64, .pt_k = 16, .pt_sizekgc = 24,
    .T_startpt = 48, .T_startpc = 52, .T_traceno = 80, .T_size = 82,
    .T_szmcode = 60, .T_mcode = 64,
    .cf_L = 24, .cf_pc = 28, .cf_prev = 32,
};
/* The largest _size of either: room for a checked copy of any object. */
#define LJ_COPY_MAX 112

/* Direct reads of a field at off in the object (or copy) at p. */
static inline uint64_t lj_u64(const void *p, size_t off) {
  uint64_t v;
  memcpy(&v, (const char *)p + off, sizeof v);
  return v;
}
static inline uint32_t lj_u32(const void *p, size_t off) {
  uint32_t v;
  memcpy(&v, (const char *)p + off, sizeof v);
  return v;
}
static inline uint16_t lj_u16(const void *p, size_t off) {
  uint16_t v;
  memcpy(&v, (const char *)p + off, sizeof v);
  return v;
}
static inline uint8_t lj_u8(const void *p, size_t off) { return ((const uint8_t *)p)[off]; }
/* A GCRef or MRef field, as an address. */
static inline uint64_t lj_ref(const void *p, size_t off, const struct LjLayout *o) {
  return o->ref == 8 ? lj_u64(p, off) : lj_u32(p, off);
}
static inline uint8_t lj_gct(const void *obj, const struct LjLayout *o) {
  return lj_u8(obj, o->ref + 1u);
}

static inline uint64_t lj_gcref(uint64_t tv, const struct LjLayout *o) { return tv & o->ref_mask; }
static inline int32_t lj_tag(uint64_t tv, const struct LjLayout *o) {
  return (int32_t)((int64_t)tv >> o->tag_shift);
}
static inline const char *lj_str_data(const LJStr *s, size_t str_size) {
  return (const char *)s + str_size;
}
static inline const uint32_t *lj_proto_bc(const LJProto *pt, const struct LjLayout *o) {
  return (const uint32_t *)((const char *)pt + o->pt_size);
}
/* The address of GC constant i (1..sizekgc) of the prototype whose k is k. */
static inline const char *lj_proto_kgc_at(uint64_t k, uint32_t i, const struct LjLayout *o) {
  return (const char *)(uintptr_t)k - (size_t)i * o->ref;
}
/* fn (or a copy of it) is a Lua function: its prototype's address. */
static inline const LJProto *lj_func_proto(const void *fn, const struct LjLayout *o) {
  return (const LJProto *)(uintptr_t)(lj_ref(fn, o->fn_pc, o) - o->pt_size);
}

#endif /* PROF_LUAJIT_LJ_LAYOUT_H */
