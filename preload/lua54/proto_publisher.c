#include "proto_publisher.h"

#include "call_walk.h"
#include "libprof.h"
#include "lua54_layout.h"
#include "object_types.h"
#include "running_state.h"

static void publish_proto(const L54Proto *p) {
  prof_guest_symbol((uint64_t)(uintptr_t)p, p->source ? l54_str(p->source) : "=?",
                    (uint64_t)(p->linedefined > 0 ? p->linedefined : 0));
}

static void publish_ready(struct ProtoPublisher *pp) {
  unsigned kept = 0;
  for (unsigned i = 0; i < pp->npending; i++) {
    const L54Proto *p = pp->pending[i];
    if (p->code)
      publish_proto(p);
    else
      pp->pending[kept++] = p;
  }
  pp->npending = kept;
}

static void add_pending(struct ProtoPublisher *pp, const void *p) {
  if (pp->npending == PROTO_PENDING_MAX) {
    pp->dropped++;
    return;
  }
  pp->pending[pp->npending++] = p;
}

static void forget_pending(struct ProtoPublisher *pp, const void *p) {
  for (unsigned i = 0; i < pp->npending; i++)
    if (pp->pending[i] == p) {
      pp->pending[i] = pp->pending[--pp->npending];
      return;
    }
}

static void *publishing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  struct ProtoPublisher *pp = ud;
  if (pp->npending) publish_ready(pp);
  if (ptr && nsize == 0 && osize == pp->proto_size) {
    forget_pending(pp, ptr);
    call_walk_protos_freed();
  }
  const int typed = pp->typing && nsize != 0;
  if (typed) prof_guest_object_type(object_type_of(ptr, osize));
  struct ThreadSlot *s = &lua54_slot;
  if (__builtin_expect(s->main != pp->main, 0)) running_state_switch(pp->main);
  s->in_alloc++;
  void *block = pp->orig(pp->orig_ud, ptr, osize, nsize);
  s->in_alloc--;
  if (typed) prof_guest_object_type(PROF_OBJECT_NONE);
  /* XXX: a new block's osize is the object's type tag (lua_Alloc's contract). */
  if (!ptr && osize == L54_TPROTO && block) add_pending(pp, block);
  return block;
}

void proto_publisher_start(struct ProtoPublisher *pp, lua_State *L, lua_State *main,
                           size_t proto_size, int typing) {
  pp->main = main;
  pp->proto_size = proto_size;
  pp->typing = typing;
  pp->orig = lua_getallocf(L, &pp->orig_ud);
  lua_setallocf(L, publishing_alloc, pp);
  /* XXX: the full collection sweeps dead objects first: a dead prototype
  ** still on the list may point at an already freed source string. It is
  ** refused (-1) only while a finalizer runs; then nothing is named now. */
  if (lua_gc(L, LUA_GCCOLLECT) < 0) return;
  for (const L54GCObject *o = l54_state(L)->l_G->allgc; o; o = o->next) {
    if (o->tt != L54_VPROTO) continue;
    const L54Proto *p = (const L54Proto *)o;
    if (p->code)
      publish_proto(p);
    else
      add_pending(pp, p);
  }
}

int proto_publisher_stop(struct ProtoPublisher *pp, lua_State *L) {
  void *ud = NULL;
  if (lua_getallocf(L, &ud) != publishing_alloc || ud != pp) return 0;
  lua_setallocf(L, pp->orig, pp->orig_ud);
  return 1;
}
