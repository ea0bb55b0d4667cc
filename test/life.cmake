# End-to-end tests of the agent's life in the program: its descriptors,
# exits and children (test/e2e/mem_*.c and cpu_*.c programs of their own).
set(E2E_DIR ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
set(LIFE_PROGRAMS mem_full_disk mem_closefrom mem_fork_stats cpu_killed mem_exit_race
  mem_exit_group mem_killed mem_wait_all mem_daemon mem_seccomp mem_writer_stopped
  mem_fork_limit mem_visible)
foreach(prog ${LIFE_PROGRAMS})
  add_executable(${prog} ${E2E_DIR}/${prog}.c)
  target_compile_options(${prog} PRIVATE -O1 -g)
  target_link_libraries(${prog} PRIVATE Threads::Threads)
endforeach()
target_include_directories(mem_fork_stats PRIVATE ${PROJECT_SOURCE_DIR}/preload/include)

add_executable(life_e2e life_e2e.cpp ${E2E_DIR}/agent_run.cpp ${E2E_DIR}/lua_streams.cpp)
target_include_directories(life_e2e PRIVATE ${E2E_DIR})
target_link_libraries(life_e2e PRIVATE test_main prof_format)
target_compile_definitions(life_e2e PRIVATE
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_E2E_BIN_DIR="${CMAKE_CURRENT_BINARY_DIR}")
add_dependencies(life_e2e prof prof-analyze ${LIFE_PROGRAMS})
prof_discover_tests(life_e2e)
