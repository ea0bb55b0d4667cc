#include "layout_check.h"

#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "check_reason.h"

#include "call_walk.h"
#include "check_nest.h"
#include "lua54_layout.h"

enum { kMaxFrames = 96 };

struct Check {
  bool all_safe;
  lua_Alloc orig;
  void *orig_ud;
  const L54Global *g;
  size_t proto_size;     /* as the VM allocates it; 0 before the first */
  bool proto_size_varies;
  bool observing_gc;
  int frees_in_step;     /* frees seen while the collector runs */
  int odd_flag;          /* impossible values of the collector's fields */
  int probes, tails_seen;
  char *why;
  size_t why_len;
};

#define fail(c, ...) check_reason((c)->why, (c)->why_len, __VA_ARGS__)

/* A mismatch between the mirrored layouts and this interpreter. */
#define differs(c, ...) fail((c), "internals differ from Lua 5.4.4: " __VA_ARGS__)

static bool read_mirror(const struct Check *c, void *dst, const void *src, size_t n) {
  if (!c->all_safe) {
    memcpy(dst, src, n);
    return true;
  }
  return safe_read(dst, src, n);
}

static void *checking_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  struct Check *c = ud;
  if (!ptr && osize == L54_TPROTO) {
    if (c->proto_size && c->proto_size != nsize) c->proto_size_varies = true;
    c->proto_size = nsize;
  }
  if (c->observing_gc && ptr && nsize == 0) {
    if (c->g->gcstopem > 1 || c->g->gckind > L54_KGC_GEN) c->odd_flag++;
    c->frees_in_step += l54_collecting(c->g);
  }
  return c->orig(c->orig_ud, ptr, osize, nsize);
}

/* Whether p is the prototype lua_getinfo described in ar (ctx: the Check). */
static bool proto_matches(const void *ctx, const void *p, const lua_Debug *ar) {
  const struct Check *c = ctx;
  L54Proto proto;
  L54TString head;
  char text[160];
  if (!read_mirror(c, &proto, p, sizeof proto) || proto.tt != L54_VPROTO ||
      proto.linedefined != ar->linedefined || !proto.source ||
      !read_mirror(c, &head, proto.source, offsetof(L54TString, contents)))
    return false;
  const size_t len = head.tt == L54_VSHRSTR ? head.shrlen : head.u.lnglen;
  const size_t n = len < sizeof text ? len : sizeof text;
  return len == ar->srclen && read_mirror(c, text, proto.source->contents, n) &&
         memcmp(text, ar->source, n) == 0;
}

