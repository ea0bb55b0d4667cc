/* layout_54.c: Lua 5.4's structures (Debian's 5.4.4), mirrored up to the
** last field the adapter reads, and the table made from them. */
#include <signal.h>
#include <stddef.h>

#include <lua.h>

#include "puc_layout.h"

typedef unsigned char m_byte;

typedef struct M54TValue {
  void *value_;
  m_byte tt_;
} M54TValue;

/* A stack slot is a TValue padded by the to-be-closed list's delta. */
typedef union M54StackValue {
  M54TValue val;
  struct {
    void *value_;
    m_byte tt_;
    unsigned short delta;
  } tbclist;
} M54StackValue;

typedef struct M54CallInfo {
  M54StackValue *func, *top;
  struct M54CallInfo *previous, *next;
  union {
    struct {
      const unsigned *savedpc;
      volatile sig_atomic_t trap;
      int nextraargs;
    } l;
    struct {
      lua_KFunction k;
      ptrdiff_t old_errfunc;
      lua_KContext ctx;
    } c;
  } u;
  union {
    int funcidx, nyield, nres;
    struct {
      unsigned short ftransfer, ntransfer;
    } transferinfo;
  } u2;
  short nresults;
  unsigned short callstatus;
} M54CallInfo;

typedef struct M54State {
  void *next;
  m_byte tt, marked, status, allowhook;
  unsigned short nci;
  M54StackValue *top;
  void *l_G;
  M54CallInfo *ci;
  M54StackValue *stack_last, *stack;
  void *openupval;
  M54StackValue *tbclist;
  void *gclist, *twups, *errorJmp;
  M54CallInfo base_ci;
} M54State;

typedef struct M54Closure { /* ClosureHeader, then f or p */
  void *next;
  m_byte tt, marked, nupvalues;
  void *gclist;
  void *f_or_p;
} M54Closure;

typedef struct M54Proto { /* whole: its size is checked against the VM's allocation */
  void *next;
  m_byte tt, marked, numparams, is_vararg, maxstacksize;
  int sizeupvalues, sizek, sizecode, sizelineinfo, sizep, sizelocvars, sizeabslineinfo;
  int linedefined, lastlinedefined;
  void *k, *code, *p, *upvalues, *lineinfo, *abslineinfo, *locvars, *source, *gclist;
} M54Proto;

typedef struct M54String {
  void *next;
  m_byte tt, marked, extra, shrlen;
  unsigned hash;
  union {
    size_t lnglen;
    void *hnext;
  } u;
  char contents[1];
} M54String;

typedef struct M54Global {
  lua_Alloc frealloc;
  void *ud;
  ptrdiff_t totalbytes, GCdebt;
  size_t GCestimate, lastatomic;
  struct {
    void **hash;
    int nuse, size;
  } strt;
  M54TValue l_registry, nilvalue;
  unsigned seed;
  m_byte currentwhite, gcstate, gckind;
  m_byte gcstopem; /* 1 while a collector step runs (not its finalizers) */
  m_byte genminormul, genmajormul, gcstp, gcemergency, gcpause, gcstepmul, gcstepsize;
  void *allgc;
} M54Global;

#define TFUNC LUA_TFUNCTION
const struct PucLayout puc_layout = {
    .release = "Lua 5.4.4",
    .state_size = sizeof(M54State),
    .state_top = offsetof(M54State, top),
    .state_l_G = offsetof(M54State, l_G),
    .state_ci = offsetof(M54State, ci),
    .state_stack = offsetof(M54State, stack),
    .state_stack_last = offsetof(M54State, stack_last),
    .state_base_ci = offsetof(M54State, base_ci),
    .state_size_ci = PUC_NONE,
    .state_savedpc = PUC_NONE,
    .ci_size = sizeof(M54CallInfo),
    .ci_func = offsetof(M54CallInfo, func),
    .ci_previous = offsetof(M54CallInfo, previous),
    .ci_next = offsetof(M54CallInfo, next),
    .ci_savedpc = offsetof(M54CallInfo, u.l.savedpc),
    .ci_callstatus = offsetof(M54CallInfo, callstatus),
    .callstatus_bytes = 2,
    .cist_lua = 0,
    .cist_c = 1 << 1,
    .cist_tail = 1 << 5,
    .cist_fresh = 1 << 2,
    .cist_reentry = 0,
    .ci_tailcalls = PUC_NONE,
    .cist_walked = 1 << 15, /* Lua 5.4 uses bits 0-13 */
    .tvalue_size = sizeof(M54StackValue),
    .tvalue_tt = offsetof(M54TValue, tt_),
    .tt_bytes = 1,
    .tt_lua_closure = TFUNC | 0x40,
    .tt_c_closure = (TFUNC | (2 << 4)) | 0x40,
    .tt_light_cfunc = TFUNC | (1 << 4),
    .gc_tt = offsetof(M54Closure, tt),
    .obj_lua_closure = TFUNC,
    .obj_c_closure = TFUNC | (2 << 4),
    .closure_isc = PUC_NONE,
    .lclosure_proto = offsetof(M54Closure, f_or_p),
    .cclosure_f = offsetof(M54Closure, f_or_p),
    .proto_size = sizeof(M54Proto),
    .proto_tag = LUA_NUMTYPES + 1,
    .proto_code = offsetof(M54Proto, code),
    .proto_sizecode = offsetof(M54Proto, sizecode),
    .proto_lineinfo = offsetof(M54Proto, lineinfo),
    .proto_sizelineinfo = offsetof(M54Proto, sizelineinfo),
    .proto_source = offsetof(M54Proto, source),
    .proto_linedefined = offsetof(M54Proto, linedefined),
    .line_deltas = true,
    .proto_abslineinfo = offsetof(M54Proto, abslineinfo),
    .proto_sizeabslineinfo = offsetof(M54Proto, sizeabslineinfo),
    .maxiwthabs = 128,
    .string_bytes = offsetof(M54String, contents),
    .global_frealloc = offsetof(M54Global, frealloc),
    .global_ud = offsetof(M54Global, ud),
    .global_allgc = offsetof(M54Global, allgc),
    .global_gcstopem = offsetof(M54Global, gcstopem),
    .global_gckind = offsetof(M54Global, gckind),
    .global_gcstate = offsetof(M54Global, gcstate),
    .gen_kind = 1,   /* KGC_GEN */
    .rest_state = 0, /* GCSpropagate, where a generational collector rests */
    .alloc_tagged = true,
    .alloc_upvalue = LUA_NUMTYPES,
    .extra_stack = 5,
};
