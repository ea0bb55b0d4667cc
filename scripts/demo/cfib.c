/* cfib: the C fibonacci of the sysprof RFC's example, as a Lua 5.4 module:
** require("cfib").fib(n). */
#include <lauxlib.h>
#include <lua.h>

static double c_payload(double n) {
  if (n <= 1) return n;
  return c_payload(n - 1) + c_payload(n - 2);
}

static int fib(lua_State *L) {
  lua_pushnumber(L, c_payload(luaL_checknumber(L, 1)));
  return 1;
}

int luaopen_cfib(lua_State *L) {
  static const luaL_Reg functions[] = {{"fib", fib}, {NULL, NULL}};
  luaL_newlib(L, functions);
  return 1;
}
