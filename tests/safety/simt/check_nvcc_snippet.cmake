# Checks one device compile-fail snippet, as tests/compile_fail/check_snippet.cmake does for the
# host compiler: compiled by nvcc as device code (PTX for sm_90a) with -DTESSERA_COMPILE_FAIL it
# must fail with the text on its first line ('// expect-error: <text>'), and without it compile.
#   cmake -DNVCC=<nvcc> -DINCLUDE=<dir> -DSNIPPET=<file.cu> -P check_nvcc_snippet.cmake
foreach(var NVCC INCLUDE SNIPPET)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_nvcc_snippet.cmake needs -D${var}=...")
  endif()
endforeach()

file(READ ${SNIPPET} head LIMIT 1000)
if(NOT head MATCHES "^// expect-error: ([^\n]+)\n")
  message(FATAL_ERROR "${SNIPPET}: the first line must be '// expect-error: <text>'")
endif()
set(expected "${CMAKE_MATCH_1}")

function(compile out_rc out_err)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C
            ${NVCC} -std=c++20 -arch=sm_90a -ptx -o /dev/null -I${INCLUDE} ${ARGN} ${SNIPPET}
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
                      "expected: ${expected}\nnvcc said:\n${err}")
endif()

compile(rc err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the twin of ${SNIPPET} (without TESSERA_COMPILE_FAIL) must compile, but:\n"
                      "${err}")
endif()
message(STATUS "${SNIPPET}: rejected by nvcc with '${expected}'; its twin compiles")
