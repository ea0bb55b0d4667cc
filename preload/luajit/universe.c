#include "universe.h"

#include <stddef.h>

#include "agent_api.h"
#include "line_cache.h"
#include "lj_build.h"
#include "symbols.h"
#include "vm_capture.h"
#include "walk_check.h"

static struct Universe universes[UNIVERSES_MAX];
__thread struct Universe *lj_thread_universe __attribute__((tls_model("initial-exec")));

/* Guest stacks recorded with memory events: deeper ones are cut. */
#define ALLOC_MAX_FRAMES 64

/* u's VM is about to free block p: a prototype's name and lines go; with
** its last block (GG_State, lua_close), the VM: samples stop reading it,
** and its slot is free once the block is. */
static bool block_freed(struct Universe *u, const void *p, size_t size) {
  if (p == u->main) {
    lj_thread_universe = NULL;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return true;
  }
  if (symbols_block_freed(p, size)) {
    line_cache_forget();
    frame_trail_forget(&u->trail);
  } else if (size > lj_build->layout->ref + 1u && lj_gct(p, lj_build->layout) == LJ_GCT_FUNC) {
    /* XXX: inferred from the header: a block that only looks like a
    ** function costs the trail, never a wrong frame. */
    frame_trail_forget(&u->trail);
  }
  return false;
}

/* The VM's last free: u is done, its slot free for the next VM. */
static void *close_free(struct Universe *u, void *ptr, size_t osize) {
  void *r = u->orig(u->orig_ud, ptr, osize, 0);
  __atomic_store_n(&u->g, NULL, __ATOMIC_RELEASE);
  return r;
}

/* A call the agent records (verdict, prof_guest_sample): where the VM is,
** then the call. Out of line: the calls sampling leaves out need none of
** its frame. */
static __attribute__((noinline)) void *recorded_alloc(struct Universe *u, unsigned verdict,
                                                      void *ptr, size_t osize, size_t nsize) {
  struct VmCapture c;
  const struct prof_guest_walk *walked = NULL;
  struct prof_guest_walk walk;
  /* The collector's own calls (nearly every free) are charged INTERNAL, as
  ** memprof does, without a stack: where the step began says nothing. */
  if ((int32_t)lj_u32(u->g, lj_build->g_vmstate) == ~LJ_STATE_GC) {
    c.n = c.fresh = 0;
    c.site = (struct prof_guest_site){PROF_SITE_INTERNAL, 0, 0};
  } else {
    vm_capture(u->g, u->main, false, ALLOC_MAX_FRAMES, &u->code, NULL, &u->trail, &c);
    if (walk_check_on) walk_check(u, ALLOC_MAX_FRAMES, &c);
    /* The frames from the trail are the last capture's, but for the
    ** innermost of those it passed, which naming a trace may have
    ** rewritten after its walk (vm_capture.c). */
    int same = c.n - c.fresh;
    if (same > u->last_n - 1) same = u->last_n - 1;
    walk = (struct prof_guest_walk){&u->trail, ++u->captures, same > 0 ? same : 0};
    walked = &walk;
    u->last_n = c.n;
    if (walk_check_on) walk_check_unchanged(&walk, &c);
  }
  if (c.fresh) symbols_publish_frames(c.frames, c.kinds, c.fresh);
  if (c.site.source == PROF_SITE_TRACE) symbols_publish_trace(u->g, (uint32_t)c.site.addr);
  if (!nsize) {
    prof_guest_alloc_walked(verdict, ptr, osize, NULL, 0, &c.site, c.frames, c.n, walked);
    if (block_freed(u, ptr, osize)) return close_free(u, ptr, osize);
    return u->orig(u->orig_ud, ptr, osize, nsize);
  }
  void *block = u->orig(u->orig_ud, ptr, osize, nsize);
  /* (A failed call too: the old block lives on.) */
  prof_guest_alloc_walked(verdict, ptr, ptr ? osize : 0, block, nsize, &c.site, c.frames, c.n,
                          walked);
  return block;
}

