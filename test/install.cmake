# Installing: `cmake --install` of this build into a fresh prefix, then the
# installed prof-run, prof-analyze and Lua adapter alone, from another
# directory (test/e2e/ctl_prog.c, copied there, is the program profiled).
add_executable(install_e2e install_e2e.cpp ${CMAKE_CURRENT_SOURCE_DIR}/e2e/agent_run.cpp)
target_include_directories(install_e2e PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
target_link_libraries(install_e2e PRIVATE test_main prof_format nlohmann_json::nlohmann_json)
target_compile_definitions(install_e2e PRIVATE
  PROF_CMAKE="${CMAKE_COMMAND}"
  PROF_BUILD_DIR="${CMAKE_BINARY_DIR}"
  PROF_CTL_PROGRAM="$<TARGET_FILE:ctl_prog>"
  # XXX: agent_run.cpp's run_under_agent needs it; these tests call run_bare only.
  PROF_AGENT_PATH="")
add_dependencies(install_e2e prof prof_cpu prof-analyze prof_lua54 prof_luajit ctl_prog)
prof_discover_tests(install_e2e TEST_PREFIX "install: ")
