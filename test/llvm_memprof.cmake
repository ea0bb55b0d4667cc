# LLVM MemProf raw profiles: the reader on bytes written from its grammar
# (every version, corruption, cuts, random bytes), then real runs of clang's
# -fmemory-profile runtime (each installed clang), against counts known by
# construction and against libprof on the same program.
add_executable(llvm_memprof_reader llvm_memprof_reader.cpp)
target_link_libraries(llvm_memprof_reader PRIVATE test_main prof_analyzer)
target_link_options(llvm_memprof_reader PRIVATE -Wl,--build-id)
prof_discover_tests(llvm_memprof_reader)

add_executable(llvm_memprof_e2e llvm_memprof_e2e.cpp ${CMAKE_CURRENT_SOURCE_DIR}/e2e/agent_run.cpp)
target_include_directories(llvm_memprof_e2e PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
target_link_libraries(llvm_memprof_e2e PRIVATE test_main prof_format nlohmann_json::nlohmann_json)
target_compile_definitions(llvm_memprof_e2e PRIVATE
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_MEMPROF_SITES="${CMAKE_CURRENT_SOURCE_DIR}/e2e/llvm_memprof_sites.cpp")
add_dependencies(llvm_memprof_e2e prof-analyze prof)
prof_discover_tests(llvm_memprof_e2e PROPERTIES SKIP_RETURN_CODE 4)
