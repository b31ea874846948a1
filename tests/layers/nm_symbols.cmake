# nm_symbols(<out> <file> [nm options...]): the names nm lists in <file> as strong definitions
# (T, D, B, R) or, with --undefined-only, as references (U). Weak and unique symbols (W, V, u:
# inline functions and templates, defined in every user) are left out: they are no dependency.
function(nm_symbols out file)
  execute_process(COMMAND ${NM} -g ${ARGN} ${file} OUTPUT_VARIABLE text RESULT_VARIABLE rc
                  ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${file}")
  endif()
  string(REPLACE "\n" ";" lines "${text}")
  set(names)
  foreach(l IN LISTS lines)
    # "<address> T name" for a definition, "U name" for a reference.
    if(l MATCHES "^[0-9a-fA-F ]* ([TDBRU]) (.+)$")
      list(APPEND names "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES names)
  set(${out} ${names} PARENT_SCOPE)
endfunction()

# list_intersection(<out> <list a> <list b>): the items of a that b holds too, as a minus
# (a minus b).
function(list_intersection out a b)
  set(outside ${${a}})
  if(${b})
    list(REMOVE_ITEM outside ${${b}})
  endif()
  set(both ${${a}})
  if(outside)
    list(REMOVE_ITEM both ${outside})
  endif()
  set(${out} ${both} PARENT_SCOPE)
endfunction()
