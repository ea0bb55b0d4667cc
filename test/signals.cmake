# End-to-end tests of the agent beside the program's own signals: handlers
# that allocate, free or siglongjmp inside the agent, the signal settings,
# and CPU sampling's effect on the program's sleeps.
set(E2E_DIR ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
foreach(prog sig_frees sig_longjmp sig_first_jump sig_vfork sig_view sig_altstack cpu_sleepers)
  add_executable(${prog} ${E2E_DIR}/${prog}.c)
  target_compile_options(${prog} PRIVATE -O1 -g)
endforeach()
target_include_directories(sig_frees PRIVATE ${PROJECT_SOURCE_DIR}/preload/include)
target_include_directories(sig_longjmp PRIVATE ${PROJECT_SOURCE_DIR}/preload/include)
target_link_libraries(sig_longjmp PRIVATE Threads::Threads ${CMAKE_DL_LIBS})

add_executable(signals_e2e signals_e2e.cpp ${E2E_DIR}/agent_run.cpp ${E2E_DIR}/lua_streams.cpp)
target_include_directories(signals_e2e PRIVATE ${E2E_DIR})
target_link_libraries(signals_e2e PRIVATE test_main prof_format)
target_compile_definitions(signals_e2e PRIVATE
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_E2E_BIN_DIR="${CMAKE_CURRENT_BINARY_DIR}")
add_dependencies(signals_e2e prof prof-analyze sig_frees sig_longjmp sig_first_jump sig_vfork sig_view sig_altstack cpu_sleepers)
# The sleep test measures a rate: alone, as the CPU tests run.
prof_discover_tests(signals_e2e PROPERTIES RUN_SERIAL ON TIMEOUT 300)
