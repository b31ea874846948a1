# `cmake --install <build> --prefix <dir>` makes the Tessera CMake package:
#
#   <dir>/include/tessera/...                   the headers
#   <dir>/lib/libtessera_*.a                    the layers (static libraries)
#   <dir>/lib/cmake/Tessera/TesseraConfig.cmake find_package(Tessera CONFIG REQUIRED) gives
#                                               Tessera::tessera and Tessera::simt, and the
#                                               helper tessera_add_simt_kernels (TesseraSimt.cmake)
#   <dir>/bin/tessera                           the command line tool (doctor, cache, new)
#
# The package is relocatable: every path in it is relative to the folder it was installed in, so
# the folder can be moved or packed. The CUDA toolkit's headers (which our public headers include)
# and nvcc are found on the user's machine when their project finds Tessera.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TESSERA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Tessera)

get_property(tessera_layers GLOBAL PROPERTY TESSERA_LAYERS)
install(TARGETS ${tessera_layers} tessera EXPORT TesseraTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tessera DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT TesseraTargets NAMESPACE Tessera:: DESTINATION ${TESSERA_CMAKE_DIR})
if(TARGET tessera_cli)
  install(TARGETS tessera_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/TesseraConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/TesseraConfig.cmake
                              INSTALL_DESTINATION ${TESSERA_CMAKE_DIR}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a minor release may change the API, so only the same 0.minor satisfies a request.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TesseraConfig.cmake
              ${PROJECT_BINARY_DIR}/TesseraConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/TesseraSimt.cmake
              ${CMAKE_CURRENT_LIST_DIR}/tessera_simt_embed.cmake
        DESTINATION ${TESSERA_CMAKE_DIR})
