/* layout_53.c: Lua 5.3's structures (Debian's 5.3.6), mirrored up to the
** last field the adapter reads, and the table made from them. */
#include <stddef.h>

#include <lua.h>

#include "puc_layout.h"

typedef unsigned char m_byte;

typedef struct M53TValue {
  void *value_;
  int tt_;
} M53TValue;

typedef struct M53CallInfo {
  M53TValue *func, *top;
  struct M53CallInfo *previous, *next;
  union {
    struct {
      M53TValue *base;
      const unsigned *savedpc;
    } l;
    struct {
      lua_KFunction k;
      ptrdiff_t old_errfunc;
      lua_KContext ctx;
    } c;
  } u;
  ptrdiff_t extra;
  short nresults;
  unsigned short callstatus;
} M53CallInfo;

typedef struct M53State {
  void *next;
  m_byte tt, marked;
  unsigned short nci;
  m_byte status;
  M53TValue *top;
  void *l_G;
  M53CallInfo *ci;
  const unsigned *oldpc;
  M53TValue *stack_last, *stack;
  void *openupval, *gclist, *twups, *errorJmp;
  M53CallInfo base_ci;
} M53State;

typedef struct M53Closure { /* ClosureHeader, then f or p */
  void *next;
  m_byte tt, marked, nupvalues;
  void *gclist;
  void *f_or_p;
} M53Closure;

typedef struct M53Proto {
  void *next;
  m_byte tt, marked, numparams, is_vararg, maxstacksize;
  int sizeupvalues, sizek, sizecode, sizelineinfo, sizep, sizelocvars;
  int linedefined, lastlinedefined;
  void *k, *code, *p, *lineinfo, *locvars, *upvalues, *cache, *source, *gclist;
} M53Proto;

typedef struct M53String {
  void *next;
  m_byte tt, marked, extra, shrlen;
  unsigned hash;
  size_t lnglen;
} M53String;

typedef struct M53Global {
  lua_Alloc frealloc;
  void *ud;
  ptrdiff_t totalbytes, GCdebt;
  size_t GCmemtrav, GCestimate;
  struct {
    void **hash;
    int nuse, size;
  } strt;
  M53TValue l_registry;
  unsigned seed;
  m_byte currentwhite, gcstate, gckind, gcrunning;
  void *allgc;
} M53Global;

#define TFUNC LUA_TFUNCTION
const struct PucLayout puc_layout = {
    .release = "Lua 5.3.6",
    .state_size = sizeof(M53State),
    .state_top = offsetof(M53State, top),
    .state_l_G = offsetof(M53State, l_G),
    .state_ci = offsetof(M53State, ci),
    .state_stack = offsetof(M53State, stack),
    .state_stack_last = offsetof(M53State, stack_last),
    .state_base_ci = offsetof(M53State, base_ci),
    .state_size_ci = PUC_NONE,
    .state_savedpc = PUC_NONE,
    .ci_size = sizeof(M53CallInfo),
    .ci_func = offsetof(M53CallInfo, func),
    .ci_previous = offsetof(M53CallInfo, previous),
    .ci_next = offsetof(M53CallInfo, next),
    .ci_savedpc = offsetof(M53CallInfo, u.l.savedpc),
    .ci_callstatus = offsetof(M53CallInfo, callstatus),
    .callstatus_bytes = 2,
    .cist_lua = 1 << 1,
    .cist_tail = 1 << 5,
    .cist_fresh = 1 << 3,
    .cist_reentry = 0,
    .ci_tailcalls = PUC_NONE,
    .tvalue_size = sizeof(M53TValue),
    .tvalue_tt = offsetof(M53TValue, tt_),
    .tt_bytes = 4,
    .tt_lua_closure = TFUNC | 0x40,
    .tt_c_closure = (TFUNC | (2 << 4)) | 0x40,
    .tt_light_cfunc = TFUNC | (1 << 4),
    .gc_tt = offsetof(M53Closure, tt),
    .obj_lua_closure = TFUNC,
    .obj_c_closure = TFUNC | (2 << 4),
    .closure_isc = PUC_NONE,
    .lclosure_proto = offsetof(M53Closure, f_or_p),
    .cclosure_f = offsetof(M53Closure, f_or_p),
    .proto_size = sizeof(M53Proto),
    .proto_tag = LUA_NUMTAGS,
    .proto_code = offsetof(M53Proto, code),
    .proto_sizecode = offsetof(M53Proto, sizecode),
    .proto_lineinfo = offsetof(M53Proto, lineinfo),
    .proto_sizelineinfo = offsetof(M53Proto, sizelineinfo),
    .proto_source = offsetof(M53Proto, source),
    .proto_linedefined = offsetof(M53Proto, linedefined),
    .string_bytes = sizeof(M53String),
    .global_frealloc = offsetof(M53Global, frealloc),
    .global_ud = offsetof(M53Global, ud),
    .global_allgc = offsetof(M53Global, allgc),
    .alloc_tagged = true,
    .alloc_upvalue = 0,
    .cist_walked = 1 << 15,
    .global_gcstopem = PUC_NONE,
    .global_gckind = PUC_NONE,
    .global_gcstate = PUC_NONE,
    .extra_stack = 5,
};
