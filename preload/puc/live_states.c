#define _GNU_SOURCE
#include "live_states.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "agent_api.h"
#include "live_alloc.h"
#include "puc_backtracer.h"
#include "puc_layout.h"
#include "puc_threads.h"
#include "puc_walk.h"
#include "safe_read.h"
#include "universes.h"

#define LAY puc_layout

/* Words of the interrupted stack searched, from its top. */
#define STACK_WORDS 128
/* Prototypes named from samples: keys in an open-addressed set. */
#define NAMED_SLOTS 4096
#define NAMED_PROBES 16
/* Bytes of a chunk name published (as the allocator wrapper's names). */
#define NAME_BYTES 400

static ptrdiff_t g_main_to_g; /* main thread to its global_State (LG) */
static const void *g_scratch; /* the check's scratch state, closed since */
static const void *g_found[UNIVERSES_MAX];
static uint64_t g_named[NAMED_SLOTS];

/* Whether p is a thread object; its global_State in *g. */
static bool thread_at(const void *p, const void **g) {
  unsigned char copy[256];
  const uintptr_t a = (uintptr_t)p;
  if (a < 4096 || (a & 7) || LAY.state_size > sizeof copy || !safe_read(copy, p, LAY.state_size))
    return false;
  if (puc_byte(copy, LAY.gc_tt) != LUA_TTHREAD) return false;
  *g = puc_ptr(copy, LAY.state_l_G);
  return *g != NULL;
}

static bool is_main_thread(const void *p) {
  const void *g;
  return thread_at(p, &g) && (const char *)g - g_main_to_g == (const char *)p;
}

/* The main thread of the state p points at, or NULL. */
static const void *main_thread_of(uint64_t p) {
  const void *g;
  if (!thread_at((const void *)(uintptr_t)p, &g)) return NULL;
  const void *main = (const char *)g - g_main_to_g;
  return is_main_thread(main) ? main : NULL;
}

/* A main thread found from the interrupted registers, then the stack. */
static const void *find_in(const ucontext_t *uc) {
  const greg_t *r = uc->uc_mcontext.gregs;
  for (int i = 0; i < NGREG; i++) {
    if (i == REG_RIP || i == REG_RSP || i == REG_EFL) continue;
    const void *main = main_thread_of((uint64_t)r[i]);
    if (main) return main;
  }
  uint64_t words[STACK_WORDS];
  const uint64_t sp = (uint64_t)r[REG_RSP];
  /* The stack may end sooner: the words up to its page's end, then fewer. */
  int n = STACK_WORDS;
  while (n > 0 && !safe_read(words, (const void *)(uintptr_t)sp, (size_t)n * 8)) n /= 2;
  for (int i = 0; i < n; i++) {
    const void *main = main_thread_of(words[i]);
    if (main) return main;
  }
  return NULL;
}

/* Makes main a universe (once), remembered for the stop. */
static bool adopt(const void *main) {
  if (universe_live(main)) return true;
  for (int i = 0; i < UNIVERSES_MAX; i++) {
    const void *none = NULL;
    if (__atomic_compare_exchange_n(&g_found[i], &none, main, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED))
      return universe_add(main);
  }
  return false;
}

/* Samples of this thread since it was last searched in vain: a thread
** that runs no Lua is searched again at every SEARCH_EVERY-th sample only
** (a search costs a safe read a candidate). */
#define SEARCH_EVERY 16
static __thread unsigned t_misses __attribute__((tls_model("initial-exec")));

/* Puts the allocator wrapper (live_alloc.h) into main's universe once a
** register of the sample points at one of its threads. A pointer found
** in the stack alone may be stale: the words of a frame that ended (the
** check's scratch state, closed at the attach, leaves such words on the
** thread gdb called on), and the wrapper is written into the state. */
static void wrap_when_running(const void *main, const ucontext_t *uc) {
  static __thread unsigned t_tries __attribute__((tls_model("initial-exec")));
  if (!uc || main == g_scratch || !live_alloc_wanted(main)) return;
  const greg_t *r = uc->uc_mcontext.gregs;
  /* The main thread itself first, by value; a coroutine of it (safe reads
  ** a register) at every SEARCH_EVERY-th try only. */
  bool running = false;
  for (int i = 0; i < NGREG && !running; i++) running = (const void *)(uintptr_t)r[i] == main;
  if (!running && t_tries++ % SEARCH_EVERY == 0)
    for (int i = 0; i < NGREG && !running; i++) {
      if (i == REG_RIP || i == REG_RSP || i == REG_EFL) continue;
      running = main_thread_of((uint64_t)r[i]) == main;
    }
  if (running) live_alloc_wrap(main);
}

/* The universe this thread runs: the one whose allocator runs here (the
** wrapper's, live_alloc.h: it lives), else the one bound to it while it
** holds, else one found where the sample interrupted it. */
static const void *universe_here(void) {
  const void *main = puc_slot.main;
  if (main && puc_slot.in_alloc > 0) return main;
  const ucontext_t *uc = prof_guest_signal_context ? prof_guest_signal_context() : NULL;
  if (main && is_main_thread(main) && adopt(main)) {
    wrap_when_running(main, uc);
    return main;
  }
  if (t_misses++ % SEARCH_EVERY != 0) return NULL;
  main = uc ? find_in(uc) : NULL;
  if (!main || !adopt(main)) return NULL;
  t_misses = 0;
  puc_thread_runs((lua_State *)main);
  wrap_when_running(main, uc);
  return main;
}

