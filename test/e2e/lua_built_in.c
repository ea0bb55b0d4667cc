// A program with Lua built in, as Redis has its own Lua 5.1: linked with
// Lua 5.1's or LuaJIT's archive and none of its symbols exported, or with
// the shared liblua5.3.so.0 (test/static_lua.cmake). Its Lua code makes
// strings for SECONDS; with `fork`, for a tenth of a second first, then in
// a child for SECONDS, and again once the child has exited.
//   lua_built_in SECONDS [fork]
// Prints "ok 5050" (the Lua code's sum) each time, and exits with 3 (the
// child too).
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int now(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec / 1e9);
  return 1;
}

static const char kScript[] =
    "local seconds = ...\n"
    "local stop = now() + seconds\n"
    "local sum\n"
    "repeat\n"
    "  local t = {}\n"
    "  for i = 1, 100 do t[i] = string.rep('x', i) .. i end\n"
    "  sum = 0\n"
    "  for i = 1, #t do sum = sum + #t[i] - #tostring(i) end\n"
    "until now() >= stop\n"
    "return sum\n";

// Runs the script for `seconds`; prints its sum.
static void run(double seconds) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_pushcfunction(L, now);
  lua_setglobal(L, "now");
  if (luaL_loadstring(L, kScript) != 0) exit(1);
  lua_pushnumber(L, seconds);
  if (lua_pcall(L, 1, 1, 0) != 0) exit(1);
  printf("ok %ld\n", (long)lua_tonumber(L, -1));
  fflush(stdout);
  lua_close(L);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const double seconds = atof(argv[1]);
  if (argc < 3 || strcmp(argv[2], "fork") != 0) {
    run(seconds);
    return 3;
  }
  run(0.1);
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    run(seconds);
    _exit(3);
  }
  int status;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 3)
    return 1;
  run(seconds);
  return 3;
}
