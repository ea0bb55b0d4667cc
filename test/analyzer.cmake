# prof-analyze: reports against independent truths, bad input, fuzzing.
add_executable(analyzer_reports analyzer_reports.cpp ${CMAKE_CURRENT_SOURCE_DIR}/e2e/agent_run.cpp)
target_include_directories(analyzer_reports PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
target_link_libraries(analyzer_reports PRIVATE test_main prof_format nlohmann_json::nlohmann_json)
target_compile_definitions(analyzer_reports PRIVATE
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_FIXTURES_DIR="${PROF_SHARED_DIR}/fixtures/luajit")
add_dependencies(analyzer_reports prof-analyze)
catch_discover_tests(analyzer_reports PROPERTIES SKIP_RETURN_CODE 4)

add_executable(analyzer_fuzz analyzer_fuzz.cpp)
target_link_libraries(analyzer_fuzz PRIVATE test_main prof_analyzer)
target_compile_definitions(analyzer_fuzz PRIVATE
  PROF_FIXTURES_DIR="${PROF_SHARED_DIR}/fixtures/luajit")
catch_discover_tests(analyzer_fuzz PROPERTIES SKIP_RETURN_CODE 4)
