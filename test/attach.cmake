# prof-run --pid end to end: running programs (C, python3, lua5.4, an nginx
# worker under ab) attached, recorded, detached and attached again, then
# stopped as usual; and the refusals (docs/attach.md).
add_executable(attach_loop ${CMAKE_CURRENT_SOURCE_DIR}/e2e/attach_loop.c)
target_compile_options(attach_loop PRIVATE -O1 -g)
target_link_libraries(attach_loop PRIVATE Threads::Threads)
add_executable(attach_alloc ${CMAKE_CURRENT_SOURCE_DIR}/e2e/attach_alloc.c)
target_compile_options(attach_alloc PRIVATE -O1 -g)
target_link_libraries(attach_alloc PRIVATE Threads::Threads)
add_executable(attach_heap ${CMAKE_CURRENT_SOURCE_DIR}/e2e/attach_heap.c)
target_compile_options(attach_heap PRIVATE -O1 -g)
target_link_libraries(attach_heap PRIVATE Threads::Threads)
add_executable(attach_quitter ${CMAKE_CURRENT_SOURCE_DIR}/e2e/attach_quitter.c)
target_link_libraries(attach_quitter PRIVATE Threads::Threads)
add_executable(attach_spin_static ${CMAKE_CURRENT_SOURCE_DIR}/e2e/attach_spin_static.c)
target_link_options(attach_spin_static PRIVATE -static)

add_executable(attach_e2e attach_e2e.cpp)
target_include_directories(attach_e2e PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
target_link_libraries(attach_e2e PRIVATE test_main)
target_compile_definitions(attach_e2e PRIVATE
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_BUILD_DIR="${CMAKE_BINARY_DIR}"
  PROF_RUN_SCRIPT="${PROJECT_SOURCE_DIR}/scripts/prof-run"
  PROF_E2E_DIR="${CMAKE_CURRENT_SOURCE_DIR}/e2e"
  PROF_E2E_BIN_DIR="${CMAKE_CURRENT_BINARY_DIR}")
add_dependencies(attach_e2e prof prof-analyze prof-check-config attach_loop attach_alloc attach_heap attach_quitter attach_spin_static)
# The Lua adapters the agent loads into an attached interpreter, beside itself.
add_dependencies(attach_e2e prof_lua51 prof_lua53 prof_lua54 prof_luajit)
# (gdb stops whole processes: alone, so no other test's timing suffers.)
prof_discover_tests(attach_e2e TEST_PREFIX "attach: " PROPERTIES RUN_SERIAL ON TIMEOUT 300 SKIP_RETURN_CODE 4)