/* Whether key joins the named set now (false: named before, or no room). */
static bool claim_name(uint64_t key) {
  for (int i = 0; i < NAMED_PROBES; i++) {
    uint64_t *slot = &g_named[(key + (uint64_t)i) % NAMED_SLOTS];
    uint64_t was = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (was == key) return false;
    if (was == 0 && __atomic_compare_exchange_n(slot, &was, key, false, __ATOMIC_SEQ_CST,
                                                __ATOMIC_RELAXED))
      return true;
    if (was == key) return false;
  }
  return false;
}

static void forget_name(uint64_t key) {
  for (int i = 0; i < NAMED_PROBES; i++) {
    uint64_t *slot = &g_named[(key + (uint64_t)i) % NAMED_SLOTS];
    uint64_t was = key;
    if (__atomic_compare_exchange_n(slot, &was, 0, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
      return;
  }
}

/* Reads the NUL-terminated string at s into name (cut to its size). */
static bool read_name(const char *s, char *name, size_t size, bool direct) {
  size_t n = size - 1;
  if (direct) {
    strncpy(name, s, n);
    name[n] = 0;
    return true;
  }
  const size_t to_page_end = 4096 - ((uintptr_t)s & 4095);
  if (!safe_read(name, s, n)) {
    n = to_page_end < n ? to_page_end : n;
    if (!safe_read(name, s, n)) return false;
  }
  name[n] = 0;
  return true;
}

/* Names the prototype at p: its chunk and first line, read now (direct:
** it lives, on the stack of a universe whose allocator runs). A new
** prototype at a freed one's address differs in them: named again. */
static void name_proto(const void *p, bool direct) {
  unsigned char copy[512];
  if (LAY.proto_size > sizeof copy) return;
  if (direct)
    memcpy(copy, p, LAY.proto_size);
  else if (!safe_read(copy, p, LAY.proto_size))
    return;
  const char *source = puc_ptr(copy, LAY.proto_source);
  const int line = puc_int(copy, LAY.proto_linedefined);
  const uint64_t key = ((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull) ^
                       (uint64_t)(uintptr_t)source ^ ((uint64_t)(unsigned)line << 48);
  if (!key || !claim_name(key)) return;
  char name[NAME_BYTES + 1];
  if (!source || !read_name(source + LAY.string_bytes, name, sizeof name, direct)) {
    name[0] = '=', name[1] = '?', name[2] = 0;
  }
  if (!prof_guest_symbol_from_signal((uint64_t)(uintptr_t)p, name, (uint64_t)(line > 0 ? line : 0)))
    forget_name(key); /* the table was busy: the next sample names it */
}

static int live_backtrace(void *ctx, struct prof_guest_frame *frames, int max, int *vmstate) {
  if (!universe_here()) {
    *vmstate = -1;
    return 0;
  }
  const int n = puc_backtrace(ctx, frames, max, vmstate);
  const bool direct = puc_slot.in_alloc > 0;
  for (int i = 0; i < n; i++)
    if (frames[i].type == PROF_FRAME_LFUNC)
      name_proto((const void *)(uintptr_t)frames[i].addr, direct);
  return n;
}

/* The stack recaller (libprof.h): in an allocation call through the
** wrapper, the remembered walk of a universe the adapter saw made
** (puc_recall: direct reads, the frames pushed since the thread's last
** walk read alone), its new frames named; elsewhere live_backtrace, and
** the trail dropped, as puc_recall drops it for its plain walks. */
static const struct prof_guest_frame *live_recall(void *ctx, struct prof_guest_frame *room,
                                                  int max, int *n, int *vmstate,
                                                  int *unchanged) {
  if (puc_slot.in_alloc <= 0 || !puc_slot.main) {
    if (puc_slot.trail) puc_slot.trail->entries = 0;
    *unchanged = 0;
    *n = live_backtrace(ctx, room, max, vmstate);
    return room;
  }
  const struct prof_guest_frame *frames = puc_recall(ctx, room, max, n, vmstate, unchanged);
  for (int i = 0; i < *n - *unchanged; i++)
    if (frames[i].type == PROF_FRAME_LFUNC) name_proto((const void *)(uintptr_t)frames[i].addr, true);
  return frames;
}

void live_states_start(lua_State *scratch, bool memory) {
  g_main_to_g = (const char *)puc_global(scratch) - (const char *)scratch;
  g_scratch = scratch;
  live_alloc_enable(memory);
  puc_backtrace_read_safely(true);
  prof_register_guest(live_backtrace, NULL);
  if (memory && puc_walk_can_remember() && prof_register_guest_stack_recall)
    prof_register_guest_stack_recall(live_recall, NULL);
}

void live_states_stop(void) {
  prof_register_guest(NULL, NULL);
  live_alloc_enable(false);
  live_alloc_unwrap_all();
  for (int i = 0; i < UNIVERSES_MAX; i++) {
    const void *main = __atomic_exchange_n(&g_found[i], NULL, __ATOMIC_SEQ_CST);
    if (main) universe_remove(main);
  }
}
