# Classes 1 and 3 of issue 10 (tests/safety/CMakeLists.txt):
#   host back doors into storage a launch owns   host_back_door_test.cpp, compile_fail/host_*.cpp
#   shape, size and tile arithmetic that overflows, allocation failure   host_overflow_test.cpp
tessera_test(host_safety_tests SOURCES ${CMAKE_CURRENT_LIST_DIR}/host_overflow_test.cpp
             LABELS cpu)
target_include_directories(host_safety_tests PRIVATE ${PROJECT_SOURCE_DIR}/tests)
