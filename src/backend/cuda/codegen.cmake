# The CUDA code generator's device runtime (device/*.cuh) is written as real CUDA headers and
# embedded into the library at build time, as one string that starts every generated kernel
# (after abi.hpp's text). Included from src/backend/cuda/CMakeLists.txt once the target exists:
#
#   include(codegen.cmake)
#
# The same file is the embedding script: `cmake -DOUT=<file.cpp> -DFILES=<a|b|...> -P codegen.cmake`
# writes the C++ file that defines device_runtime_source() (codegen_runtime.hpp).

if(CMAKE_SCRIPT_MODE_FILE)
  string(REPLACE "|" ";" files "${FILES}")
  set(text "")
  foreach(file IN LISTS files)
    file(READ "${file}" content)
    # One translation unit: include guards of separate headers mean nothing here.
    string(REPLACE "#pragma once\n" "" content "${content}")
    get_filename_component(name "${file}" NAME)
    string(APPEND text "// ---- ${name} ----\n${content}\n")
  endforeach()
  file(WRITE "${OUT}.tmp"
       "// Generated from src/backend/cuda/device/*.cuh by src/backend/cuda/codegen.cmake; do not edit.\n"
       "#include \"codegen_runtime.hpp\"\n\n"
       "namespace tessera::backend::cuda::detail {\n\n"
       "std::string_view device_runtime_source() {\n"
       "  return R\"tessera_device(${text})tessera_device\";\n"
       "}\n\n"
       "}  // namespace tessera::backend::cuda::detail\n")
  file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
  file(REMOVE "${OUT}.tmp")
  return()
endif()

# In the order they are concatenated: each part uses only the ones before it.
set(tessera_device_runtime
    ${CMAKE_CURRENT_LIST_DIR}/device/tessera_scalar.cuh
    ${CMAKE_CURRENT_LIST_DIR}/device/tessera_memory.cuh
    ${CMAKE_CURRENT_LIST_DIR}/device/tessera_mma.cuh
    ${CMAKE_CURRENT_LIST_DIR}/device/tessera_hopper.cuh
    ${CMAKE_CURRENT_LIST_DIR}/device/tessera_ampere.cuh)
set(tessera_device_runtime_cpp ${CMAKE_CURRENT_BINARY_DIR}/codegen_device_runtime.cpp)
string(REPLACE ";" "|" tessera_device_runtime_arg "${tessera_device_runtime}")
add_custom_command(
  OUTPUT ${tessera_device_runtime_cpp}
  COMMAND ${CMAKE_COMMAND} -DOUT=${tessera_device_runtime_cpp}
          "-DFILES=${tessera_device_runtime_arg}" -P ${CMAKE_CURRENT_LIST_FILE}
  DEPENDS ${tessera_device_runtime} ${CMAKE_CURRENT_LIST_FILE}
  COMMENT "Embedding the CUDA device runtime"
  VERBATIM)
target_sources(tessera_cuda_codegen PRIVATE ${tessera_device_runtime_cpp})
target_include_directories(tessera_cuda_codegen PRIVATE ${CMAKE_CURRENT_LIST_DIR})
