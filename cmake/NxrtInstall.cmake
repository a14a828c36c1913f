# Install rules and the exported CMake package. Consumers write
#   find_package(nxrt 0.1 REQUIRED)  target_link_libraries(app PRIVATE nxrt::nxrt)
# or use pkg-config (`pkg-config --cflags --libs nxrt`). nxrt::nxrt_cli is the `nxrt` tool and
# nxrt::nxrt_fortran the Fortran module library (present when nxrt was built with a Fortran compiler).
include(CMakePackageConfigHelpers)

set(NXRT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/nxrt)

install(TARGETS nxrt EXPORT nxrtTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/nxrt/nxrt.h ${PROJECT_SOURCE_DIR}/include/nxrt/nxrt_api.h
              ${PROJECT_SOURCE_DIR}/include/nxrt/nxrt.hpp ${PROJECT_SOURCE_DIR}/include/nxrt/nxrt_genai.h
              ${PROJECT_SOURCE_DIR}/include/nxrt/nxrt_genai.hpp ${PROJECT_SOURCE_DIR}/include/nxrt/nxrt_values.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/nxrt)
if(TARGET nxrt_cli)
  install(TARGETS nxrt_cli EXPORT nxrtTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
if(TARGET nxrt_fortran)
  install(TARGETS nxrt_fortran EXPORT nxrtTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${NXRT_FORTRAN_MODULE_DIR}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/nxrt/fortran
          FILES_MATCHING PATTERN "*.mod")
  install(FILES ${PROJECT_SOURCE_DIR}/fortran/nxrt.f90 DESTINATION ${CMAKE_INSTALL_DATADIR}/nxrt/fortran)
endif()

install(EXPORT nxrtTargets NAMESPACE nxrt:: DESTINATION ${NXRT_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/nxrtConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/nxrtConfig.cmake
                              INSTALL_DESTINATION ${NXRT_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/nxrtConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/nxrtConfig.cmake ${PROJECT_BINARY_DIR}/nxrtConfigVersion.cmake
        DESTINATION ${NXRT_INSTALL_CMAKEDIR})

# The .pc file finds its prefix relative to itself, so an installed tree may be moved (or installed with --prefix).
file(RELATIVE_PATH NXRT_PC_PREFIX_FROM_PCFILEDIR /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
configure_file(${PROJECT_SOURCE_DIR}/cmake/nxrt.pc.in ${PROJECT_BINARY_DIR}/nxrt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/nxrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
