# The launcher and the run-time control, end to end: scripts/prof-run on real
# programs (exit codes, signals, static and setuid refusals, CPU flags,
# children), the toggle signal, the C API and markers, and the analyzer's
# marker windows, diff, suppressions and progress on those programs' streams.
add_executable(ctl_prog ${CMAKE_CURRENT_SOURCE_DIR}/e2e/ctl_prog.c)
target_include_directories(ctl_prog PRIVATE ${PROJECT_SOURCE_DIR}/preload/include)
target_compile_options(ctl_prog PRIVATE -O1 -g)
# The same program linked statically: no dynamic loader, LD_PRELOAD ignored.
add_executable(ctl_static ${CMAKE_CURRENT_SOURCE_DIR}/e2e/ctl_prog.c)
target_include_directories(ctl_static PRIVATE ${PROJECT_SOURCE_DIR}/preload/include)
target_link_options(ctl_static PRIVATE -static)

add_executable(control_e2e control_e2e.cpp ${CMAKE_CURRENT_SOURCE_DIR}/e2e/agent_run.cpp)
target_include_directories(control_e2e PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
target_link_libraries(control_e2e PRIVATE test_main prof_format nlohmann_json::nlohmann_json util)
target_compile_definitions(control_e2e PRIVATE
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_RUN_SCRIPT="${PROJECT_SOURCE_DIR}/scripts/prof-run"
  PROF_CTL_PROGRAM="$<TARGET_FILE:ctl_prog>"
  PROF_CTL_STATIC="$<TARGET_FILE:ctl_static>"
  PROF_DLOPEN_PROGRAM="$<TARGET_FILE:mem_dlopen>"
  PROF_DLOPEN_PLUGIN="$<TARGET_FILE:mem_plugin>")
add_dependencies(control_e2e prof prof_cpu prof-analyze ctl_prog ctl_static mem_dlopen mem_plugin)
prof_discover_tests(control_e2e TEST_PREFIX "control: ")
