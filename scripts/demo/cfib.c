/* cfib: the C fibonacci of the sysprof RFC's example, as a Lua module
** (5.1 to 5.4): require("cfib").fib(n). */
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
#if LUA_VERSION_NUM == 501
  lua_newtable(L);
  luaL_register(L, NULL, functions);
#else
  luaL_newlib(L, functions);
#endif
  return 1;
}