void *universe_alloc(struct Universe *u, void *ptr, size_t osize, size_t nsize) {
  lj_thread_universe = u;
  symbols_drain_pending();
  /* Nothing is captured for a call the agent does not record (sampled out). */
  const unsigned verdict = ptr || nsize ? prof_guest_sample(ptr, nsize) : 0;
  if (verdict) return recorded_alloc(u, verdict, ptr, osize, nsize);
  /* Still told: the heap count takes every call. */
  if (nsize) {
    void *block = u->orig(u->orig_ud, ptr, osize, nsize);
    prof_guest_alloc_walked(0, ptr, ptr ? osize : 0, block, nsize, NULL, NULL, 0, NULL);
    return block;
  }
  if (ptr) {
    prof_guest_alloc_walked(0, ptr, osize, NULL, 0, NULL, NULL, 0, NULL);
    /* CPU samples name prototypes too */
    if (block_freed(u, ptr, osize)) return close_free(u, ptr, osize);
  }
  return u->orig(u->orig_ud, ptr, osize, nsize);
}

static void *profiling_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  return universe_alloc(ud, ptr, osize, nsize);
}

struct Universe *universe_at(int i) { return &universes[i]; }

void universe_name_stack(const struct Universe *u) {
  struct VmCapture c;
  vm_capture(u->g, u->main, false, VM_CAPTURE_MAX_FRAMES, &u->code, NULL, NULL, &c);
  /* (Not symbols_publish_frames: the wrapper's one call of it stays inlined.) */
  for (int i = 0; i < c.n; i++) {
    if (c.kinds[i] != FRAME_KIND_LUA) continue;
    symbols_name_proto((const LJProto *)(uintptr_t)c.frames[i].addr);
    symbols_name_nested((const LJProto *)(uintptr_t)c.frames[i].addr, 8);
  }
}

struct Universe *universe_of(const char *g) {
  for (int i = 0; i < UNIVERSES_MAX; i++)
    if (__atomic_load_n(&universes[i].g, __ATOMIC_ACQUIRE) == g) return &universes[i];
  return NULL;
}

struct Universe *universe_start(lua_State *L, uint64_t reentry) {
  struct Universe *u = universe_of(NULL);
  if (!u) return NULL;
  const char *g = lj_state_g(L);
  *u = (struct Universe){.main = (const LJState *)lj_main_thread(g),
                         .adopted = false,
                         .bytes_before = lj_g_ref(g, lj_build->g_gc_total)};
  vm_code_find(g, &u->code);
  u->code.reentry = reentry;
  u->orig = lua_getallocf(L, &u->orig_ud);
  __atomic_store_n(&u->g, g, __ATOMIC_RELEASE);
  lua_setallocf(L, profiling_alloc, u);
  lj_thread_universe = u;
  return u;
}

/* XXX: a slot being filled holds this g, which no lookup matches. */
#define CLAIMED ((const char *)1)

struct Universe *universe_adopt(const char *g, const struct VmCode *code) {
  struct Universe *u = universe_of(g);
  if (u) return u;
  for (int i = 0; i < UNIVERSES_MAX; i++) {
    const char *none = NULL;
    u = &universes[i];
    if (!__atomic_compare_exchange_n(&u->g, &none, CLAIMED, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
      continue;
    u->main = (const LJState *)lj_main_thread(g);
    u->orig = NULL;
    u->orig_ud = NULL;
    u->bytes_before = 0;
    u->code = *code;
    u->trail.n = 0;
    u->captures = 0;
    u->last_n = 0;
    u->proto_events = false;
    u->adopted = true;
    u->live_wrap = LIVE_WRAP_NONE;
    __atomic_store_n(&u->g, g, __ATOMIC_RELEASE);
    return u;
  }
  return NULL;
}

void universe_forget_adopted(void) {
  for (int i = 0; i < UNIVERSES_MAX; i++)
    if (universes[i].adopted) {
      universes[i].adopted = false;
      __atomic_store_n(&universes[i].g, NULL, __ATOMIC_RELEASE);
    }
}

void universe_retire(struct Universe *u) {
  u->adopted = false;
  __atomic_store_n(&u->g, CLAIMED, __ATOMIC_RELEASE);
}
