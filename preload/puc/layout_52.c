/* layout_52.c: Lua 5.2's structures (Debian's 5.2.4), mirrored up to the
** last field the adapter reads, and the table made from them. */
#include <stddef.h>

#include <lua.h>

#include "puc_layout.h"

typedef unsigned char m_byte;

typedef struct M52TValue {
  void *value_;
  int tt_;
} M52TValue;

typedef struct M52CallInfo {
  M52TValue *func, *top;
  struct M52CallInfo *previous, *next;
  short nresults;
  m_byte callstatus;
  ptrdiff_t extra;
  union {
    struct {
      M52TValue *base;
      const unsigned *savedpc;
    } l;
    struct {
      int ctx;
      lua_CFunction k;
      ptrdiff_t old_errfunc;
      m_byte old_allowhook, status;
    } c;
  } u;
} M52CallInfo;

typedef struct M52State {
  void *next;
  m_byte tt, marked, status;
  M52TValue *top;
  void *l_G;
  M52CallInfo *ci;
  const unsigned *oldpc;
  M52TValue *stack_last, *stack;
  int stacksize;
  unsigned short nny, nCcalls;
  m_byte hookmask, allowhook;
  int basehookcount, hookcount;
  lua_Hook hook;
  void *openupval, *gclist, *errorJmp;
  ptrdiff_t errfunc;
  M52CallInfo base_ci;
} M52State;

typedef struct M52Closure { /* ClosureHeader, then f or p */
  void *next;
  m_byte tt, marked, nupvalues;
  void *gclist;
  void *f_or_p;
} M52Closure;

typedef struct M52Proto {
  void *next;
  m_byte tt, marked;
  void *k, *code, *p, *lineinfo, *locvars, *upvalues, *cache, *source;
  int sizeupvalues, sizek, sizecode, sizelineinfo, sizep, sizelocvars;
  int linedefined, lastlinedefined;
  void *gclist;
  m_byte numparams, is_vararg, maxstacksize;
} M52Proto;

typedef union M52String {
  double dummy; /* L_Umaxalign */
  struct {
    void *next;
    m_byte tt, marked, extra;
    unsigned hash;
    size_t len;
  } tsv;
} M52String;

typedef struct M52Global {
  lua_Alloc frealloc;
  void *ud;
  size_t totalbytes;
  ptrdiff_t GCdebt;
  size_t GCmemtrav, GCestimate;
  struct {
    void **hash;
    unsigned nuse;
    int size;
  } strt;
  M52TValue l_registry;
  unsigned seed;
  m_byte currentwhite, gcstate, gckind, gcrunning;
  int sweepstrgc;
  void *allgc;
} M52Global;

#define TFUNC LUA_TFUNCTION
const struct PucLayout puc_layout = {
    .release = "Lua 5.2.4",
    .state_size = sizeof(M52State),
    .state_top = offsetof(M52State, top),
    .state_l_G = offsetof(M52State, l_G),
    .state_ci = offsetof(M52State, ci),
    .state_stack = offsetof(M52State, stack),
    .state_stack_last = offsetof(M52State, stack_last),
    .state_base_ci = offsetof(M52State, base_ci),
    .state_size_ci = PUC_NONE,
    .state_savedpc = PUC_NONE,
    .ci_size = sizeof(M52CallInfo),
    .ci_func = offsetof(M52CallInfo, func),
    .ci_previous = offsetof(M52CallInfo, previous),
    .ci_next = offsetof(M52CallInfo, next),
    .ci_savedpc = offsetof(M52CallInfo, u.l.savedpc),
    .ci_callstatus = offsetof(M52CallInfo, callstatus),
    .callstatus_bytes = 1,
    .cist_lua = 1 << 0,
    .cist_tail = 1 << 6,
    .cist_fresh = 0,
    .cist_reentry = 1 << 2,
    .ci_tailcalls = PUC_NONE,
    .tvalue_size = sizeof(M52TValue),
    .tvalue_tt = offsetof(M52TValue, tt_),
    .tt_bytes = 4,
    .tt_lua_closure = TFUNC | 0x40,
    .tt_c_closure = (TFUNC | (2 << 4)) | 0x40,
    .tt_light_cfunc = TFUNC | (1 << 4),
    .gc_tt = offsetof(M52Closure, tt),
    .obj_lua_closure = TFUNC,
    .obj_c_closure = TFUNC | (2 << 4),
    .closure_isc = PUC_NONE,
    .lclosure_proto = offsetof(M52Closure, f_or_p),
    .cclosure_f = offsetof(M52Closure, f_or_p),
    .proto_size = sizeof(M52Proto),
    .proto_tag = LUA_NUMTAGS,
    .proto_code = offsetof(M52Proto, code),
    .proto_sizecode = offsetof(M52Proto, sizecode),
    .proto_lineinfo = offsetof(M52Proto, lineinfo),
    .proto_sizelineinfo = offsetof(M52Proto, sizelineinfo),
    .proto_source = offsetof(M52Proto, source),
    .proto_linedefined = offsetof(M52Proto, linedefined),
    .string_bytes = sizeof(M52String),
    .global_frealloc = offsetof(M52Global, frealloc),
    .global_ud = offsetof(M52Global, ud),
    .global_allgc = offsetof(M52Global, allgc),
    .alloc_tagged = true,
    .alloc_upvalue = LUA_NUMTAGS + 1,
    .cist_walked = 1 << 7,
    .global_gcstopem = PUC_NONE,
    .global_gckind = PUC_NONE,
    .global_gcstate = PUC_NONE,
    .extra_stack = 5,
};
