# The PUC Lua adapters (5.1 to 5.4) attached as the agent attaches them
# (prof_adapter_attach), in a host linked against each release's shared
# liblua5.x.so.0 that stands in for the agent.
foreach(release 5.1 5.2 5.3 5.4)
  string(REPLACE "." "" v ${release})
  pkg_check_modules(LUA${v}_SHARED REQUIRED IMPORTED_TARGET lua${release})
  if(v STREQUAL "54")
    set(adapter prof_lua)
  else()
    set(adapter prof_lua${v})
  endif()
  set(target puc_attach_tests_${v})
  add_executable(${target} puc_attach.cpp lua_host.cpp)
  target_link_libraries(${target} PRIVATE test_main PkgConfig::LUA${v}_SHARED ${CMAKE_DL_LIBS})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/preload/include
    ${PROJECT_SOURCE_DIR}/preload/puc)
  target_compile_options(${target} PRIVATE -include ${CMAKE_CURRENT_SOURCE_DIR}/puc_host_compat.h)
  target_compile_definitions(${target} PRIVATE
    PROF_LUA_ADAPTER="$<TARGET_FILE:${adapter}>"
    PROF_LUA_MODULE_DIR="$<TARGET_FILE_DIR:${adapter}>")
  # The adapter binds to this host's prof_register_guest & co.
  set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
  add_dependencies(${target} ${adapter})
  prof_discover_tests(${target} TEST_PREFIX "lua${release} ")
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
