# The documentation: the paths and links of README.md, docs/ and
# format/README.md name files that exist.
add_executable(docs_tests docs_paths.cpp)
target_link_libraries(docs_tests PRIVATE test_main)
target_compile_definitions(docs_tests PRIVATE PROF_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
prof_discover_tests(docs_tests TEST_PREFIX "docs: ")
