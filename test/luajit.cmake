# The LuaJIT adapter (preload/luajit/), end to end on Debian's stock luajit
# under libprof.so.
add_executable(no_safe_read e2e/no_safe_read.c)
# An embedding program: two threads, a LuaJIT state each.
add_executable(luajit_two_states e2e/luajit_two_states.c)
pkg_check_modules(LUAJIT_EMBED REQUIRED IMPORTED_TARGET luajit)
target_link_libraries(luajit_two_states PRIVATE PkgConfig::LUAJIT_EMBED Threads::Threads)
# An embedding program that never names the profiler (automatic attach).
add_executable(luajit_embed e2e/luajit_embed.c)
target_link_libraries(luajit_embed PRIVATE PkgConfig::LUAJIT_EMBED)
add_executable(luajit_e2e_tests luajit_e2e.cpp luajit_recall.cpp luajit_attach.cpp e2e/agent_run.cpp
  e2e/luajit_streams.cpp)
target_include_directories(luajit_e2e_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
target_link_libraries(luajit_e2e_tests PRIVATE test_main prof_format)
target_compile_definitions(luajit_e2e_tests PRIVATE
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_LUAJIT_MODULE_DIR="$<TARGET_FILE_DIR:prof_luajit>"
  PROF_LUAJIT_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}/e2e"
  PROF_LUAJIT_DEMO_DIR="${PROJECT_SOURCE_DIR}/scripts/demo"
  PROF_NO_SAFE_READ="$<TARGET_FILE:no_safe_read>"
  PROF_LUAJIT_TWO_STATES="$<TARGET_FILE:luajit_two_states>"
  PROF_LUAJIT_EMBED="$<TARGET_FILE:luajit_embed>"
  PROF_OPENRESTY_DIR="/var/cache/libprof/openresty"
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>")
add_dependencies(luajit_e2e_tests prof prof_luajit no_safe_read luajit_two_states luajit_embed
                 prof-analyze)
prof_discover_tests(luajit_e2e_tests)
