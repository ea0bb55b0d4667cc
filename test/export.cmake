# prof-analyze's pictures and exports, read back by real readers: headless
# Chromium opens the SVG and HTML (scripts run without errors, screenshots
# show frames), go tool pprof reads the pprof files, the speedscope app the
# speedscope files. setup.sh installs all three; a test that misses one fails.
find_program(PROF_CHROMIUM chromium)
find_program(PROF_GO go)
set(PROF_SPEEDSCOPE_DIR /var/cache/libprof/speedscope/package/dist/release
    CACHE PATH "the speedscope app (scripts/setup.sh)")
find_package(ZLIB REQUIRED)

# Two allocation sites in two phases, for the heap chart's bands.
add_executable(heap_phases e2e/heap_phases.c)
target_include_directories(heap_phases PRIVATE ${PROJECT_SOURCE_DIR}/preload/include)
target_compile_options(heap_phases PRIVATE -O1 -g)

add_executable(export_tests export_pictures.cpp export_files.cpp export_scale.cpp export_heap_chart.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/e2e/agent_run.cpp)
target_include_directories(export_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
target_link_libraries(export_tests PRIVATE test_main prof_format nlohmann_json::nlohmann_json
  ZLIB::ZLIB)
target_compile_definitions(export_tests PRIVATE
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_SITES_PROGRAM="$<TARGET_FILE:analyzer_sites>"
  PROF_PHASES_PROGRAM="$<TARGET_FILE:heap_phases>"
  PROF_FIXTURES_DIR="${PROF_SHARED_DIR}/fixtures/luajit"
  PROF_CHROMIUM="${PROF_CHROMIUM}"
  PROF_GO="${PROF_GO}"
  PROF_SPEEDSCOPE_DIR="${PROF_SPEEDSCOPE_DIR}")
add_dependencies(export_tests prof-analyze prof analyzer_sites heap_phases)
prof_discover_tests(export_tests PROPERTIES SKIP_RETURN_CODE 4)
