#include "layout_check.h"

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "check_reason.h"

#include "frame_walk.h"
#include "lj_build.h"
#include "lj_layout.h"
#include "safe_read.h"
#include "vm_capture.h"

/* Functions nested as the walk must see them: probe is called at line 3
** from leaf, which mid calls at line 6, under a plain call, a pcall and a
** coroutine. hot runs a loop the JIT compiles (line 12). */
static const char kNest[] =
    "local probe = ...\n"                                       /* 1 */
    "local function leaf()\n"                                   /* 2 */
    "  local n = probe() return n\n"                            /* 3 */
    "end\n"                                                     /* 4 */
    "local function mid()\n"                                    /* 5 */
    "  local n = leaf() return n\n"                             /* 6 */
    "end\n"                                                     /* 7 */
    "local ok, m = pcall(mid)\n"                                /* 8 */
    "local co = coroutine.wrap(mid)\n"                          /* 9 */
    "local function hot()\n"                                    /* 10 */
    "  local s = 0\n"                                           /* 11 */
    "  for i = 1, 500 do s = s + i end\n"                       /* 12 */
    "  return s\n"                                              /* 13 */
    "end\n"                                                     /* 14 */
    "return mid() + m + co() + (ok and 0 or 1), hot, hot()\n";  /* 15 */
static const char kName[] = "=prof_luajit layout check";
enum { kProbeCalls = 3, kHotLine = 12, kMaxFrames = 32 };

struct Check {
  lua_State *L;
  const char *g;
  int probes;
  char *why;
  size_t why_len;
};
static struct Check *g_check; /* the check the probe reports to */

#define fail(c, ...) check_reason((c)->why, (c)->why_len, __VA_ARGS__)


static bool read_u64(const void *at, uint64_t *v) { return lj_safe_read(v, at, sizeof *v); }

/* The running function's frames against lua_getstack/lua_getinfo. */
static bool compare_walk(struct Check *c, lua_State *L) {
  struct VmCapture cap;
  vm_capture(c->g, (const LJState *)lj_main_thread(c->g), true, kMaxFrames, NULL, NULL, NULL, &cap);
  if (~cap.vmstate != LJ_STATE_C) return fail(c, "vmstate %d in a C function", cap.vmstate);
  if (cap.n < 3) return fail(c, "%d frames under the probe", cap.n);
  if (cap.kinds[0] != FRAME_KIND_C) return fail(c, "the probe is not a C frame");
  lua_Debug ar;
  for (int level = 1; level < cap.n && lua_getstack(L, level, &ar); level++) {
    if (!lua_getinfo(L, "Slf", &ar)) return fail(c, "lua_getinfo failed");
    const LJFunc *fn = lua_topointer(L, -1);
    lua_pop(L, 1);
    const struct prof_guest_frame *f = &cap.frames[level];
    if (ar.what[0] == 'L' || ar.what[0] == 'm') {
      if (cap.kinds[level] != FRAME_KIND_LUA ||
          f->addr != (uint64_t)(uintptr_t)lj_func_proto(fn, lj_build->layout) ||
          f->line != (uint64_t)ar.currentline)
        return fail(c, "frame %d reads %d:%lu, the VM says line %d", level, cap.kinds[level],
                       (unsigned long)f->line, ar.currentline);
    } else if (cap.kinds[level] == FRAME_KIND_LUA) {
      return fail(c, "frame %d is Lua, the VM says %s", level, ar.what);
    }
    if (level == 1 && f->line != 3) return fail(c, "the probe's caller at line %lu", (unsigned long)f->line);
  }
  return true;
}

static int probe(lua_State *L) {
  struct Check *c = g_check;
  uint64_t cur = 0;
  if (!lj_safe_read(&cur, c->g + lj_build->g_cur_L, lj_build->layout->ref) || cur != (uintptr_t)L)
    fail(c, "cur_L is not the running thread");
  else if (compare_walk(c, L))
    c->probes++;
  lua_pushinteger(L, 1);
  return 1;
}