/* Compares the walk of L with lua_getstack/lua_getinfo, level by level. */
static bool compare_walk(struct Check *c, lua_State *L) {
  struct prof_guest_frame frames[kMaxFrames], direct[kMaxFrames];
  const void *closures[kMaxFrames];
  bool tails[kMaxFrames];
  struct CallWalk w = {.all_safe = c->all_safe, .clean_point = true, .frames = frames,
                       .max = kMaxFrames, .steps_left = kMaxFrames + 64,
                       .closures = closures, .tails = tails};
  call_walk_state(&w, l54_state(L), true);
  const struct NestWalk seen = {frames, closures, tails, w.n};
  if (!check_nest_compare(L, &seen, proto_matches, c, "Lua 5.4.4", &c->tails_seen, c->why,
                          c->why_len))
    return false;
  if (c->all_safe) { /* proven readable: the direct reads must agree */
    struct CallWalk d = {.clean_point = true, .frames = direct, .max = kMaxFrames,
                         .steps_left = kMaxFrames + 64};
    call_walk_state(&d, l54_state(L), true);
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
  bool result;
  if (!check_nest_load(L, c->why, c->why_len) ||
      !check_nest_call(L, probe, c, &result, c->why, c->why_len) || c->why[0])
    return false;
  if (!result) return differs(c, "the check's coroutine or pcall failed");
  if (c->probes != CHECK_NEST_PROBES || c->tails_seen < CHECK_NEST_PROBES)
    return differs(c, "the check saw %d walks and %d tail calls", c->probes, c->tails_seen);
  return true;
}

/* Runs one collection step by step over fresh garbage and checks that the
** frees inside it, and only they, see the collector running. */
static bool collector_check(struct Check *c, lua_State *L, int kind) {
  if (c->g->gckind != kind) return differs(c, "collector mode field");
  /* XXX: the garbage is made between two cycles, with the collector held,
  ** so that all of it dies inside the steps below (a full collection frees
  ** some outside any step, see l54_collecting). */
  const int running = lua_gc(L, LUA_GCISRUNNING);
  lua_gc(L, LUA_GCCOLLECT);
  lua_gc(L, LUA_GCSTOP);
  for (int i = 0; i < 64; i++) {
    lua_createtable(L, 1, 0);
    lua_pop(L, 1);
  }
  lua_gc(L, LUA_GCRESTART);
  const bool idle = !l54_collecting(c->g);
  c->frees_in_step = 0;
  c->observing_gc = true;
  /* A generational step (a young collection) never ends a cycle: it ends
  ** once the garbage is gone. */
  for (int step = 0; step < 100000 && !(kind == L54_KGC_GEN && c->frees_in_step >= 64) &&
                     !lua_gc(L, LUA_GCSTEP, 0);
       step++) {
  }
  c->observing_gc = false;
  if (!running) lua_gc(L, LUA_GCSTOP);
  if (!idle || c->frees_in_step < 64 || c->odd_flag || l54_collecting(c->g))
    return differs(c, "collector state (%s mode)",
                kind == L54_KGC_GEN ? "generational" : "incremental");
  return true;
}

/* The global state: allocator, newest object, collector state. */
static bool check_global(struct Check *c, lua_State *L) {
  L54Global g;
  void *ud = NULL;
  const lua_Alloc f = lua_getallocf(L, &ud);
  if (!read_mirror(c, &g, c->g, sizeof g) || g.frealloc != f || g.ud != ud)
    return differs(c, "allocator fields");
  lua_newtable(L);
  const void *newest = lua_topointer(L, -1);
  const bool newest_first = read_mirror(c, &g, c->g, sizeof g) && g.allgc == newest;
  lua_pop(L, 1);
  if (!newest_first) return differs(c, "object list");
  if (l54_collecting(&g)) return differs(c, "collector seen running outside it");
  /* lua_gc's mode switches return the previous mode: they prove gckind. */
  const int mode = lua_gc(L, LUA_GCINC, 0, 0, 0);
  if (mode != LUA_GCINC && mode != LUA_GCGEN)
    return fail(c, "cannot run the collector here (inside a finalizer?)");
  const bool inc_ok = collector_check(c, L, L54_KGC_INC);
  lua_gc(L, LUA_GCGEN, 0, 0);
  const bool gen_ok = inc_ok && collector_check(c, L, L54_KGC_GEN);
  if (mode == LUA_GCINC) lua_gc(L, LUA_GCINC, 0, 0, 0);
  return gen_ok;
}

static int walked_mark(lua_State *L) {
  lua_pushboolean(L, (l54_state(L)->ci->callstatus & L54_CIST_WALKED) != 0);
  return 1;
}

/* The remembered walk's mark (call_walk.h) on the CallInfo the next call
** from here reuses: the push must clear it. */
static bool mark_check(struct Check *c, lua_State *L) {
  L54CallInfo *here = (L54CallInfo *)l54_state(L)->ci;
  lua_pushcfunction(L, walked_mark);
  lua_call(L, 0, 1); /* here->next exists from now on */
  const bool fresh = !lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (!fresh || !here->next) return differs(c, "callstatus bit 15 is in use");
  here->next->callstatus |= L54_CIST_WALKED;
  lua_pushcfunction(L, walked_mark);
  lua_call(L, 0, 1);
  const bool cleared = !lua_toboolean(L, -1);
  lua_pop(L, 1);
  return cleared || differs(c, "a call keeps callstatus bit 15");
}

/* The checks, as a C function run under lua_pcall: argument 1 is the Check. */
static int run_checks(lua_State *L) {
  struct Check *c = lua_touserdata(L, 1);
  const int top = lua_gettop(L);
  bool ok = run_nest(c, L);
  lua_settop(L, top);
  ok = ok && mark_check(c, L) && check_global(c, L);
  lua_pushboolean(L, ok);
  return 1;
}

bool layout_check(lua_State *L, size_t *proto_size, char *why, size_t why_len) {
  const int top = lua_gettop(L);
  why[0] = 0;
  struct Check c = {.all_safe = safe_read_available(), .why = why, .why_len = why_len};
  L54State st;
  if (lua_version(L) != LUA_VERSION_NUM || !read_mirror(&c, &st, l54_state(L), sizeof st))
    return fail(&c, "not a Lua %s state", LUA_VERSION);
  c.g = st.l_G;
  c.orig = lua_getallocf(L, &c.orig_ud);
  /* XXX: in protected mode, so that an error (out of memory) cannot leave
  ** the checking allocator installed with c gone. */
  lua_setallocf(L, checking_alloc, &c);
  lua_pushcfunction(L, run_checks);
  lua_pushlightuserdata(L, &c);
  const int status = lua_pcall(L, 1, 1, 0);
  bool ok = status == LUA_OK && lua_toboolean(L, -1);
  if (status != LUA_OK) fail(&c, "the check raised: %s", lua_tostring(L, -1));
  lua_setallocf(L, c.orig, c.orig_ud);
  lua_settop(L, top);
  if (ok && (c.proto_size != sizeof(L54Proto) || c.proto_size_varies))
    return differs(&c, "prototypes are %zu bytes, not %zu", c.proto_size, sizeof(L54Proto));
  *proto_size = c.proto_size;
  return ok;
}
