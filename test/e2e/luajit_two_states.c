/* A server's pattern: worker threads, each with its own LuaJIT state,
   start at once and load prof_luajit. Each state is profiled: both say
   they are enabled and run their script to the end. Prints "<tag>
   <enabled>" per thread. */
#include <pthread.h>
#include <stdio.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static const char kScript[] =
    "jit.off()\n"
    "local m = require 'prof_luajit'\n"
    "local keep = {}\n"
    "for i = 1, 2000 do keep[i] = {} end\n" /* 2000 tables at =worker:4 */
    "return tostring(m.enabled)\n";

static pthread_barrier_t g_start;

static void *worker(void *tag) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  pthread_barrier_wait(&g_start);
  if (luaL_loadbuffer(L, kScript, sizeof kScript - 1, "=worker") || lua_pcall(L, 0, 1, 0))
    printf("%s error %s\n", (const char *)tag, lua_tostring(L, -1));
  else
    printf("%s %s\n", (const char *)tag, lua_tostring(L, -1));
  lua_close(L);
  return NULL;
}

int main(void) {
  pthread_t a, b;
  pthread_barrier_init(&g_start, NULL, 2);
  pthread_create(&a, NULL, worker, "A");
  pthread_create(&b, NULL, worker, "B");
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return 0;
}
