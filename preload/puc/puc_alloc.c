#include "puc_alloc.h"

#include "agent_api.h"
#include "puc_layout.h"
#include "puc_threads.h"
#include "puc_walk.h"

#define LAY puc_layout

static void publish_proto(const void *p) {
  const void *source = puc_ptr(p, LAY.proto_source);
  const int line = puc_int(p, LAY.proto_linedefined);
  prof_guest_symbol((uint64_t)(uintptr_t)p,
                    source ? (const char *)source + LAY.string_bytes : "=?",
                    (uint64_t)(line > 0 ? line : 0));
}

static void publish_ready(struct PucAlloc *pa) {
  unsigned kept = 0;
  for (unsigned i = 0; i < pa->npending; i++) {
    const void *p = pa->pending[i];
    if (puc_ptr(p, LAY.proto_code))
      publish_proto(p);
    else
      pa->pending[kept++] = p;
  }
  pa->npending = kept;
}

static void add_pending(struct PucAlloc *pa, const void *p) {
  if (pa->npending == PUC_PENDING_MAX) {
    pa->dropped++;
    return;
  }
  pa->pending[pa->npending++] = p;
}

static void forget_pending(struct PucAlloc *pa, const void *p) {
  for (unsigned i = 0; i < pa->npending; i++)
    if (pa->pending[i] == p) {
      pa->pending[i] = pa->pending[--pa->npending];
      return;
    }
}

unsigned puc_object_type(const void *ptr, size_t osize) {
  if (ptr || osize == 0) return PROF_OBJECT_OTHER;
  if (osize == LAY.proto_tag) return PROF_OBJECT_PROTO;
  if (LAY.alloc_upvalue && osize == LAY.alloc_upvalue) return PROF_OBJECT_UPVALUE;
  switch (osize) {
    case LUA_TSTRING: return PROF_OBJECT_STRING;
    case LUA_TTABLE: return PROF_OBJECT_TABLE;
    /* XXX: Lua and C closures alike: the tag passed is the type, not its variant. */
    case LUA_TFUNCTION: return PROF_OBJECT_FUNCTION;
    case LUA_TUSERDATA: return PROF_OBJECT_USERDATA;
    case LUA_TTHREAD: return PROF_OBJECT_THREAD;
    default: return PROF_OBJECT_NONE;
  }
}

static void *profiling_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  struct PucAlloc *pa = ud;
  struct PucSlot *s = &puc_slot;
  if (__builtin_expect(s->main != pa->main, 0)) puc_thread_runs(pa->main);
  if (pa->candidate) {
    const void *head = puc_ptr(pa->global, LAY.global_allgc);
    if (head == pa->candidate && puc_byte(head, LAY.gc_tt) == LAY.proto_tag)
      add_pending(pa, head);
    pa->candidate = NULL;
  }
  if (pa->npending) publish_ready(pa);
  if (ptr && nsize == 0 && osize == LAY.proto_size) {
    forget_pending(pa, ptr);
    puc_walk_protos_freed();
  }
  const int typed = pa->typing && nsize != 0;
  if (typed) prof_guest_object_type(puc_object_type(ptr, osize));
  s->in_alloc++;
  void *block = pa->orig(pa->orig_ud, ptr, osize, nsize);
  s->in_alloc--;
  if (typed) prof_guest_object_type(PROF_OBJECT_NONE);
  if (!ptr && block) {
    if (LAY.alloc_tagged && osize == LAY.proto_tag)
      add_pending(pa, block);
    else if (!LAY.alloc_tagged && nsize == LAY.proto_size)
      pa->candidate = block;
  }
  return block;
}

void puc_alloc_start(struct PucAlloc *pa, lua_State *L, lua_State *main, int typing) {
  pa->main = main;
  pa->global = puc_global(L);
  pa->typing = typing && LAY.alloc_tagged;
  pa->orig = lua_getallocf(L, &pa->orig_ud);
  lua_setallocf(L, profiling_alloc, pa);
  /* XXX: the full collection sweeps dead objects first: a dead prototype
  ** still on the list may point at an already freed source string. 5.4
  ** refuses it (-1) while a finalizer runs; then nothing is named now. */
  if (lua_gc(L, LUA_GCCOLLECT, 0) < 0) return;
  for (const void *o = puc_ptr(pa->global, LAY.global_allgc); o; o = puc_ptr(o, 0)) {
    if (puc_byte(o, LAY.gc_tt) != LAY.proto_tag) continue;
    if (puc_ptr(o, LAY.proto_code))
      publish_proto(o);
    else
      add_pending(pa, o);
  }
}

int puc_alloc_stop(struct PucAlloc *pa, lua_State *L) {
  void *ud = NULL;
  if (lua_getallocf(L, &ud) != profiling_alloc || ud != pa) return 0;
  lua_setallocf(L, pa->orig, pa->orig_ud);
  return 1;
}
