# prof-analyze: its pieces in-process, reports against independent truths
# (the reference parser's output, the VM's counters, streams with figures
# known by construction, real programs under the agent), bad input, fuzzing.
set(ANALYZER_E2E_DIR ${CMAKE_CURRENT_SOURCE_DIR}/e2e)

# Libraries with code at known places for the symbolizer: with DWARF and an
# inlined call, and C++ without debug information.
add_library(analyzer_inline SHARED ${ANALYZER_E2E_DIR}/analyzer_inline.c)
target_compile_options(analyzer_inline PRIVATE -O2 -g)
target_link_options(analyzer_inline PRIVATE -Wl,--build-id)
add_library(analyzer_mangled SHARED ${ANALYZER_E2E_DIR}/analyzer_mangled.cpp)
target_compile_options(analyzer_mangled PRIVATE -O2 -g0)

add_executable(analyzer_model analyzer_model.cpp analyzer_lua_names.cpp analyzer_inline_scopes.cpp)
target_link_libraries(analyzer_model PRIVATE test_main prof_analyzer ${CMAKE_DL_LIBS})
target_compile_definitions(analyzer_model PRIVATE
  PROF_INLINE_LIB="$<TARGET_FILE:analyzer_inline>"
  PROF_MANGLED_LIB="$<TARGET_FILE:analyzer_mangled>")
add_dependencies(analyzer_model analyzer_inline analyzer_mangled)
prof_discover_tests(analyzer_model)

# A program with allocation sites known by construction, run under the agent.
add_executable(analyzer_sites ${ANALYZER_E2E_DIR}/analyzer_sites.c)
target_compile_options(analyzer_sites PRIVATE -O1 -g)

# (analyzer_threads.cpp: memory by thread, from mem_named_threads.)
add_executable(analyzer_reports analyzer_reports.cpp analyzer_threads.cpp ${ANALYZER_E2E_DIR}/agent_run.cpp)
target_include_directories(analyzer_reports PRIVATE ${ANALYZER_E2E_DIR})
target_link_libraries(analyzer_reports PRIVATE test_main prof_format nlohmann_json::nlohmann_json)
target_compile_definitions(analyzer_reports PRIVATE
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_SITES_PROGRAM="$<TARGET_FILE:analyzer_sites>"
  PROF_PEAK_PROGRAM="$<TARGET_FILE:mem_peak>"
  PROF_NAMED_THREADS_PROGRAM="$<TARGET_FILE:mem_named_threads>"
  PROF_FIXTURES_DIR="${PROF_SHARED_DIR}/fixtures/luajit")
add_dependencies(analyzer_reports prof-analyze prof analyzer_sites mem_peak mem_named_threads)
prof_discover_tests(analyzer_reports PROPERTIES SKIP_RETURN_CODE 4)

add_executable(analyzer_fuzz analyzer_fuzz.cpp)
target_link_libraries(analyzer_fuzz PRIVATE test_main prof_analyzer)
target_compile_definitions(analyzer_fuzz PRIVATE
  PROF_FIXTURES_DIR="${PROF_SHARED_DIR}/fixtures/luajit")
prof_discover_tests(analyzer_fuzz PROPERTIES SKIP_RETURN_CODE 4)

# Hostile but valid streams: memory and time bounded by what they hold,
# crafted stack tables and sizes refused (prof-analyze run as a program).
add_executable(analyzer_hostile analyzer_hostile.cpp)
target_link_libraries(analyzer_hostile PRIVATE test_main prof_format nlohmann_json::nlohmann_json)
target_compile_definitions(analyzer_hostile PRIVATE PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>")
add_dependencies(analyzer_hostile prof-analyze)
prof_discover_tests(analyzer_hostile)

# The tables on real runs: a C++ program built -O2 -g, and the stock lua5.4.
add_executable(tables_cxx ${ANALYZER_E2E_DIR}/tables_cxx.cpp)
target_compile_options(tables_cxx PRIVATE -O2 -g)
add_executable(analyzer_tables analyzer_tables.cpp ${ANALYZER_E2E_DIR}/agent_run.cpp)
target_include_directories(analyzer_tables PRIVATE ${ANALYZER_E2E_DIR})
target_link_libraries(analyzer_tables PRIVATE test_main prof_format nlohmann_json::nlohmann_json)
target_compile_definitions(analyzer_tables PRIVATE
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_TABLES_PROGRAM="$<TARGET_FILE:tables_cxx>"
  PROF_TABLES_LUA="${ANALYZER_E2E_DIR}/tables_cpu.lua"
  PROF_LUA_MODULE_DIR="$<TARGET_FILE_DIR:prof_lua54>")
add_dependencies(analyzer_tables prof-analyze prof prof_lua54 tables_cxx)
prof_discover_tests(analyzer_tables)

# Command-line errors, files of other tools, options that do not apply; diff.
add_executable(analyzer_inputs analyzer_inputs.cpp analyzer_diff.cpp
  ${ANALYZER_E2E_DIR}/agent_run.cpp)
target_include_directories(analyzer_inputs PRIVATE ${ANALYZER_E2E_DIR})
target_link_libraries(analyzer_inputs PRIVATE test_main prof_format)
target_compile_definitions(analyzer_inputs PRIVATE
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_AGENT_PATH="$<TARGET_FILE:prof>")
add_dependencies(analyzer_inputs prof-analyze prof)
prof_discover_tests(analyzer_inputs)

# Memory by object type: the stock lua5.4 with prof_lua, through prof-analyze.
add_executable(object_types_e2e object_types_e2e.cpp ${ANALYZER_E2E_DIR}/agent_run.cpp)
target_include_directories(object_types_e2e PRIVATE ${ANALYZER_E2E_DIR})
target_link_libraries(object_types_e2e PRIVATE test_main prof_format nlohmann_json::nlohmann_json)
target_compile_definitions(object_types_e2e PRIVATE
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_OBJECT_TYPES_LUA="${ANALYZER_E2E_DIR}/object_types.lua"
  PROF_LUA_MODULE_DIR="$<TARGET_FILE_DIR:prof_lua54>")
add_dependencies(object_types_e2e prof-analyze prof prof_lua54)
prof_discover_tests(object_types_e2e)
