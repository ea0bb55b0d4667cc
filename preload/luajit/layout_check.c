#include "layout_check.h"

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

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
enum { kProbeCalls = 3, kHotLine = 12, kMaxFrames = 32 };

struct Check {
  lua_State *L;
  const char *g;
  int probes;
  char *why;
  size_t why_len;
};
static struct Check *g_check; /* the check the probe reports to */

static bool fail(struct Check *c, const char *fmt, ...) {
  if (c->why[0]) return false; /* keep the first reason */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->why, c->why_len, fmt, ap);
  va_end(ap);
  return false;
}


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
          f->addr != (uint64_t)(uintptr_t)lj_func_proto(fn) || f->line != (uint64_t)ar.currentline)
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
  if (!read_u64(c->g + LJ_G_CUR_L, &cur) || cur != (uintptr_t)L)
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
  const LJProto *pt = lj_func_proto(lua_topointer(L, hot));
  const char *J = lj_jit_state(c->g);
  uint64_t trace = 0;
  uint32_t sizetrace = 0;
  if (!read_u64(J + LJ_J_TRACE, &trace) || !lj_safe_read(&sizetrace, J + LJ_J_SIZETRACE, 4) ||
      !trace || sizetrace == 0 || sizetrace > (1u << 16))
    return fail(c, "the trace array");
  for (uint32_t n = 1; n < sizetrace; n++) {
    uint64_t at = 0;
    LJTrace T;
    if (!read_u64((const char *)(uintptr_t)trace + 8 * n, &at)) return fail(c, "the trace array");
    if (!at || !lj_safe_read(&T, (const void *)(uintptr_t)at, sizeof T)) continue;
    if (T.gct != LJ_GCT_TRACE || T.traceno != n) return fail(c, "trace %u", n);
    if (T.startpt == (uint64_t)(uintptr_t)pt &&
        frame_walk_line(pt, T.startpc + 1, true) == kHotLine)
      return true;
  }
  /* XXX: the JIT may refuse the loop (jit.opt settings, a full trace
  ** cache): no trace, nothing to compare. */
  return true;
}

/* The state's own fields: its allocator, its main thread, the collector's
** total, as the Lua API gives them; true with c->g set. */
static bool check_fields(struct Check *c, lua_State *L) {
  LJState st;
  if (!lj_safe_read(&st, L, sizeof st)) return fail(c, "lua_State unreadable");
  c->g = (const char *)(uintptr_t)st.glref;
  uint64_t allocf = 0, allocd = 0, mainth = 0, total = 0;
  void *ud = NULL;
  const lua_Alloc f = lua_getallocf(L, &ud);
  if (!read_u64(c->g + LJ_G_ALLOCF, &allocf) || !read_u64(c->g + LJ_G_ALLOCD, &allocd) ||
      allocf != (uintptr_t)f || allocd != (uintptr_t)ud)
    return fail(c, "global_State's allocator");
  if (!read_u64(c->g + LJ_G_MAINTHREF, &mainth) || mainth != (uintptr_t)lj_main_thread(c->g))
    return fail(c, "the main thread's place");
  const int kb = lua_gc(L, LUA_GCCOUNT, 0), b = lua_gc(L, LUA_GCCOUNTB, 0);
  if (!read_u64(c->g + LJ_G_GC_TOTAL, &total) || total != (uint64_t)kb * 1024 + (uint64_t)b)
    return fail(c, "the collector's total");
  if (st.top - st.base != lua_gettop(L) || st.base <= st.stack ||
      st.base >= st.stack + st.stacksize)
    return fail(c, "the stack");
  return true;
}

/* The VM's code from its dispatch table, and the running C function. */
static bool check_running(struct Check *c, lua_State *L, lua_CFunction self) {
  const LJState *st = (const LJState *)L;
  uint64_t fnv = 0;
  LJFunc fn;
  uint64_t dispatch[LJ_GG_DISPATCH_LEN];
  if (!lj_safe_read(dispatch, lj_dispatch(c->g), sizeof dispatch))
    return fail(c, "the dispatch table");
  struct VmCode code;
  vm_code_find(c->g, &code);
  /* The interpreter's handlers and fast functions: one block of some 16 KiB. */
  if (code.lo == 0 || code.hi - code.lo > (1u << 18)) return fail(c, "the dispatch table");
  if (!read_u64(st->base - 2, &fnv) || lj_tag(fnv) != ~LJ_GCT_FUNC ||
      !lj_safe_read(&fn, (const void *)(uintptr_t)lj_gcref(fnv), sizeof fn) ||
      fn.ffid != LJ_FF_C || fn.f != (void *)self)
    return fail(c, "the running function's slot");
  return true;
}

/* The prototypes, the frame walk and the traces, on the check chunk. */
static bool check_walk(struct Check *c, lua_State *L) {
  const int top = lua_gettop(L);
  if (luaL_loadbuffer(L, kNest, sizeof kNest - 1, "=prof_luajit layout check") != 0) {
    lua_settop(L, top);
    return fail(c, "the check chunk does not load");
  }
  const LJProto *chunk = lj_func_proto(lua_topointer(L, -1));
  LJProto pt;
  LJStr name;
  if (!lj_safe_read(&pt, chunk, sizeof pt) || pt.gct != LJ_GCT_PROTO ||
      !lj_safe_read(&name, (const void *)(uintptr_t)pt.chunkname, sizeof name) ||
      name.len != strlen("=prof_luajit layout check")) {
    lua_settop(L, top);
    return fail(c, "GCproto");
  }
  c->probes = 0;
  g_check = c;
  lua_pushcfunction(L, probe);
  const int status = lua_pcall(L, 1, 2, 0);
  g_check = NULL;
  if (status != 0) {
    fail(c, "the check chunk failed: %s", lua_tostring(L, -1));
  } else if (c->probes != kProbeCalls && !c->why[0]) {
    fail(c, "%d of %d probes agreed", c->probes, kProbeCalls);
  } else if (!c->why[0]) {
    check_trace(c, L, top + 2);
  }
  lua_settop(L, top);
  return c->why[0] == 0;
}

/* The build L's VM looks like, for a refusal: GC64 or not (where
** global_State's allocator is found), OpenResty's by its own API. */
static const char *build_seen(lua_State *L) {
  void *ud = NULL;
  const uint64_t f = (uintptr_t)lua_getallocf(L, &ud);
  uint64_t g64 = 0, allocf = 0;
  uint32_t g32 = 0;
  if (lj_safe_read(&g64, (const char *)L + 16, 8) && read_u64((const void *)(uintptr_t)g64, &allocf) &&
      allocf == f)
    return dlsym(RTLD_DEFAULT, "lua_setexdata") ? "OpenResty LuaJIT 2.1 (GC64)" : "LuaJIT 2.1 (GC64)";
  if (lj_safe_read(&g32, (const char *)L + 8, 4) && read_u64((const void *)(uintptr_t)g32, &allocf) &&
      allocf == f)
    return "LuaJIT 2.1 without GC64 (32-bit references, as Tarantool's)";
  return "an unknown LuaJIT build";
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
  const char *seen = build_seen(L);
  int row = 0;
  for (int i = 0; i < LJ_NBUILDS; i++)
    if (strcmp(lj_builds[i].name, seen) == 0) row = i;
  snprintf(why, why_len, "internals differ from %s: %s", seen, reasons[row]);
  return false;
}

bool layout_check_state(lua_State *L, char *why, size_t why_len) {
  why[0] = 0;
  struct Check c = {.L = L, .why = why, .why_len = why_len};
  return check_fields(&c, L);
}
