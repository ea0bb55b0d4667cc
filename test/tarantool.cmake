# Tarantool 2.6 (Debian's tarantool, setup.sh): its LuaJIT, built without
# GC64 into the executable, loads the LuaJIT adapter with require.
add_executable(tarantool_e2e_tests tarantool_e2e.cpp e2e/agent_run.cpp e2e/luajit_streams.cpp)
target_include_directories(tarantool_e2e_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
target_link_libraries(tarantool_e2e_tests PRIVATE test_main prof_format)
target_compile_definitions(tarantool_e2e_tests PRIVATE
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_LUAJIT_MODULE_DIR="$<TARGET_FILE_DIR:prof_luajit>"
  PROF_LUAJIT_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}/e2e")
add_dependencies(tarantool_e2e_tests prof prof_luajit prof-analyze)
prof_discover_tests(tarantool_e2e_tests)
