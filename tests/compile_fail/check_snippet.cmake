# Checks one compile-fail snippet (see CMakeLists.txt). Run as
#   cmake -DCOMPILER=<c++> -DFLAGS=<flag|flag|...> -DINCLUDE=<dir> -DSNIPPET=<file> -P check_snippet.cmake
foreach(var COMPILER FLAGS INCLUDE SNIPPET)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_snippet.cmake needs -D${var}=...")
  endif()
endforeach()
string(REPLACE "|" ";" flags "${FLAGS}")

# The snippet opens with one or more '// expect-error: <text>' lines; the compiler's output must
# hold every <text>. Texts are parts that every compiler prints: our own static_assert messages,
# or, for the language's own errors, the words GCC and clang share. Where they share none, a line
# may give alternatives, '<text> || <text>', one of which must appear.
# (file(READ), not file(STRINGS): the expected text may hold a ';', which a list would split; it
# travels through the lists below as <semicolon>.)
file(READ ${SNIPPET} head LIMIT 2000)
set(expected_lines)
while(head MATCHES "^// expect-error: ([^\n]+)\n")
  string(LENGTH "${CMAKE_MATCH_0}" consumed)
  string(REPLACE ";" "<semicolon>" line "${CMAKE_MATCH_1}")
  list(APPEND expected_lines "${line}")
  string(SUBSTRING "${head}" ${consumed} -1 head)
endwhile()
if(NOT expected_lines)
  message(FATAL_ERROR "${SNIPPET}: the first line must be '// expect-error: <text>'")
endif()
# Then, optionally, '// expect-at-most-lines: <n>': the compiler's whole output is at most n lines
# long, so that a mistake gets one message rather than a list of every overload that was tried.
set(max_lines "")
if(head MATCHES "^// expect-at-most-lines: ([0-9]+)\n")
  set(max_lines ${CMAKE_MATCH_1})
endif()
string(JOIN "' and '" expected ${expected_lines})
string(REPLACE "<semicolon>" ";" expected "${expected}")

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
foreach(line IN LISTS expected_lines)
  set(found FALSE)
  string(REPLACE " || " ";" alternatives "${line}")
  foreach(text IN LISTS alternatives)
    string(REPLACE "<semicolon>" ";" text "${text}")
    string(FIND "${err}" "${text}" at)
    if(NOT at EQUAL -1)
      set(found TRUE)
    endif()
  endforeach()
  string(REPLACE "<semicolon>" ";" line "${line}")
  if(NOT found)
    message(FATAL_ERROR "${SNIPPET} failed to compile, but without the expected message\n"
                        "expected: ${line}\ncompiler said:\n${err}")
  endif()
endforeach()

if(max_lines)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines line_count)
  if(line_count GREATER max_lines)
    message(FATAL_ERROR "${SNIPPET} was rejected with the expected message, but in ${line_count} "
                        "lines of compiler output (at most ${max_lines} expected):\n${err}")
  endif()
endif()

compile(rc err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the twin of ${SNIPPET} (without TESSERA_COMPILE_FAIL) must compile, but:\n"
                      "${err}")
endif()
message(STATUS "${SNIPPET}: rejected with '${expected}'; its twin compiles")
