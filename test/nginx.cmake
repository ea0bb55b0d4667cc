# nginx with OpenResty's Lua module under the agent, driven by ab
# (setup.sh installs nginx-light and apache2-utils and unpacks OpenResty's
# LuaJIT and the module into /var/cache/libprof/openresty).
add_executable(nginx_e2e_tests nginx_e2e.cpp e2e/agent_run.cpp e2e/luajit_streams.cpp)
target_include_directories(nginx_e2e_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
target_link_libraries(nginx_e2e_tests PRIVATE test_main prof_format)
target_compile_definitions(nginx_e2e_tests PRIVATE
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_ANALYZER_PATH="$<TARGET_FILE:prof-analyze>"
  PROF_OPENRESTY_DIR="/var/cache/libprof/openresty")
add_dependencies(nginx_e2e_tests prof prof_luajit prof-analyze)
prof_discover_tests(nginx_e2e_tests)
