#define _GNU_SOURCE
#include "symbols.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include <lauxlib.h>

#include "frame_walk.h"
#include "lj_build.h"
#include "lj_layout.h"
#include "safe_read.h"

/* Named prototypes: an open-addressing set of addresses (0 empty, 1 a
** removed entry), mapped lazily. */
#define SEEN_SLOTS (1u << 20)
#define SEEN_PROBES 64
#define TOMBSTONE 1
static uint64_t *seen;
/* Traces by number: the GCtrace last named under that number. */
#define MAX_TRACES (1u << 16)
static uint64_t *traces;
/* Prototypes and C functions signal handlers saw unnamed (this VM's thread
** only), with their frame kinds. */
#define PENDING_MAX 1024
static uint64_t pending[PENDING_MAX];
static uint8_t pending_kind[PENDING_MAX];
static volatile int npending;
static volatile int draining;

static void *map_zeroed(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

bool symbols_init(void) {
  if (!seen) seen = map_zeroed(SEEN_SLOTS * sizeof *seen);
  if (!traces) traces = map_zeroed(MAX_TRACES * sizeof *traces);
  return seen && traces;
}

bool symbols_ready(void) { return seen && traces; }

static inline uint32_t slot_of(uint64_t addr) {
  return (uint32_t)((addr >> 3) * 0x9E3779B97F4A7C15ull >> 44) & (SEEN_SLOTS - 1);
}

/* The prototypes named last, by a hash of their address: most frames of an
** allocation's stack were named at the previous one. */
#define RECENT_SLOTS 1024
static uint64_t recent[RECENT_SLOTS];
static inline uint64_t *recent_slot(uint64_t addr) { return &recent[(addr >> 4) & (RECENT_SLOTS - 1)]; }

static bool is_seen(uint64_t addr) {
  for (uint32_t i = slot_of(addr), k = 0; k < SEEN_PROBES; k++, i = (i + 1) & (SEEN_SLOTS - 1)) {
    const uint64_t v = __atomic_load_n(&seen[i], __ATOMIC_RELAXED);
    if (v == addr) return true;
    if (v == 0) return false;
  }
  return false;
}

/* XXX: a full probe sequence leaves the prototype unremembered: it is then
** named at every sighting, which costs time but loses nothing. */
static void add_seen(uint64_t addr) {
  for (uint32_t i = slot_of(addr), k = 0; k < SEEN_PROBES; k++, i = (i + 1) & (SEEN_SLOTS - 1)) {
    const uint64_t v = seen[i];
    if (v == 0 || v == TOMBSTONE) {
      __atomic_store_n(&seen[i], addr, __ATOMIC_RELAXED);
      return;
    }
  }
}

static void remove_seen(uint64_t addr) {
  for (uint32_t i = slot_of(addr), k = 0; k < SEEN_PROBES; k++, i = (i + 1) & (SEEN_SLOTS - 1)) {
    const uint64_t v = seen[i];
    if (v == addr) {
      __atomic_store_n(&seen[i], TOMBSTONE, __ATOMIC_RELAXED);
      return;
    }
    if (v == 0) return;
  }
}

static void publish_proto(const LJProto *pt) {
  const struct LjLayout *o = lj_build->layout;
  const LJStr *chunk = (const LJStr *)(uintptr_t)lj_ref(pt, o->pt_chunkname, o);
  const int32_t firstline = (int32_t)lj_u32(pt, o->pt_firstline);
  prof_guest_symbol((uint64_t)(uintptr_t)pt, chunk ? lj_str_data(chunk, lj_build->str_size) : "=?",
                    (uint64_t)(firstline > 0 ? firstline : 0));
  add_seen((uint64_t)(uintptr_t)pt);
}

/* A C function no library table holds (luajit.c's pmain, a C module's
** closure): its symbol if the object exports one there, else object+offset,
** so that the analyzer does not take the nearest name below it. */
static void publish_cfunc(uint64_t addr) {
  Dl_info info;
  char name[160];
  if (!dladdr((void *)(uintptr_t)addr, &info) || !info.dli_fname) {
    snprintf(name, sizeof name, "CFUNC 0x%llx", (unsigned long long)addr);
  } else if (info.dli_sname && (uint64_t)(uintptr_t)info.dli_saddr == addr) {
    snprintf(name, sizeof name, "%s", info.dli_sname);
  } else {
    const char *base = strrchr(info.dli_fname, '/');
    snprintf(name, sizeof name, "%s+0x%llx", base ? base + 1 : info.dli_fname,
             (unsigned long long)(addr - (uint64_t)(uintptr_t)info.dli_fbase));
  }
  prof_guest_cfunc_symbol(addr, name);
  add_seen(addr);
}

void symbols_name_proto(const LJProto *pt) {
  if (seen && !is_seen((uint64_t)(uintptr_t)pt)) publish_proto(pt);
}

void symbols_name_nested(const LJProto *pt, int depth) {
  const struct LjLayout *o = lj_build->layout;
  const uint64_t k = lj_ref(pt, o->pt_k, o);
  const uint32_t n = lj_u32(pt, o->pt_sizekgc);
  for (uint32_t i = 1; i <= n; i++) {
    const LJProto *child = (const LJProto *)(uintptr_t)lj_ref(lj_proto_kgc_at(k, i, o), 0, o);
    if (!child || lj_gct(child, o) != LJ_GCT_PROTO) continue;
    symbols_name_proto(child);
    if (depth > 0) symbols_name_nested(child, depth - 1);
  }
}

void symbols_name_cfunc(uint64_t addr, const char *name) {
  prof_guest_cfunc_symbol(addr, name);
  add_seen(addr);
}

void symbols_publish_frames(const struct prof_guest_frame *frames, const uint8_t *kinds, int n) {
  if (!seen) return;
  for (int i = 0; i < n; i++) {
    if (kinds[i] == FRAME_KIND_BUILTIN || *recent_slot(frames[i].addr) == frames[i].addr) continue;
    if (!is_seen(frames[i].addr)) {
      if (kinds[i] == FRAME_KIND_LUA)
        publish_proto((const LJProto *)(uintptr_t)frames[i].addr);
      else
        publish_cfunc(frames[i].addr);
    }
    *recent_slot(frames[i].addr) = frames[i].addr;
  }
}

void symbols_publish_trace(const char *g, uint32_t traceno) {
  if (!traces || traceno >= MAX_TRACES) return;
  const struct LjLayout *o = lj_build->layout;
  const char *J = lj_jit_state(g);
  const char *trace = (const char *)(uintptr_t)lj_u64(J, lj_build->j_trace);
  const uint32_t sizetrace = lj_u32(J, lj_build->j_sizetrace);
  if (!trace || traceno >= sizetrace || !lj_ref(trace, o->ref * traceno, o)) return;
  const LJTrace *T = (const LJTrace *)(uintptr_t)lj_ref(trace, o->ref * traceno, o);
  if (traces[traceno] == (uint64_t)(uintptr_t)T) return;
  traces[traceno] = (uint64_t)(uintptr_t)T;
  const LJProto *pt = (const LJProto *)(uintptr_t)lj_ref(T, o->T_startpt, o);
  if (!is_seen((uint64_t)(uintptr_t)pt)) publish_proto(pt);
  /* memprof's trace line: the line of the starting instruction itself. */
  const uint32_t *startpc = (const uint32_t *)(uintptr_t)lj_ref(T, o->T_startpc, o);
  prof_guest_trace_symbol(traceno, (uint64_t)(uintptr_t)pt, frame_walk_line(pt, startpc + 1, false, o));
}

/* Names prototype pt from a signal handler: every read checked; false
** when it could not (unreadable, or the agent's table busy). */
static bool publish_proto_from_signal(uint64_t pt) {
  const struct LjLayout *o = lj_build->layout;
  unsigned char copy[LJ_COPY_MAX];
  char name[401];
  if (!lj_safe_read(copy, (const void *)(uintptr_t)pt, o->pt_size)) return false;
  const uint64_t chunk = lj_ref(copy, o->pt_chunkname, o);
  const int32_t firstline = (int32_t)lj_u32(copy, o->pt_firstline);
  const char *data = lj_str_data((const LJStr *)(uintptr_t)chunk, lj_build->str_size);
  size_t len = sizeof name - 1;
  const size_t to_page_end = 4096 - ((uintptr_t)data & 4095);
  if (!chunk || (!lj_safe_read(name, data, len) &&
                 !lj_safe_read(name, data, len = to_page_end < len ? to_page_end : len)))
    return false;
  name[len] = 0;
  return prof_guest_symbol_from_signal(pt, name, (uint64_t)(firstline > 0 ? firstline : 0));
}

static bool from_signals;

void symbols_name_from_signals(bool yes) { from_signals = yes; }

void symbols_note_frames(const struct prof_guest_frame *frames, const uint8_t *kinds, int n) {
  if (!seen || draining) return;
  for (int i = 0; i < n; i++) {
    if (kinds[i] == FRAME_KIND_BUILTIN || is_seen(frames[i].addr)) continue;
    if (from_signals) {
      /* (C functions keep the names the agent's module map gives them.) */
      if (kinds[i] == FRAME_KIND_LUA && publish_proto_from_signal(frames[i].addr))
        add_seen(frames[i].addr);
      continue;
    }
    const int at = npending;
    if (at == PENDING_MAX) return; /* seen again at a later sample */
    pending[at] = frames[i].addr;
    pending_kind[at] = kinds[i];
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    npending = at + 1;
  }
}

void symbols_drain_pending(void) {
  if (!npending) return;
  draining = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  for (int i = 0; i < npending; i++) {
    if (is_seen(pending[i])) continue;
    if (pending_kind[i] == FRAME_KIND_LUA)
      publish_proto((const LJProto *)(uintptr_t)pending[i]);
    else
      publish_cfunc(pending[i]);
  }
  npending = 0;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  draining = 0;
}

bool symbols_block_freed(const void *p, size_t size) {
  const struct LjLayout *o = lj_build->layout;
  if (!seen || size < o->pt_size) return false;
  /* XXX: inferred: a block whose header says prototype and whose size is
  ** the prototype's own. */
  if (lj_gct(p, o) != LJ_GCT_PROTO || lj_u32(p, o->pt_sizept) != size) return false;
  remove_seen((uint64_t)(uintptr_t)p);
  if (*recent_slot((uint64_t)(uintptr_t)p) == (uint64_t)(uintptr_t)p) *recent_slot((uint64_t)(uintptr_t)p) = 0;
  return true;
}

/* Names the functions of the table at the top of the stack, prefix.name. */
static void publish_table(lua_State *L, const char *prefix) {
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TFUNCTION) {
      const LJFunc *fn = lua_topointer(L, -1);
      const uint8_t ffid = lj_u8(fn, lj_build->layout->fn_ffid);
      char name[128];
      snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "." : "", lua_tostring(L, -2));
      if (ffid == LJ_FF_C)
        symbols_name_cfunc(lj_u64(fn, lj_build->layout->fn_f), name);
      else if (ffid > LJ_FF_C) /* a built-in: its frames name it by its id */
        prof_guest_cfunc_symbol(ffid, name);
    }
    lua_pop(L, 1);
  }
}

void symbols_publish_libraries(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
  if (lua_type(L, -1) != LUA_TTABLE) {
    lua_pop(L, 1);
    return;
  }
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE)
      publish_table(L, strcmp(lua_tostring(L, -2), "_G") == 0 ? "" : lua_tostring(L, -2));
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}
