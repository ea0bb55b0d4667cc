# The Lua 5.4 guest adapter: in a host that stands in for the agent, and end
# to end on the stock lua5.4 under libprof.so.
pkg_check_modules(LUA54_HOST REQUIRED IMPORTED_TARGET lua5.4)

add_executable(lua_adapter_tests lua_adapter.cpp lua_host.cpp)
target_link_libraries(lua_adapter_tests PRIVATE test_main PkgConfig::LUA54_HOST)
target_include_directories(lua_adapter_tests PRIVATE ${PROJECT_SOURCE_DIR}/preload/include)
target_compile_definitions(lua_adapter_tests PRIVATE
  PROF_LUA_MODULE_DIR="$<TARGET_FILE_DIR:prof_lua54>")
# The module binds to this host's prof_register_guest & co.
set_target_properties(lua_adapter_tests PROPERTIES ENABLE_EXPORTS ON)
add_dependencies(lua_adapter_tests prof_lua54)
prof_discover_tests(lua_adapter_tests)

# A host standing in for the agent that runs the test scripts of e2e/ (the
# module binds to its prof_register_guest & co).
function(add_lua_host_test target source)
  add_executable(${target} ${source} lua_host.cpp)
  target_link_libraries(${target} PRIVATE test_main PkgConfig::LUA54_HOST)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/preload/include)
  target_compile_definitions(${target} PRIVATE
    PROF_LUA_MODULE_DIR="$<TARGET_FILE_DIR:prof_lua54>"
    PROF_LUA_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}/e2e")
  set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
  add_dependencies(${target} prof_lua54)
endfunction()

# Remembered walks against fresh ones, in every allocation of the Lua tests' scripts.
add_lua_host_test(lua_recall_tests lua_recall.cpp)
prof_discover_tests(lua_recall_tests)

# Runs PROF_LUA_STRESS_SECONDS (default 20) CPU seconds of churn.
add_lua_host_test(lua_stress_tests lua_stress.cpp)
prof_discover_tests(lua_stress_tests PROPERTIES TIMEOUT 900)

add_executable(lua_e2e_tests lua_e2e.cpp lua_e2e_cpu.cpp lua_e2e_merge.cpp lua_e2e_names.cpp
  e2e/agent_run.cpp
  e2e/lua_streams.cpp)
target_include_directories(lua_e2e_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
target_link_libraries(lua_e2e_tests PRIVATE test_main prof_format)
target_compile_definitions(lua_e2e_tests PRIVATE
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_LUA_MODULE_DIR="$<TARGET_FILE_DIR:prof_lua54>"
  PROF_LUA_CFIB_DIR="$<TARGET_FILE_DIR:cfib>"
  PROF_LUA_DEMO_DIR="${PROJECT_SOURCE_DIR}/scripts/demo"
  PROF_LUA_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}/e2e"
  PROF_LUA_BENCH_DIR="${PROJECT_SOURCE_DIR}/scripts/bench"
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>")
add_dependencies(lua_e2e_tests prof prof_lua54 cfib prof-analyze)
prof_discover_tests(lua_e2e_tests)