/* With the JIT on, hot's loop became a trace: find it by its start. */
static bool check_trace(struct Check *c, lua_State *L, int hot) {
  lua_getglobal(L, "jit");
  lua_getfield(L, -1, "status");
  const bool on = lua_isfunction(L, -1) && lua_pcall(L, 0, 1, 0) == 0 && lua_toboolean(L, -1);
  lua_pop(L, 2);
  if (!on) return true;
  const struct LjLayout *o = lj_build->layout;
  const LJProto *pt = lj_func_proto(lua_topointer(L, hot), o);
  const char *J = lj_jit_state(c->g);
  uint64_t trace = 0;
  uint32_t sizetrace = 0;
  if (!read_u64(J + lj_build->j_trace, &trace) ||
      !lj_safe_read(&sizetrace, J + lj_build->j_sizetrace, 4) || !trace || sizetrace == 0 ||
      sizetrace > (1u << 16))
    return fail(c, "the trace array");
  for (uint32_t n = 1; n < sizetrace; n++) {
    uint64_t at = 0;
    char T[LJ_COPY_MAX];
    if (!lj_safe_read(&at, (const char *)(uintptr_t)trace + o->ref * n, o->ref))
      return fail(c, "the trace array");
    if (!at || !lj_safe_read(T, (const void *)(uintptr_t)at, o->T_size)) continue;
    if (lj_gct(T, o) != LJ_GCT_TRACE || lj_u16(T, o->T_traceno) != n) return fail(c, "trace %u", n);
    const uint32_t *startpc = (const uint32_t *)(uintptr_t)lj_ref(T, o->T_startpc, o);
    if (lj_ref(T, o->T_startpt, o) == (uint64_t)(uintptr_t)pt &&
        frame_walk_line(pt, startpc + 1, true, o) == kHotLine)
      return true;
  }
  /* XXX: the JIT may refuse the loop (jit.opt settings, a full trace
  ** cache): no trace, nothing to compare. */
  return true;
}

/* The state's own fields: its allocator, its main thread, the collector's
** total, as the Lua API gives them; true with c->g set. */
static bool check_fields(struct Check *c, lua_State *L) {
  const struct LjLayout *o = lj_build->layout;
  char st[LJ_COPY_MAX];
  if (!lj_safe_read(st, L, o->L_size)) return fail(c, "lua_State unreadable");
  c->g = (const char *)(uintptr_t)lj_ref(st, o->L_glref, o);
  uint64_t allocf = 0, allocd = 0, mainth = 0, total = 0;
  void *ud = NULL;
  const lua_Alloc f = lua_getallocf(L, &ud);
  if (!read_u64(c->g + lj_build->g_allocf, &allocf) ||
      !read_u64(c->g + lj_build->g_allocd, &allocd) || allocf != (uintptr_t)f ||
      allocd != (uintptr_t)ud)
    return fail(c, "global_State's allocator");
  if (!lj_safe_read(&mainth, c->g + lj_build->g_mainthref, o->ref) ||
      mainth != (uintptr_t)lj_main_thread(c->g))
    return fail(c, "the main thread's place");
  const int kb = lua_gc(L, LUA_GCCOUNT, 0), b = lua_gc(L, LUA_GCCOUNTB, 0);
  if (!lj_safe_read(&total, c->g + lj_build->g_gc_total, o->ref) ||
      total != (uint64_t)kb * 1024 + (uint64_t)b)
    return fail(c, "the collector's total");
  const uint64_t *base = (const uint64_t *)(uintptr_t)lj_u64(st, o->L_base);
  const uint64_t *top = (const uint64_t *)(uintptr_t)lj_u64(st, o->L_top);
  const uint64_t *stack = (const uint64_t *)(uintptr_t)lj_ref(st, o->L_stack, o);
  if (top - base != lua_gettop(L) || base <= stack || base >= stack + lj_u32(st, o->L_stacksize))
    return fail(c, "the stack");
  return true;
}

/* The VM's code from its dispatch table, and the running C function. */
static bool check_running(struct Check *c, lua_State *L, lua_CFunction self) {
  const struct LjLayout *o = lj_build->layout;
  const uint64_t *base = NULL;
  uint64_t fnv = 0;
  char fn[LJ_COPY_MAX];
  uint64_t dispatch[LJ_GG_DISPATCH_LEN];
  if (!lj_safe_read(dispatch, lj_dispatch(c->g), sizeof dispatch))
    return fail(c, "the dispatch table");
  struct VmCode code;
  vm_code_find(c->g, &code);
  /* The interpreter's handlers and fast functions: one block of some 16 KiB. */
  if (code.lo == 0 || code.hi - code.lo > (1u << 18)) return fail(c, "the dispatch table");
  /* (A C function's frame: its link is a size, its function slot tagged
  ** under GC64, its reference the slot's low half otherwise.) */
  if (!read_u64((const char *)L + o->L_base, (uint64_t *)&base) ||
      !read_u64(base - 1 - o->fr2, &fnv) || (o->fn_tagged && lj_tag(fnv, o) != ~LJ_GCT_FUNC) ||
      !lj_safe_read(fn, (const void *)(uintptr_t)lj_gcref(fnv, o), o->fn_size) ||
      lj_gct(fn, o) != LJ_GCT_FUNC || lj_u8(fn, o->fn_ffid) != LJ_FF_C ||
      lj_u64(fn, o->fn_f) != (uintptr_t)self)
    return fail(c, "the running function's slot");
  return true;
}

