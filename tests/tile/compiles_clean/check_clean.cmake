# Compiles one snippet that must build without a single warning (see ../CMakeLists.txt). Run as
#   cmake -DCOMPILER=<c++> -DFLAGS=<flag|flag|...> -DINCLUDE=<dir> -DSNIPPET=<file> -P check_clean.cmake
foreach(var COMPILER FLAGS INCLUDE SNIPPET)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_clean.cmake needs -D${var}=...")
  endif()
endforeach()
string(REPLACE "|" ";" flags "${FLAGS}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C ${COMPILER} ${flags} -fsyntax-only -I${INCLUDE} ${SNIPPET}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT "${out}${err}" STREQUAL "")
  message(FATAL_ERROR "${SNIPPET} must compile without warnings with ${COMPILER}, but:\n${out}${err}")
endif()
message(STATUS "${SNIPPET}: no warnings with ${COMPILER}")
