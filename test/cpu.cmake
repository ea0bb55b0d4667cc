# End-to-end tests of the CPU sampler: programs run under libprof.so with
# PROF_CPU set, their sysprof (and memprof) streams read back.
set(E2E_DIR ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
foreach(prog cpu_burn cpu_alloc cpu_toyvm cpu_own_signal cpu_other_stacks cpu_clock cpu_blocked
             cpu_named_threads)
  add_executable(${prog} ${E2E_DIR}/${prog}.c)
  target_compile_options(${prog} PRIVATE -O1 -g)
endforeach()
target_link_libraries(cpu_burn PRIVATE Threads::Threads)
# A copy without symbols, its code where cpu_burn's is (objcopy moves none).
add_custom_command(TARGET cpu_burn POST_BUILD
  COMMAND ${CMAKE_OBJCOPY} --strip-all $<TARGET_FILE:cpu_burn> ${CMAKE_CURRENT_BINARY_DIR}/cpu_burn_stripped)
target_link_libraries(cpu_alloc PRIVATE Threads::Threads)
target_link_libraries(cpu_blocked PRIVATE Threads::Threads)
target_link_libraries(cpu_named_threads PRIVATE Threads::Threads)
target_include_directories(cpu_toyvm PRIVATE ${PROJECT_SOURCE_DIR}/preload/include)

# cpu_stacks_e2e.cpp: whole host stacks through node's JIT code, and samples
# inside the agent.
add_executable(cpu_e2e cpu_e2e.cpp cpu_stacks_e2e.cpp ${E2E_DIR}/agent_run.cpp ${E2E_DIR}/lua_streams.cpp)
target_include_directories(cpu_e2e PRIVATE ${E2E_DIR})
target_link_libraries(cpu_e2e PRIVATE test_main prof_format nlohmann_json::nlohmann_json)
target_compile_definitions(cpu_e2e PRIVATE
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_CPU_AGENT_PATH="$<TARGET_FILE:prof_cpu>"
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_E2E_BIN_DIR="${CMAKE_CURRENT_BINARY_DIR}"
  PROF_LUA_MODULE_DIR="$<TARGET_FILE_DIR:prof_lua54>"
  PROF_BENCH_DIR="${PROJECT_SOURCE_DIR}/scripts/bench")
add_dependencies(cpu_e2e prof prof_cpu prof-analyze prof_lua54 cpu_burn cpu_alloc cpu_toyvm cpu_own_signal
                 cpu_other_stacks cpu_clock cpu_blocked cpu_named_threads)
# Rates are measured in CPU time, so a loaded machine slows them down but
# does not skew them; still, they run alone.
# (The node test skips itself, exit code 4, where node is missing.)
prof_discover_tests(cpu_e2e PROPERTIES RUN_SERIAL ON TIMEOUT 300 SKIP_RETURN_CODE 4)

