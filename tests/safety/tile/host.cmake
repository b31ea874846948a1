# Classes 1 and 3 of issue 10 (tests/safety/CMakeLists.txt):
#   host back doors into storage a launch owns   host_back_door_test.cpp, compile_fail/host_*.cpp,
#                                                host_simt_escape_test.cpp (fake driver)
#   shape, size and tile arithmetic that overflows, allocation failure   host_overflow_test.cpp
tessera_test(host_safety_tests
             SOURCES ${CMAKE_CURRENT_LIST_DIR}/host_overflow_test.cpp
                     ${CMAKE_CURRENT_LIST_DIR}/host_back_door_test.cpp
             LABELS cpu)
target_include_directories(host_safety_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests)

# Host compile-fail snippets (compile_fail/host_*.cpp), through the driver of tests/compile_fail
# (same compiler and flags): each must fail with its message, and its twin compile.
file(GLOB host_snippets CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/compile_fail/host_*.cpp)
set(host_snippet_flags -std=c++${CMAKE_CXX_STANDARD} ${TESSERA_WARNINGS})
separate_arguments(host_user_flags UNIX_COMMAND "${CMAKE_CXX_FLAGS}")
list(APPEND host_snippet_flags ${host_user_flags})
string(JOIN "|" host_flag_text ${host_snippet_flags})
foreach(snippet ${host_snippets})
  get_filename_component(name ${snippet} NAME_WE)
  add_test(NAME safety.tile_${name}
           COMMAND ${CMAKE_COMMAND} -DCOMPILER=${CMAKE_CXX_COMPILER} "-DFLAGS=${host_flag_text}"
                   -DINCLUDE=${PROJECT_SOURCE_DIR}/include -DSNIPPET=${snippet}
                   -P ${PROJECT_SOURCE_DIR}/tests/compile_fail/check_snippet.cmake)
  set_tests_properties(safety.tile_${name} PROPERTIES LABELS "cpu;compile-fail")
endforeach()

# The SIMT path's side of classes 1 (escaped storage is not a SIMT output, with the fake driver of
# tests/simt) and 3 (shared-memory sizes that wrap).
if(TARGET tessera_simt)
  tessera_test(host_simt_safety_tests
               SOURCES ${CMAKE_CURRENT_LIST_DIR}/host_simt_escape_test.cpp
                       ${CMAKE_CURRENT_LIST_DIR}/host_simt_sizes_test.cpp
               LABELS cpu DEPS tessera_simt)
  target_include_directories(host_simt_safety_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests/simt
                                                             ${PROJECT_SOURCE_DIR}/tests)
  tessera_embed_text(host_simt_safety_tests kTestKernelsSource
                     ${PROJECT_SOURCE_DIR}/tests/simt/test_kernels.cuh)
endif()

# The same classes on the GPU (label gpu): a driver OOM, escaped GPU storage, a one-block grid.
tessera_test(host_safety_gpu_tests SOURCES ${CMAKE_CURRENT_LIST_DIR}/host_gpu_test.cpp LABELS gpu)
target_include_directories(host_safety_gpu_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests)
