# cmake -DNM=<nm> -DPROGRAM=<executable> -DUSED=<lib.a> -DEXPECT=absent|present -P check_linked.cmake
# Whether a linked program holds code of USED: the functions and data USED defines (strong
# definitions: inline functions and templates, defined weakly everywhere, say nothing) that the
# program defines too. EXPECT=absent fails naming them; EXPECT=present fails when there is none.
include(${CMAKE_CURRENT_LIST_DIR}/nm_symbols.cmake)

nm_symbols(in_used ${USED} --defined-only)
nm_symbols(in_program ${PROGRAM} --defined-only)
list(LENGTH in_used n_used)
if(n_used LESS 10)
  message(FATAL_ERROR "${USED} defines only ${n_used} symbols: is it the right archive?")
endif()
list_intersection(shared in_program in_used)
list(LENGTH shared n_shared)
if(EXPECT STREQUAL "absent" AND shared)
  string(REPLACE ";" "\n  " shared "${shared}")
  message(FATAL_ERROR "${PROGRAM} holds code of ${USED}:\n  ${shared}\n(c++filt demangles them)")
elseif(EXPECT STREQUAL "present" AND NOT shared)
  message(FATAL_ERROR "${PROGRAM} holds none of the ${n_used} symbols ${USED} defines")
endif()
message(STATUS "${PROGRAM}: ${n_shared} of the ${n_used} symbols ${USED} defines")
