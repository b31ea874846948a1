# cmake -DNM=<nm> -DUSER=<lib.a> -DUSED=<lib.a> -P check_symbols.cmake
# Fails, naming the symbols, when an object of USER references a symbol that USED defines (a
# strong definition: inline functions and templates, defined weakly in both, are no dependency).
function(symbols out archive)
  execute_process(COMMAND ${NM} -g ${ARGN} ${archive} OUTPUT_VARIABLE text RESULT_VARIABLE rc
                  ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${archive}")
  endif()
  string(REPLACE "\n" ";" lines "${text}")
  set(names)
  foreach(l IN LISTS lines)
    # "<address> T name" for a definition, "U name" for a reference; W/V/u are weak or unique.
    if(l MATCHES "^[0-9a-fA-F ]* ([TDBRU]) (.+)$")
      list(APPEND names "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES names)
  set(${out} ${names} PARENT_SCOPE)
endfunction()

symbols(defined ${USED} --defined-only)
symbols(referenced ${USER} --undefined-only)
list(LENGTH defined n_defined)
list(LENGTH referenced n_referenced)
if(n_defined LESS 10)
  message(FATAL_ERROR "${USED} defines only ${n_defined} symbols: is it the right archive?")
endif()
# referenced ∩ defined, as referenced minus (referenced minus defined).
set(outside ${referenced})
list(REMOVE_ITEM outside ${defined})
set(crossing ${referenced})
if(outside)
  list(REMOVE_ITEM crossing ${outside})
endif()
if(crossing)
  string(REPLACE ";" "\n  " crossing "${crossing}")
  message(FATAL_ERROR "${USER} uses symbols of ${USED}, against the layering (DESIGN §3):\n  "
                      "${crossing}\n(c++filt demangles them)")
endif()
message(STATUS "${USER}: ${n_referenced} external references, none into ${USED} "
               "(${n_defined} symbols)")
