# Checks one compile-fail snippet (see CMakeLists.txt). Run as
#   cmake -DCOMPILER=<c++> -DFLAGS=<flag|flag|...> -DINCLUDE=<dir> -DSNIPPET=<file> -P check_snippet.cmake
foreach(var COMPILER FLAGS INCLUDE SNIPPET)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_snippet.cmake needs -D${var}=...")
  endif()
endforeach()
string(REPLACE "|" ";" flags "${FLAGS}")

# (file(READ), not file(STRINGS): the expected text may hold a ';', which a list would split.)
file(READ ${SNIPPET} head LIMIT 1000)
if(NOT head MATCHES "^// expect-error: ([^\n]+)\n")
  message(FATAL_ERROR "${SNIPPET}: the first line must be '// expect-error: <text>'")
endif()
set(expected "${CMAKE_MATCH_1}")

# LC_ALL=C: plain quotes in the compiler's messages, whatever the machine's locale.
function(compile out_rc out_err)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C
            ${COMPILER} ${flags} -fsyntax-only -I${INCLUDE} ${ARGN} ${SNIPPET}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_err} "${out}${err}" PARENT_SCOPE)
endfunction()

compile(rc err -DTESSERA_COMPILE_FAIL)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SNIPPET} compiled, but must not (expected: ${expected})")
endif()
string(FIND "${err}" "${expected}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${SNIPPET} failed to compile, but without the expected message\n"
                      "expected: ${expected}\ncompiler said:\n${err}")
endif()

compile(rc err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the twin of ${SNIPPET} (without TESSERA_COMPILE_FAIL) must compile, but:\n"
                      "${err}")
endif()
message(STATUS "${SNIPPET}: rejected with '${expected}'; its twin compiles")
