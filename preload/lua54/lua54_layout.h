/*
** lua54_layout.h: the few internal structures of Lua 5.4.4 that the adapter
** reads (call frames, closures, prototypes, the head of the global state),
** mirrored from their documented shape because Debian ships only the public
** headers.
**
** Invariants callers rely on:
** - Only prefixes are mirrored: a struct here ends at the last field read, so
**   sizeof() of a mirror is no bigger than the real one, except L54Proto,
**   which is whole (its size is checked against the VM's own allocation).
** - Nothing here is trusted until layout_check.c has compared a walk made
**   with these mirrors against lua_getstack()/lua_getinfo() on the running
**   interpreter; on any mismatch the adapter stays off.
*/
#ifndef PROF_LUA54_LAYOUT_H
#define PROF_LUA54_LAYOUT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>

typedef unsigned char l54_byte;

/* Type tags: 4 bits of basic type, 2 variant bits, bit 6 = collectable. */
#define L54_COLLECTABLE 0x40
#define L54_VLCL (LUA_TFUNCTION | (0 << 4))   /* Lua closure */
#define L54_VLCF (LUA_TFUNCTION | (1 << 4))   /* light C function */
#define L54_VCCL (LUA_TFUNCTION | (2 << 4))   /* C closure */
#define L54_TPROTO (LUA_NUMTYPES + 1)         /* also the allocator's tag for a new Proto */
#define L54_VPROTO L54_TPROTO
#define L54_VSHRSTR (LUA_TSTRING | (0 << 4))

/* CallInfo status bits. */
#define L54_CIST_C (1 << 1)    /* the frame runs a C function */
#define L54_CIST_FRESH (1 << 2) /* the frame began a call of luaV_execute */
#define L54_CIST_TAIL (1 << 5) /* the frame was entered by a tail call */
/* Not Lua's: the remembered walk's mark (call_walk.h); Lua 5.4 uses bits 0-13. */
#define L54_CIST_WALKED (1 << 15)

/* Stack slots past stack_last that Lua keeps allocated. */
#define L54_EXTRA_STACK 5
/* At most this many instructions between two absolute line entries. */
#define L54_MAXIWTHABS 128

typedef struct L54GCObject {
  struct L54GCObject *next;
  l54_byte tt;
  l54_byte marked;
} L54GCObject;

typedef union L54Value {
  L54GCObject *gc;
  void *p;
  lua_CFunction f;
  lua_Integer i;
  lua_Number n;
} L54Value;

typedef struct L54TValue {
  L54Value value_;
  l54_byte tt_;
} L54TValue;

/* A stack slot is a TValue padded by the to-be-closed list's delta. */
typedef union L54StackValue {
  L54TValue val;
  struct {
    L54Value value_;
    l54_byte tt_;
    unsigned short delta;
  } tbclist;
} L54StackValue;

typedef struct L54CallInfo {
  L54StackValue *func;
  L54StackValue *top;
  struct L54CallInfo *previous, *next;
  union {
    struct {
      const uint32_t *savedpc;
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
    int funcidx;
    int nyield;
    int nres;
    struct {
      unsigned short ftransfer, ntransfer;
    } transferinfo;
  } u2;
  short nresults;
  unsigned short callstatus;
} L54CallInfo;

typedef struct L54AbsLineInfo {
  int pc;
  int line;
} L54AbsLineInfo;

typedef struct L54TString {
  L54GCObject *next;
  l54_byte tt;
  l54_byte marked;
  l54_byte extra;
  l54_byte shrlen;
  unsigned int hash;
  union {
    size_t lnglen;
    struct L54TString *hnext;
  } u;
  char contents[1];
} L54TString;

typedef struct L54Proto {
  L54GCObject *next;
  l54_byte tt;
  l54_byte marked;
  l54_byte numparams;
  l54_byte is_vararg;
  l54_byte maxstacksize;
  int sizeupvalues;
  int sizek;
  int sizecode;
  int sizelineinfo;
  int sizep;
  int sizelocvars;
  int sizeabslineinfo;
  int linedefined;
  int lastlinedefined;
  L54TValue *k;
  const uint32_t *code;
  struct L54Proto **p;
  void *upvalues;
  const signed char *lineinfo;
  const L54AbsLineInfo *abslineinfo;
  void *locvars;
  L54TString *source;
  L54GCObject *gclist;
} L54Proto;

typedef struct L54LClosure {
  L54GCObject *next;
  l54_byte tt;
  l54_byte marked;
  l54_byte nupvalues;
  L54GCObject *gclist;
  L54Proto *p;
} L54LClosure;

typedef struct L54CClosure {
  L54GCObject *next;
  l54_byte tt;
  l54_byte marked;
  l54_byte nupvalues;
  L54GCObject *gclist;
  lua_CFunction f;
} L54CClosure;

/* global_State up to the list of all collectable objects. */
typedef struct L54Global {
  lua_Alloc frealloc;
  void *ud;
  ptrdiff_t totalbytes;
  ptrdiff_t GCdebt;
  size_t GCestimate;
  size_t lastatomic;
  struct {
    L54TString **hash;
    int nuse;
    int size;
  } strt;
  L54TValue l_registry;
  L54TValue nilvalue;
  unsigned int seed;
  l54_byte currentwhite;
  l54_byte gcstate;
  l54_byte gckind;
  l54_byte gcstopem; /* 1 while a collector step runs (not its finalizers) */
  l54_byte genminormul;
  l54_byte genmajormul;
  l54_byte gcstp;
  l54_byte gcemergency;
  l54_byte gcpause;
  l54_byte gcstepmul;
  l54_byte gcstepsize;
  L54GCObject *allgc;
} L54Global;

/* lua_State up to its first CallInfo. */
typedef struct L54State {
  L54GCObject *next;
  l54_byte tt;
  l54_byte marked;
  l54_byte status;
  l54_byte allowhook;
  unsigned short nci;
  L54StackValue *top;
  L54Global *l_G;
  L54CallInfo *ci;
  L54StackValue *stack_last;
  L54StackValue *stack;
  void *openupval;
  L54StackValue *tbclist;
  L54GCObject *gclist;
  struct L54State *twups;
  void *errorJmp;
  L54CallInfo base_ci;
} L54State;

/* Collector modes and the one state a generational collector rests in. */
#define L54_KGC_INC 0
#define L54_KGC_GEN 1
#define L54_GCSpropagate 0

/* Whether the collector is running now (its finalizers excepted): inside an
** incremental step, or in a young collection, which leaves the rest state.
** XXX: a full collection (collectgarbage()) runs its atomic phase and first
** sweep outside any step: that work shows as its caller's. */
static inline int l54_collecting(const L54Global *g) {
  return g->gcstopem || (g->gckind == L54_KGC_GEN && g->gcstate != L54_GCSpropagate);
}

static inline const L54State *l54_state(lua_State *L) { return (const L54State *)(const void *)L; }

/* A string's bytes (NUL-terminated by Lua). */
static inline const char *l54_str(const L54TString *s) { return s->contents; }

#endif /* PROF_LUA54_LAYOUT_H */
