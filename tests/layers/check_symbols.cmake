# cmake -DNM=<nm> -DUSER=<lib.a> -DUSED=<lib.a> -P check_symbols.cmake
# Fails, naming the symbols, when an object of USER references a symbol that USED defines (a
# strong definition: inline functions and templates, defined weakly in both, are no dependency).
include(${CMAKE_CURRENT_LIST_DIR}/nm_symbols.cmake)

nm_symbols(defined ${USED} --defined-only)
nm_symbols(referenced ${USER} --undefined-only)
list(LENGTH defined n_defined)
list(LENGTH referenced n_referenced)
if(n_defined LESS 10)
  message(FATAL_ERROR "${USED} defines only ${n_defined} symbols: is it the right archive?")
endif()
list_intersection(crossing referenced defined)
if(crossing)
  string(REPLACE ";" "\n  " crossing "${crossing}")
  message(FATAL_ERROR "${USER} uses symbols of ${USED}, against the layering (DESIGN §3):\n  "
                      "${crossing}\n(c++filt demangles them)")
endif()
message(STATUS "${USER}: ${n_referenced} external references, none into ${USED} "
               "(${n_defined} symbols)")
