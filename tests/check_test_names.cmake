# Fails when a CTest name carries a gtest parameter's printed value ("# GetParam() = ...", a byte
# dump for a struct). Run as cmake -DBUILD=<build dir> -P check_test_names.cmake
execute_process(COMMAND ${CMAKE_CTEST_COMMAND} --test-dir ${BUILD} -N
                OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ctest -N failed in ${BUILD}")
endif()
string(REGEX MATCHALL "Test +#[0-9]+: [^\n]*(GetParam|byte object)[^\n]*" bad "${listing}")
list(LENGTH bad count)
if(count GREATER 0)
  list(GET bad 0 first)
  message(FATAL_ERROR "${count} test names carry a parameter's value, e.g.\n  ${first}\n"
                      "name the cases (a gtest name generator) and keep NO_PRETTY_VALUES")
endif()
string(REGEX MATCHALL "Test +#[0-9]+:" all "${listing}")
list(LENGTH all total)
message(STATUS "${total} test names, none with a parameter's value")
