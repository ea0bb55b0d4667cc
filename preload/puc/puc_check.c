#include "puc_check.h"

#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "check_reason.h"

#include "check_nest.h"
#include "collector_check.h"
#include "puc_layout.h"
#include "puc_walk.h"

#define LAY puc_layout

enum { kMaxFrames = 96 };

struct Check {
  bool all_safe;
  lua_Alloc orig;
  void *orig_ud;
  const void *g;
  int protos_seen;        /* prototypes allocated as the wrapper sees them */
  bool proto_size_differs;
  const void *candidate;  /* 5.1: as puc_alloc.c */
  int probes, tails_seen;
  struct CollectorWatch collector; /* where the release tells when it collects */
  char *why;
  size_t why_len;
};

#define fail(c, ...) check_reason((c)->why, (c)->why_len, __VA_ARGS__)

/* A mismatch between the layout table and this VM. */
#define differs(c, fmt, ...) \
  fail((c), "internals differ from %s: " fmt, LAY.release, ##__VA_ARGS__)

static bool read_mirror(const struct Check *c, void *dst, const void *src, size_t n) {
  if (!c->all_safe) {
    memcpy(dst, src, n);
    return true;
  }
  return safe_read(dst, src, n);
}

static void *checking_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  struct Check *c = ud;
  if (c->candidate) {
    const void *head = NULL;
    unsigned char tt = 0;
    if (read_mirror(c, &head, (const char *)c->g + LAY.global_allgc, sizeof head) &&
        head == c->candidate && read_mirror(c, &tt, (const char *)head + LAY.gc_tt, 1) &&
        tt == LAY.proto_tag)
      c->protos_seen++;
    c->candidate = NULL;
  }
  if (ptr && nsize == 0 && LAY.global_gcstopem != PUC_NONE) collector_watch_free(&c->collector);
  void *block = c->orig(c->orig_ud, ptr, osize, nsize);
  if (!ptr && block) {
    if (LAY.alloc_tagged && osize == LAY.proto_tag) {
      c->protos_seen++;
      if (nsize != LAY.proto_size) c->proto_size_differs = true;
    } else if (!LAY.alloc_tagged && nsize == LAY.proto_size) {
      c->candidate = block;
    }
  }
  return block;
}

/* Whether p is the prototype lua_getinfo described in ar (ctx: the Check). */
static bool proto_matches(const void *ctx, const void *p, const lua_Debug *ar) {
  const struct Check *c = ctx;
  unsigned char proto[256];
  char text[160];
  if (LAY.proto_size > sizeof proto || !read_mirror(c, proto, p, LAY.proto_size) ||
      proto[LAY.gc_tt] != LAY.proto_tag || puc_int(proto, LAY.proto_linedefined) != ar->linedefined)
    return false;
  const char *source = puc_ptr(proto, LAY.proto_source);
  const size_t len = strlen(ar->source) + 1;
  const size_t n = len < sizeof text ? len : sizeof text;
  return source && read_mirror(c, text, source + LAY.string_bytes, n) &&
         memcmp(text, ar->source, n) == 0;
}

/* Compares the walk of L with lua_getstack/lua_getinfo, level by level. */
static bool compare_walk(struct Check *c, lua_State *L) {
  struct prof_guest_frame frames[kMaxFrames];
  const void *closures[kMaxFrames];
  bool tails[kMaxFrames];
  struct PucWalk w = {.all_safe = c->all_safe, .clean_point = true, .frames = frames,
                      .max = kMaxFrames, .steps_left = kMaxFrames + 64,
                      .closures = closures, .tails = tails};
  puc_walk_state(&w, L, true);
  const struct NestWalk seen = {frames, closures, tails, w.n};
  if (!check_nest_compare(L, &seen, proto_matches, c, LAY.release, &c->tails_seen, c->why,
                          c->why_len))
    return false;
  if (c->all_safe) { /* proven readable: the direct reads must agree */
    struct prof_guest_frame direct[kMaxFrames];
    struct PucWalk d = {.clean_point = true, .frames = direct, .max = kMaxFrames,
                        .steps_left = kMaxFrames + 64};
    puc_walk_state(&d, L, true);
    for (int i = 0; i < w.n; i++)
      if (d.n != w.n || direct[i].type != frames[i].type || direct[i].addr != frames[i].addr ||
          direct[i].line != frames[i].line)
        return differs(c, "direct and checked reads at level %d", i);
  }
  return true;
}

static int probe(lua_State *L) {
  struct Check *c = lua_touserdata(L, lua_upvalueindex(1));
  c->probes++;
  compare_walk(c, L);
  lua_pushinteger(L, 1);
  return 1;
}

