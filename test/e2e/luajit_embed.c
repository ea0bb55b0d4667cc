/* A program that embeds LuaJIT through libluajit-5.1.so.2 and never names
   the profiler: it makes a state, opens its libraries and runs a chunk that
   makes N tables at line 3 (JIT off, unless "jit": one allocation each),
   then, with "burn", spins in Lua at line 6 for the given milliseconds of
   CPU time.
   With "fork", the chunk runs in a child made after the state; with
   "states K", K more states live while it runs. Usage:
   luajit_embed N [burn MS] [jit] [fork] [states K] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static const char kChunk[] =
    "local n, ms, jit_on = ...\n"                                 /* 1 */
    "if not jit_on then jit.off() end local keep = {}\n"          /* 2 */
    "for i = 1, n do keep[i] = {} end\n"                          /* 3 */
    "local stop, s = os.clock() + ms / 1000, 0\n"                 /* 4 */
    "while os.clock() < stop do\n"                                /* 5 */
    "  for i = 1, 1000 do s = s + i % 7 end\n"                    /* 6 */
    "end\n"                                                       /* 7 */
    "return #keep\n";                                             /* 8 */

static int run(lua_State *L, int n, int ms, int jit_on) {
  if (luaL_loadbuffer(L, kChunk, sizeof kChunk - 1, "=embed")) return 1;
  lua_pushinteger(L, n);
  lua_pushinteger(L, ms);
  lua_pushboolean(L, jit_on);
  if (lua_pcall(L, 3, 1, 0)) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    return 1;
  }
  printf("%d\n", (int)lua_tointeger(L, -1));
  return 0;
}

int main(int argc, char **argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 0;
  int ms = 0, forks = 0, more = 0, jit_on = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "burn") && i + 1 < argc) ms = atoi(argv[++i]);
    if (!strcmp(argv[i], "fork")) forks = 1;
    if (!strcmp(argv[i], "jit")) jit_on = 1;
    if (!strcmp(argv[i], "states") && i + 1 < argc) more = atoi(argv[++i]);
  }
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_State *others[64];
  if (more > 64) more = 64;
  for (int i = 0; i < more; i++) others[i] = luaL_newstate();
  int rc = 0;
  if (forks) {
    fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {
      rc = run(L, n, ms, jit_on);
      lua_close(L);
      return rc;
    }
    int status = 0;
    waitpid(child, &status, 0);
    rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  } else {
    rc = run(L, n, ms, jit_on);
  }
  for (int i = 0; i < more; i++) lua_close(others[i]);
  lua_close(L);
  return rc;
}
