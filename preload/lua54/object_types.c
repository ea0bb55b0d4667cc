#include "object_types.h"

#include "libprof.h"
#include "lua54_layout.h"

#define L54_VLNGSTR (LUA_TSTRING | (1 << 4))
#define L54_TUPVAL LUA_NUMTYPES

/* The PROF_OBJECT_* of a new block's tag (lua_Alloc's osize). */
static unsigned type_of_tag(size_t tag) {
  switch (tag) {
    case 0: return PROF_OBJECT_OTHER;
    case L54_VSHRSTR:
    case L54_VLNGSTR: return PROF_OBJECT_STRING;
    case LUA_TTABLE: return PROF_OBJECT_TABLE;
    case L54_VLCL: return PROF_OBJECT_FUNCTION;
    case L54_VCCL: return PROF_OBJECT_CFUNCTION;
    case LUA_TUSERDATA: return PROF_OBJECT_USERDATA;
    case LUA_TTHREAD: return PROF_OBJECT_THREAD;
    case L54_TPROTO: return PROF_OBJECT_PROTO;
    case L54_TUPVAL: return PROF_OBJECT_UPVALUE;
    default: return PROF_OBJECT_NONE;
  }
}

static void *typing_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  struct ObjectTyper *ot = ud;
  if (nsize == 0) return ot->orig(ot->orig_ud, ptr, osize, nsize);
  prof_guest_object_type(ptr ? PROF_OBJECT_OTHER : type_of_tag(osize));
  void *block = ot->orig(ot->orig_ud, ptr, osize, nsize);
  prof_guest_object_type(PROF_OBJECT_NONE);
  return block;
}

void object_typer_start(struct ObjectTyper *ot, lua_State *L) {
  ot->orig = lua_getallocf(L, &ot->orig_ud);
  lua_setallocf(L, typing_alloc, ot);
}

int object_typer_stop(struct ObjectTyper *ot, lua_State *L) {
  void *ud = NULL;
  if (lua_getallocf(L, &ud) != typing_alloc || ud != ot) return 0;
  lua_setallocf(L, ot->orig, ot->orig_ud);
  return 1;
}
