/* layout_51.c: Lua 5.1's structures (Debian's 5.1.5), mirrored up to the
** last field the adapter reads, and the table made from them. Lua 5.1 keeps
** its CallInfos in one array, the running Lua frame's pc in the state, and
** tells closures apart by a flag (isC); its allocator is not told object
** types. */
#include <stddef.h>

#include <lua.h>

#include "puc_layout.h"

typedef unsigned char m_byte;

typedef struct M51TValue {
  void *value;
  int tt;
} M51TValue;

typedef struct M51CallInfo {
  M51TValue *base, *func, *top;
  const unsigned *savedpc;
  int nresults, tailcalls;
} M51CallInfo;

typedef struct M51State {
  void *next;
  m_byte tt, marked, status;
  M51TValue *top, *base;
  void *l_G;
  M51CallInfo *ci;
  const unsigned *savedpc;
  M51TValue *stack_last, *stack;
  M51CallInfo *end_ci, *base_ci;
  int stacksize, size_ci;
} M51State;

typedef struct M51Closure { /* ClosureHeader, then f or p */
  void *next;
  m_byte tt, marked, isC, nupvalues;
  void *gclist, *env;
  void *f_or_p;
} M51Closure;

typedef struct M51Proto {
  void *next;
  m_byte tt, marked;
  void *k, *code, *p, *lineinfo, *locvars, *upvalues, *source;
  int sizeupvalues, sizek, sizecode, sizelineinfo, sizep, sizelocvars;
  int linedefined, lastlinedefined;
  void *gclist;
  m_byte nups, numparams, is_vararg, maxstacksize;
} M51Proto;

typedef union M51String {
  double dummy; /* L_Umaxalign */
  struct {
    void *next;
    m_byte tt, marked, reserved;
    unsigned hash;
    size_t len;
  } tsv;
} M51String;

typedef struct M51Global {
  struct {
    void **hash;
    unsigned nuse;
    int size;
  } strt;
  lua_Alloc frealloc;
  void *ud;
  m_byte currentwhite, gcstate;
  int sweepstrgc;
  void *rootgc;
} M51Global;

const struct PucLayout puc_layout = {
    .release = "Lua 5.1.5",
    .state_size = sizeof(M51State),
    .state_top = offsetof(M51State, top),
    .state_l_G = offsetof(M51State, l_G),
    .state_ci = offsetof(M51State, ci),
    .state_stack = offsetof(M51State, stack),
    .state_stack_last = offsetof(M51State, stack_last),
    .state_base_ci = offsetof(M51State, base_ci),
    .ci_array = true,
    .state_size_ci = offsetof(M51State, size_ci),
    .state_savedpc = offsetof(M51State, savedpc),
    .ci_size = sizeof(M51CallInfo),
    .ci_func = offsetof(M51CallInfo, func),
    .ci_previous = PUC_NONE,
    .ci_savedpc = offsetof(M51CallInfo, savedpc),
    .ci_callstatus = PUC_NONE,
    .callstatus_bytes = 0,
    .ci_tailcalls = offsetof(M51CallInfo, tailcalls),
    .vm_call_ops = (1u << 28) | (1u << 29), /* OP_CALL, OP_TAILCALL */
    .tvalue_size = sizeof(M51TValue),
    .tvalue_tt = offsetof(M51TValue, tt),
    .tt_bytes = 4,
    .tt_lua_closure = LUA_TFUNCTION,
    .tt_c_closure = LUA_TFUNCTION,
    .tt_light_cfunc = -1,
    .gc_tt = offsetof(M51Closure, tt),
    .obj_lua_closure = LUA_TFUNCTION,
    .obj_c_closure = LUA_TFUNCTION,
    .closure_isc = offsetof(M51Closure, isC),
    .lclosure_proto = offsetof(M51Closure, f_or_p),
    .cclosure_f = offsetof(M51Closure, f_or_p),
    .proto_size = sizeof(M51Proto),
    .proto_tag = LUA_TTHREAD + 1,
    .proto_code = offsetof(M51Proto, code),
    .proto_sizecode = offsetof(M51Proto, sizecode),
    .proto_lineinfo = offsetof(M51Proto, lineinfo),
    .proto_sizelineinfo = offsetof(M51Proto, sizelineinfo),
    .proto_source = offsetof(M51Proto, source),
    .proto_linedefined = offsetof(M51Proto, linedefined),
    .string_bytes = sizeof(M51String),
    .global_frealloc = offsetof(M51Global, frealloc),
    .global_ud = offsetof(M51Global, ud),
    .global_allgc = offsetof(M51Global, rootgc),
    .alloc_tagged = false,
    .alloc_upvalue = 0,
    .cist_walked = 0,
    .global_gcstopem = PUC_NONE,
    .global_gckind = PUC_NONE,
    .global_gcstate = PUC_NONE,
    .extra_stack = 5,
};
