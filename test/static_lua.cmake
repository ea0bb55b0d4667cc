# The line that says a program has Lua built in without its API exported
# (preload/static_lua_notice.h): e2e/lua_built_in.c linked with Lua 5.1's
# and LuaJIT's archives (no symbol exported: no ENABLE_EXPORTS), and with
# the shared liblua5.3.so.0, run under the agents.
find_library(LUA51_ARCHIVE liblua5.1.a REQUIRED)
find_library(LUAJIT_ARCHIVE libluajit-5.1.a REQUIRED)
pkg_check_modules(LUA51_HEADERS REQUIRED lua5.1)
pkg_check_modules(LUAJIT_HEADERS REQUIRED luajit)
pkg_check_modules(LUA53_LIBRARY REQUIRED IMPORTED_TARGET lua5.3)

add_executable(lua51_built_in e2e/lua_built_in.c)
target_include_directories(lua51_built_in PRIVATE ${LUA51_HEADERS_INCLUDE_DIRS})
target_link_libraries(lua51_built_in PRIVATE ${LUA51_ARCHIVE} m ${CMAKE_DL_LIBS})
add_executable(luajit_built_in e2e/lua_built_in.c)
target_include_directories(luajit_built_in PRIVATE ${LUAJIT_HEADERS_INCLUDE_DIRS})
target_link_libraries(luajit_built_in PRIVATE ${LUAJIT_ARCHIVE} m ${CMAKE_DL_LIBS})
add_executable(lua53_shared e2e/lua_built_in.c)
target_link_libraries(lua53_shared PRIVATE PkgConfig::LUA53_LIBRARY)

add_executable(static_lua_e2e static_lua_e2e.cpp e2e/agent_run.cpp)
target_include_directories(static_lua_e2e PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
target_link_libraries(static_lua_e2e PRIVATE test_main prof_format)
target_compile_definitions(static_lua_e2e PRIVATE
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_CPU_AGENT_PATH="$<TARGET_FILE:prof_cpu>"
  PROF_LUA51_BUILT_IN="$<TARGET_FILE:lua51_built_in>"
  PROF_LUAJIT_BUILT_IN="$<TARGET_FILE:luajit_built_in>"
  PROF_LUA53_SHARED="$<TARGET_FILE:lua53_shared>"
  PROF_LUA54_MODULE_DIR="$<TARGET_FILE_DIR:prof_lua54>")
add_dependencies(static_lua_e2e prof prof_cpu prof_lua54 prof_lua53 lua51_built_in luajit_built_in
  lua53_shared)
prof_discover_tests(static_lua_e2e)