/* The chunk's nested prototypes: hot's among its GC constants. */
static bool check_nested(struct Check *c, const LJProto *chunk, const LJProto *hot) {
  const struct LjLayout *o = lj_build->layout;
  char pt[LJ_COPY_MAX];
  if (!lj_safe_read(pt, chunk, o->pt_size)) return fail(c, "GCproto");
  const uint64_t k = lj_ref(pt, o->pt_k, o);
  const uint32_t n = lj_u32(pt, o->pt_sizekgc);
  for (uint32_t i = 1; i <= n && i < 64; i++) {
    uint64_t child = 0;
    if (!lj_safe_read(&child, lj_proto_kgc_at(k, i, o), o->ref)) break;
    if (child == (uintptr_t)hot) return true;
  }
  return fail(c, "GCproto's constants");
}

/* The prototypes, the frame walk and the traces, on the check chunk. */
static bool check_walk(struct Check *c, lua_State *L) {
  const int top = lua_gettop(L);
  if (luaL_loadbuffer(L, kNest, sizeof kNest - 1, kName) != 0) {
    lua_settop(L, top);
    return fail(c, "the check chunk does not load");
  }
  const struct LjLayout *o = lj_build->layout;
  const LJProto *chunk = lj_func_proto(lua_topointer(L, -1), o);
  char pt[LJ_COPY_MAX], name[LJ_COPY_MAX];
  if (!lj_safe_read(pt, chunk, o->pt_size) || lj_gct(pt, o) != LJ_GCT_PROTO ||
      !lj_safe_read(name, (const void *)(uintptr_t)lj_ref(pt, o->pt_chunkname, o),
                    lj_build->str_size + sizeof kName) ||
      lj_gct(name, o) != LJ_GCT_STR || lj_u32(name, lj_build->str_len) != sizeof kName - 1 ||
      memcmp(name + lj_build->str_size, kName, sizeof kName) != 0) {
    lua_settop(L, top);
    return fail(c, "GCproto");
  }
  c->probes = 0;
  g_check = c;
  lua_pushvalue(L, -1); /* the chunk stays, its prototype with it */
  lua_pushcfunction(L, probe);
  const int status = lua_pcall(L, 1, 2, 0);
  g_check = NULL;
  if (status != 0) {
    fail(c, "the check chunk failed: %s", lua_tostring(L, -1));
  } else if (c->probes != kProbeCalls && !c->why[0]) {
    fail(c, "%d of %d probes agreed", c->probes, kProbeCalls);
  } else if (!c->why[0] &&
             check_nested(c, chunk, lj_func_proto(lua_topointer(L, top + 3), o))) {
    check_trace(c, L, top + 3);
  }
  lua_settop(L, top);
  return c->why[0] == 0;
}

/* Whether L's global_State's allocator lies where build b puts it. */
static bool allocator_found(lua_State *L, const struct LjBuild *b) {
  void *ud = NULL;
  const uint64_t f = (uintptr_t)lua_getallocf(L, &ud);
  uint64_t g = 0, allocf = 0;
  return lj_safe_read(&g, (const char *)L + b->layout->L_glref, b->layout->ref) &&
         read_u64((const char *)(uintptr_t)g + b->g_allocf, &allocf) && allocf == f;
}

/* The row of the build L's VM looks like, for a refusal: one whose
** allocator is found, its program's own symbol first; -1 if none. */
static int build_seen(lua_State *L) {
  for (int i = 0; i < LJ_NBUILDS; i++)
    if (lj_builds[i].marker && dlsym(RTLD_DEFAULT, lj_builds[i].marker) &&
        allocator_found(L, &lj_builds[i]))
      return i;
  for (int i = 0; i < LJ_NBUILDS; i++)
    if (!lj_builds[i].marker && allocator_found(L, &lj_builds[i])) return i;
  return -1;
}

bool layout_check(lua_State *L, lua_CFunction self, char *why, size_t why_len) {
  why[0] = 0;
  if (!lj_safe_read_available()) {
    snprintf(why, why_len, "cannot read memory safely (process_vm_readv is refused)");
    return false;
  }
  char reasons[LJ_NBUILDS][160];
  for (int i = 0; i < LJ_NBUILDS; i++) {
    struct Check c = {.L = L, .why = why, .why_len = why_len};
    why[0] = 0;
    lj_build = &lj_builds[i];
    if (check_fields(&c, L) && check_running(&c, L, self) && check_walk(&c, L)) return true;
    snprintf(reasons[i], sizeof reasons[i], "%s", why);
  }
  lj_build = NULL;
  /* The reason to give: the row of the build it looks like, else the first's. */
  const int seen = build_seen(L);
  snprintf(why, why_len, "internals differ from %s: %s",
           seen >= 0 ? lj_builds[seen].name : "an unknown LuaJIT build",
           reasons[seen >= 0 ? seen : 0]);
  return false;
}

bool layout_check_state(lua_State *L, char *why, size_t why_len) {
  why[0] = 0;
  struct Check c = {.L = L, .why = why, .why_len = why_len};
  return check_fields(&c, L);
}
