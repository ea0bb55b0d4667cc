/*
** puc_layout.h: the private structures of one PUC Lua release (5.1, 5.2,
** 5.3, 5.4), as data: where each field the adapter reads lies, and the tags and
** flags that tell frames and objects apart. Each release's table is built,
** in its own layout_5x.c, from prefixes of its structures mirrored there
** (Debian ships only the public headers); the walk, the check and the
** allocator wrapper read through the table alone, never through a release's
** mirror.
**
** Invariants callers rely on:
** - Exactly one table is linked into an adapter (puc_layout), the one of
**   the release whose headers it was built with.
** - Nothing in it is trusted until puc_check.c has compared a walk made
**   with it against lua_getstack()/lua_getinfo() on the running VM.
*/
#ifndef PROF_PUC_LAYOUT_H
#define PROF_PUC_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Absent field or flag. */
#define PUC_NONE 0xffff

struct PucLayout {
  const char *release; /* "Lua 5.3.6", as refusals name it */
  /* lua_State */
  uint16_t state_size;       /* bytes up to the last field read */
  uint16_t state_top, state_l_G, state_ci, state_stack, state_stack_last;
  uint16_t state_base_ci;    /* the first CallInfo (in place), or a pointer to the array */
  bool ci_array;             /* 5.1: CallInfos in one array, ci - 1 is the caller */
  uint16_t state_size_ci;    /* ci_array: the array's length (int) */
  uint16_t state_savedpc;    /* 5.1: the running Lua frame's pc, kept in the state */
  /* CallInfo */
  uint16_t ci_size, ci_func, ci_previous, ci_savedpc;
  uint16_t ci_next;          /* the CallInfo a call from this frame reuses (5.2 on) */
  uint16_t ci_callstatus;    /* PUC_NONE in 5.1 */
  uint8_t callstatus_bytes;
  uint16_t cist_lua, cist_tail;
  uint16_t cist_c;           /* or (5.4) the flag of a C frame, cist_lua 0 */
  uint16_t cist_fresh;       /* set on a Lua frame that began a run of luaV_execute */
  uint16_t cist_reentry;     /* or set on one that did not (5.2) */
  uint16_t ci_tailcalls;     /* 5.1: tail calls lost under the frame (int) */
  /* The remembered walk's mark (puc_walk.h): a status bit the release never
  ** sets and a push clears, as it assigns the status whole; 0: none (5.1). */
  uint16_t cist_walked;
  /* 5.1 marks no frame: a Lua frame's callee began a run of luaV_execute
  ** unless the caller's instruction (before its saved pc) is one of these
  ** opcodes (a bit each; 0: the flags above tell). */
  uint64_t vm_call_ops;
  /* Stack slots (TValue) */
  uint16_t tvalue_size, tvalue_tt;
  uint8_t tt_bytes;          /* the tag's width: 4 (int) or 1 */
  int tt_lua_closure, tt_c_closure, tt_light_cfunc; /* slot tags; -1: none */
  /* Closures: the object's tag byte, and 5.1's isC byte */
  uint16_t gc_tt;
  uint8_t obj_lua_closure, obj_c_closure;
  uint16_t closure_isc;
  uint16_t lclosure_proto, cclosure_f;
  /* Proto */
  uint16_t proto_size;       /* the whole struct, as the VM allocates it */
  uint8_t proto_tag;
  uint16_t proto_code, proto_sizecode, proto_lineinfo, proto_sizelineinfo;
  uint16_t proto_source, proto_linedefined;
  /* 5.4's lines: lineinfo holds signed byte deltas, with an absolute entry
  ** ({int pc, line}) at least every maxiwthabs instructions; else (5.1-5.3)
  ** lineinfo holds an int line per instruction. */
  bool line_deltas;
  uint16_t proto_abslineinfo, proto_sizeabslineinfo, maxiwthabs;
  /* TString: where the bytes begin */
  uint16_t string_bytes;
  /* global_State */
  uint16_t global_frealloc, global_ud, global_allgc;
  /* 5.4 tells when its collector runs (bytes): inside a step (gcstopem),
  ** or in a young collection (gckind gen_kind, gcstate not rest_state);
  ** PUC_NONE: the release does not tell. */
  uint16_t global_gcstopem, global_gckind, global_gcstate;
  uint8_t gen_kind, rest_state;
  /* lua_Alloc's osize for a new block: its object type (5.2 on), or 0. */
  bool alloc_tagged;
  uint8_t alloc_upvalue;     /* an upvalue's tag; 0: allocated untagged */
  /* Stack slots past stack_last that Lua keeps allocated. */
  uint16_t extra_stack;
};

extern const struct PucLayout puc_layout;

/* Field readers: p + off, copied (the mirrors' fields may be unaligned in
** no release, but the copy costs nothing and says what is read). */
static inline const void *puc_ptr(const void *p, uint16_t off) {
  const void *v;
  memcpy(&v, (const char *)p + off, sizeof v);
  return v;
}
static inline int puc_int(const void *p, uint16_t off) {
  int v;
  memcpy(&v, (const char *)p + off, sizeof v);
  return v;
}
static inline uint8_t puc_byte(const void *p, uint16_t off) {
  return *((const uint8_t *)p + off);
}

/* A CallInfo's status word, and its writer (the remembered walk's mark). */
static inline unsigned puc_status(const void *ci) {
  if (puc_layout.callstatus_bytes == 1) return puc_byte(ci, puc_layout.ci_callstatus);
  unsigned short v;
  memcpy(&v, (const char *)ci + puc_layout.ci_callstatus, sizeof v);
  return v;
}
static inline void puc_set_status(void *ci, unsigned status) {
  if (puc_layout.callstatus_bytes == 1) {
    *((uint8_t *)ci + puc_layout.ci_callstatus) = (uint8_t)status;
  } else {
    const unsigned short v = (unsigned short)status;
    memcpy((char *)ci + puc_layout.ci_callstatus, &v, sizeof v);
  }
}

#endif /* PROF_PUC_LAYOUT_H */
