# SIMT kernels compiled ahead of time by nvcc.
#
#   tessera_add_simt_kernels(<target> SOURCES a.cu b.cu [ARCHS 80 90a] [OPTIONS ...])
#
# compiles each .cu file with nvcc into one fatbin holding real code for every arch in ARCHS
# (default: sm_80 and sm_90a; "90a" is compiled with -gencode=arch=compute_90a,code=sm_90a) plus
# the PTX of the first arch, so newer GPUs can JIT it. The fatbins are embedded in <target> (as
# byte arrays in one generated .cpp added to its sources, which registers them before main()), and
# <target> is linked to Tessera::simt. Module::embedded() then finds every kernel by name.
#
# The .cu files see Tessera's headers and <target>'s include directories. The generated .cpp
# registers its images from a static initializer, so <target> should be an executable or a shared
# library (a static library's object can be dropped by the linker when nothing refers to it).
#
# This file is part of the installed package (find_package(Tessera) includes it) and of the
# source tree; a caller's PROJECT_SOURCE_DIR is theirs, so where Tessera's headers are is fixed
# here, when the file is included: the installed package sets TESSERA_SIMT_INCLUDE_DIR first, and
# in the source tree they are next to this folder.
if(NOT TESSERA_SIMT_INCLUDE_DIR)
  get_filename_component(TESSERA_SIMT_INCLUDE_DIR ${CMAKE_CURRENT_LIST_DIR}/../include ABSOLUTE)
endif()
set_property(GLOBAL PROPERTY TESSERA_SIMT_INCLUDE_DIR ${TESSERA_SIMT_INCLUDE_DIR})
find_program(TESSERA_NVCC nvcc HINTS /usr/local/cuda/bin ENV CUDA_HOME PATH_SUFFIXES bin
             DOC "nvcc, for SIMT kernels compiled ahead of time")

function(tessera_add_simt_kernels target)
  cmake_parse_arguments(S "" "" "SOURCES;ARCHS;OPTIONS" ${ARGN})
  if(NOT S_SOURCES)
    message(FATAL_ERROR "tessera_add_simt_kernels(${target}): no SOURCES")
  endif()
  if(NOT S_ARCHS)
    set(S_ARCHS 80 90a)
  endif()
  if(NOT TESSERA_NVCC)
    message(FATAL_ERROR "tessera_add_simt_kernels(${target}): nvcc was not found; install the "
                        "CUDA toolkit or set TESSERA_NVCC to its nvcc")
  endif()

  set(gencode)
  foreach(arch ${S_ARCHS})
    list(APPEND gencode -gencode=arch=compute_${arch},code=sm_${arch})
  endforeach()
  list(GET S_ARCHS 0 first_arch)
  list(APPEND gencode -gencode=arch=compute_${first_arch},code=compute_${first_arch})

  get_property(tessera_include GLOBAL PROPERTY TESSERA_SIMT_INCLUDE_DIR)
  set(outdir ${CMAKE_CURRENT_BINARY_DIR}/simt_${target})
  file(MAKE_DIRECTORY ${outdir})
  # The target's include directories, without the system folder (an explicit -I/usr/include would
  # reorder the host compiler's own header search under nvcc).
  set(includes "$<REMOVE_DUPLICATES:$<FILTER:$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>,EXCLUDE,^/usr/include/?$>>")
  set(fatbins)
  set(names)
  foreach(src ${S_SOURCES})
    get_filename_component(abs ${src} ABSOLUTE)
    get_filename_component(name ${src} NAME)
    set(fatbin ${outdir}/${name}.fatbin)
    add_custom_command(
      OUTPUT ${fatbin}
      COMMAND ${TESSERA_NVCC} -std=c++20 -fatbin ${gencode} -I${tessera_include}
              "$<$<BOOL:${includes}>:-I$<JOIN:${includes},;-I>>" ${S_OPTIONS}
              -MD -MF ${fatbin}.d -o ${fatbin} ${abs}
      DEPENDS ${abs}
      DEPFILE ${fatbin}.d
      COMMENT "nvcc: SIMT kernels of ${name} for ${S_ARCHS}"
      COMMAND_EXPAND_LISTS VERBATIM)
    list(APPEND fatbins ${fatbin})
    list(APPEND names ${name})
  endforeach()

  set(generated ${outdir}/simt_images.cpp)
  string(REPLACE ";" "|" inputs "${fatbins}")
  string(REPLACE ";" "|" labels "${names}")
  add_custom_command(
    OUTPUT ${generated}
    COMMAND ${CMAKE_COMMAND} -DMODE=images -DOUTPUT=${generated} "-DINPUTS=${inputs}"
            "-DNAMES=${labels}" -P ${TESSERA_SIMT_EMBED_SCRIPT}
    DEPENDS ${fatbins} ${TESSERA_SIMT_EMBED_SCRIPT}
    COMMENT "Embedding the SIMT images of ${target}"
    VERBATIM)
  target_sources(${target} PRIVATE ${generated})
  target_link_libraries(${target} PRIVATE Tessera::simt)
endfunction()

# Adds the text of `file` to <target> as `extern const char <symbol>[]`: a kernel source for
# Module::nvrtc that ships inside the program instead of being read from the source tree.
function(tessera_embed_text target symbol file)
  get_filename_component(abs ${file} ABSOLUTE)
  set(generated ${CMAKE_CURRENT_BINARY_DIR}/embed_${target}_${symbol}.cpp)
  add_custom_command(
    OUTPUT ${generated}
    COMMAND ${CMAKE_COMMAND} -DMODE=text -DOUTPUT=${generated} -DINPUTS=${abs} -DNAMES=${symbol}
            -P ${TESSERA_SIMT_EMBED_SCRIPT}
    DEPENDS ${abs} ${TESSERA_SIMT_EMBED_SCRIPT}
    VERBATIM)
  target_sources(${target} PRIVATE ${generated})
endfunction()

set(TESSERA_SIMT_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/tessera_simt_embed.cmake
    CACHE INTERNAL "script that embeds files into C++ sources")
