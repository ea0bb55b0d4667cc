# A host linked against release's shared liblua5.x.so.0 that stands in for
# the agent (the adapter binds to its prof_register_guest & co), running the
# tests of source with that release's adapter.
function(add_puc_host_test target source release)
  string(REPLACE "." "" v ${release})
  add_executable(${target} ${source} lua_host.cpp)
  target_link_libraries(${target} PRIVATE test_main PkgConfig::LUA${v}_SHARED ${CMAKE_DL_LIBS})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/preload/include
    ${PROJECT_SOURCE_DIR}/preload/puc)
  target_compile_options(${target} PRIVATE -include ${CMAKE_CURRENT_SOURCE_DIR}/puc_host_compat.h)
  target_compile_definitions(${target} PRIVATE
    PROF_LUA_ADAPTER="$<TARGET_FILE:prof_lua${v}>"
    PROF_LUA_MODULE_DIR="$<TARGET_FILE_DIR:prof_lua${v}>"
    PROF_LUA_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}/e2e")
  set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
  add_dependencies(${target} prof_lua${v})
  prof_discover_tests(${target} TEST_PREFIX "lua${release} ")
endfunction()

foreach(release 5.1 5.2 5.3 5.4)
  string(REPLACE "." "" v ${release})
  pkg_check_modules(LUA${v}_SHARED REQUIRED IMPORTED_TARGET lua${release})
  # The adapters attached as the agent attaches them (prof_adapter_attach).
  add_puc_host_test(puc_attach_tests_${v} puc_attach.cpp ${release})
endforeach()

# Remembered walks against fresh ones (lua_recall.cpp, as for 5.4 in
# lua.cmake), for the older releases that mark frames (5.1 has no status bit).
foreach(release 5.2 5.3)
  string(REPLACE "." "" v ${release})
  add_puc_host_test(puc_recall_tests_${v} lua_recall.cpp ${release})
endforeach()

# Each 5.1-5.3 adapter end to end on Debian's stock lua5.x under libprof.so.
foreach(release 5.1 5.2 5.3)
  string(REPLACE "." "" v ${release})
  set(target puc_e2e_tests_${v})
  add_executable(${target} puc_e2e.cpp e2e/agent_run.cpp e2e/lua_streams.cpp)
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
  target_link_libraries(${target} PRIVATE test_main prof_format nlohmann_json::nlohmann_json)
  # Lua 5.1's allocator is not told object types.
  if(v STREQUAL "51")
    set(typed 0)
  else()
    set(typed 1)
  endif()
  target_compile_definitions(${target} PRIVATE
    LUA_BIN="lua${release}"
    PROF_LUA_TYPED=${typed}
    PROF_AGENT_PATH="$<TARGET_FILE:prof>"
    PROF_LUA_MODULE_DIR="$<TARGET_FILE_DIR:prof_lua${v}>"
    PROF_LUA_CFIB_DIR="$<TARGET_FILE_DIR:cfib${v}>"
    PROF_LUA_DEMO_DIR="${PROJECT_SOURCE_DIR}/scripts/demo"
    PROF_LUA_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}/e2e"
    PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>")
  add_dependencies(${target} prof prof_lua${v} cfib${v} prof-analyze)
  prof_discover_tests(${target} TEST_PREFIX "lua${release} ")
endforeach()

# HAProxy (Debian's, linking liblua5.3.so.0) with a Lua service, attached with
# no edit, driven by ab: it skips itself (exit 4) while the agent does not
# attach Lua states by itself.
add_executable(haproxy_e2e haproxy_e2e.cpp e2e/agent_run.cpp e2e/lua_streams.cpp)
target_include_directories(haproxy_e2e PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
target_link_libraries(haproxy_e2e PRIVATE test_main prof_format)
target_compile_definitions(haproxy_e2e PRIVATE
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_LUA_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}/e2e")
add_dependencies(haproxy_e2e prof prof_lua53)
prof_discover_tests(haproxy_e2e PROPERTIES TIMEOUT 300)
