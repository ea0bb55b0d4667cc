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

unsigned object_type_of(const void *ptr, size_t osize) {
  return ptr ? PROF_OBJECT_OTHER : type_of_tag(osize);
}