/* Runs the nest (check_nest.h); false (reason set) if it could not run or
** the walks differ. */
static bool run_nest(struct Check *c, lua_State *L) {
  c->protos_seen = 0;
  if (!check_nest_load(L, c->why, c->why_len)) return false;
  if (c->protos_seen != CHECK_NEST_PROTOS || c->proto_size_differs)
    return differs(c, "prototypes (%d of %d seen at %u bytes)", c->protos_seen, CHECK_NEST_PROTOS,
                   (unsigned)LAY.proto_size);
  bool result;
  if (!check_nest_call(L, probe, c, &result, c->why, c->why_len) || c->why[0]) return false;
  if (!result) return differs(c, "the check's coroutine or pcall failed");
  if (c->probes != CHECK_NEST_PROBES || c->tails_seen < CHECK_NEST_PROBES)
    return differs(c, "the check saw %d walks and %d tail calls", c->probes, c->tails_seen);
  return true;
}

/* The global state: allocator, newest object. */
static bool check_global(struct Check *c, lua_State *L) {
  unsigned char g[128];
  const uint16_t size = LAY.global_allgc + sizeof(void *);
  if (size > sizeof g) return differs(c, "global state");
  void *ud = NULL;
  const lua_Alloc f = lua_getallocf(L, &ud);
  lua_Alloc frealloc;
  if (!read_mirror(c, g, c->g, size)) return differs(c, "global state");
  memcpy(&frealloc, g + LAY.global_frealloc, sizeof frealloc);
  if (frealloc != f || puc_ptr(g, LAY.global_ud) != ud) return differs(c, "allocator fields");
  lua_newtable(L);
  const void *newest = lua_topointer(L, -1);
  const bool newest_first = read_mirror(c, g, c->g, size) && puc_ptr(g, LAY.global_allgc) == newest;
  lua_pop(L, 1);
  return newest_first || differs(c, "object list");
}

static int walked_mark(lua_State *L) {
  lua_pushboolean(L, (puc_status(puc_ptr(L, LAY.state_ci)) & LAY.cist_walked) != 0);
  return 1;
}

/* The remembered walk's mark (puc_walk.h) on the CallInfo the next call
** from here reuses: the push must clear it. */
static bool mark_check(struct Check *c, lua_State *L) {
  char *here = (char *)puc_ptr(L, LAY.state_ci);
  lua_pushcfunction(L, walked_mark);
  lua_call(L, 0, 1); /* here's next CallInfo exists from now on */
  const bool fresh = !lua_toboolean(L, -1);
  lua_pop(L, 1);
  char *next = (char *)puc_ptr(here, LAY.ci_next);
  if (!fresh || !next) return differs(c, "the status bit %#x is in use", LAY.cist_walked);
  puc_set_status(next, puc_status(next) | LAY.cist_walked);
  lua_pushcfunction(L, walked_mark);
  lua_call(L, 0, 1);
  const bool cleared = !lua_toboolean(L, -1);
  lua_pop(L, 1);
  return cleared || differs(c, "a call keeps the status bit %#x", LAY.cist_walked);
}

/* The checks, as a C function run under lua_pcall: argument 1 is the Check. */
static int run_checks(lua_State *L) {
  struct Check *c = lua_touserdata(L, 1);
  const int top = lua_gettop(L);
  bool ok = run_nest(c, L);
  lua_settop(L, top);
  ok = ok && (!LAY.cist_walked || mark_check(c, L)) && check_global(c, L);
#if LUA_VERSION_NUM >= 504
  ok = ok && (LAY.global_gcstopem == PUC_NONE ||
              collector_check(&c->collector, L, c->why, c->why_len));
#endif
  lua_pushboolean(L, ok);
  return 1;
}

bool puc_check(lua_State *L, char *why, size_t why_len) {
  const int top = lua_gettop(L);
  why[0] = 0;
  struct Check c = {.all_safe = safe_read_available(), .why = why, .why_len = why_len};
  unsigned char st[512];
#if LUA_VERSION_NUM >= 502
  /* XXX: a state of another library's copy of the same release has its own
  ** version number: the check must run on the library the adapter binds to. */
  if (lua_version(L) != lua_version(NULL)) return fail(&c, "not a state of this %s", LAY.release);
#endif
  if (LAY.state_size > sizeof st || !read_mirror(&c, st, L, LAY.state_size))
    return differs(&c, "lua_State");
  c.g = puc_ptr(st, LAY.state_l_G);
  c.collector.g = c.g;
  c.orig = lua_getallocf(L, &c.orig_ud);
  /* XXX: in protected mode, so that an error (out of memory) cannot leave
  ** the checking allocator installed with c gone. */
  lua_setallocf(L, checking_alloc, &c);
  lua_pushcfunction(L, run_checks);
  lua_pushlightuserdata(L, &c);
  const int status = lua_pcall(L, 1, 1, 0);
  const bool ok = status == LUA_OK && lua_toboolean(L, -1);
  if (status != LUA_OK) fail(&c, "the check raised: %s", lua_tostring(L, -1));
  lua_setallocf(L, c.orig, c.orig_ud);
  lua_settop(L, top);
  return ok;
}
