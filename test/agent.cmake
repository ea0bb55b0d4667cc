# End-to-end tests of libprof.so: programs run under the agent.
set(E2E_DIR ${CMAKE_CURRENT_SOURCE_DIR}/e2e)
foreach(prog mem_sites mem_threads mem_lifecycle mem_dlopen mem_children mem_realloc mem_peak
             mem_untouched mem_errno mem_main_exits mem_raw_fork mem_chroot mem_own_malloc
             mem_libc_names mem_dir_removed mem_named_threads)
  add_executable(${prog} ${E2E_DIR}/${prog}.c)
  target_compile_options(${prog} PRIVATE -O1 -g)
endforeach()
target_link_libraries(mem_threads PRIVATE Threads::Threads)
target_link_libraries(mem_named_threads PRIVATE Threads::Threads)
target_link_libraries(mem_lifecycle PRIVATE Threads::Threads)
target_link_libraries(mem_main_exits PRIVATE Threads::Threads)
target_link_libraries(mem_chroot PRIVATE Threads::Threads)
target_link_libraries(mem_dlopen PRIVATE ${CMAKE_DL_LIBS})
add_executable(mem_cxx ${E2E_DIR}/mem_cxx.cpp)
foreach(prog mem_guest mem_guest_alloc)
  add_executable(${prog} ${E2E_DIR}/${prog}.c)
  target_include_directories(${prog} PRIVATE ${PROJECT_SOURCE_DIR}/preload/include)
endforeach()
add_executable(mem_secure ${E2E_DIR}/mem_secure.c)
target_link_libraries(mem_secure PRIVATE prof)
# XXX: a setuid program ignores LD_LIBRARY_PATH, and $ORIGIN outside trusted
# directories, and the build tree may be closed to others (a home directory):
# the test runs copies in a directory of its own, libprof.so beside them, and
# RUNPATH "." (the working directory) finds it there.
set_target_properties(mem_secure PROPERTIES SKIP_BUILD_RPATH TRUE)
target_link_options(mem_secure PRIVATE -Wl,-rpath,.)
add_library(mem_plugin MODULE ${E2E_DIR}/mem_plugin.c)
target_link_options(mem_plugin PRIVATE -Wl,--build-id)

add_executable(agent_e2e agent_e2e.cpp ${E2E_DIR}/agent_run.cpp)
target_include_directories(agent_e2e PRIVATE ${E2E_DIR})
target_link_libraries(agent_e2e PRIVATE test_main prof_format)
target_compile_definitions(agent_e2e PRIVATE
  PROF_AGENT_PATH="$<TARGET_FILE:prof>"
  PROF_E2E_BIN_DIR="${CMAKE_CURRENT_BINARY_DIR}")
add_dependencies(agent_e2e prof mem_sites mem_threads mem_lifecycle mem_dlopen mem_children mem_cxx
                 mem_plugin mem_secure mem_guest mem_guest_alloc mem_realloc mem_untouched mem_errno
                 mem_main_exits mem_raw_fork mem_chroot)
prof_discover_tests(agent_e2e PROPERTIES SKIP_RETURN_CODE 4)

# Host stacks: the rule walks (in hooks, in signal handlers) against libunwind
# on many stack shapes.
add_executable(unwind_tests unwind_host_stack.cpp unwind_signal_stack.cpp unwind_shapes.cpp unwind_rules.cpp)
target_link_libraries(unwind_tests PRIVATE test_main prof_unwind PkgConfig::LIBUNWIND Threads::Threads ${CMAKE_DL_LIBS})
set_source_files_properties(unwind_shapes.cpp PROPERTIES COMPILE_OPTIONS -fno-omit-frame-pointer)
prof_discover_tests(unwind_tests)

# The event ring alone, its producers coming and going; the compactor; an
# output file the program closes and removes; the writer task, which keeps
# none of the program's descriptors; the stack table, which writes through
# the ring.
add_executable(stream_tests stream_event_ring.cpp stream_compactor.cpp stream_owned_file.cpp stream_raw_thread.cpp
  memory_stack_interner.cpp ${PROJECT_SOURCE_DIR}/preload/memory/stack_interner.cpp
  ${PROJECT_SOURCE_DIR}/preload/stream/event_ring.cpp
  ${PROJECT_SOURCE_DIR}/preload/stream/raw_thread.cpp ${PROJECT_SOURCE_DIR}/preload/stream/owned_file.cpp
  ${PROJECT_SOURCE_DIR}/preload/stream/stream_compressor.cpp
  ${PROJECT_SOURCE_DIR}/preload/stream/stream_compactor.cpp)
target_include_directories(stream_tests PRIVATE ${PROJECT_SOURCE_DIR}/preload)
target_link_libraries(stream_tests PRIVATE test_main prof_format Threads::Threads)
prof_discover_tests(stream_tests)

add_executable(memory_tests memory_sampled_set.cpp memory_block_size.cpp memory_negative_log.cpp
  ${PROJECT_SOURCE_DIR}/preload/memory/alloc_sampling.cpp ${PROJECT_SOURCE_DIR}/preload/memory/block_size.cpp
  ${PROJECT_SOURCE_DIR}/preload/stream/raw_thread.cpp)
target_include_directories(memory_tests PRIVATE ${PROJECT_SOURCE_DIR}/preload
  ${PROJECT_SOURCE_DIR}/preload/include ${PROJECT_SOURCE_DIR}/unwind)
target_link_libraries(memory_tests PRIVATE test_main Threads::Threads ${CMAKE_DL_LIBS})
prof_discover_tests(memory_tests)
