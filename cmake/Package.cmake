# The library users link (ptxjit::ptxjit, libptxjit.a or, with PTXJIT_SHARED, libptxjit.so) and
# its CMake package. Both are made of the same objects as ptxjit_internal, which the tests, the
# differential tester and the benchmark link: static, with the runtime's internal headers.

set(PTXJIT_OBJECT_LIBRARIES ptxjit_target ptxjit_runtime ptxjit_compiler ptxjit_jit)

add_library(ptxjit_internal STATIC)
target_link_libraries(ptxjit_internal PUBLIC ${PTXJIT_OBJECT_LIBRARIES})

if(PTXJIT_SHARED)
  add_library(ptxjit SHARED)
  # LLVM and every internal symbol stay inside: the version script exports ptxjit's API, which
  # the public headers mark visible (everything else is compiled hidden).
  set(PTXJIT_EXPORT_MAP ${PROJECT_SOURCE_DIR}/cmake/ptxjit.map)
  target_link_options(ptxjit PRIVATE -Wl,--version-script=${PTXJIT_EXPORT_MAP} -Wl,--no-undefined)
  set_target_properties(ptxjit PROPERTIES LINK_DEPENDS ${PTXJIT_EXPORT_MAP} VERSION ${PROJECT_VERSION}
                                          SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
else()
  add_library(ptxjit STATIC)
  # What the objects of libptxjit.a need where a user links it.
  target_link_libraries(ptxjit INTERFACE
    $<INSTALL_INTERFACE:${PTXJIT_COMPILER_LLVM_LIBS};${PTXJIT_JIT_LLVM_LIBS};Threads::Threads;${CMAKE_DL_LIBS}>)
endif()
target_link_libraries(ptxjit PUBLIC ptxjit_headers)
foreach(objects ${PTXJIT_OBJECT_LIBRARIES})
  target_link_libraries(ptxjit PRIVATE $<BUILD_INTERFACE:${objects}>)
endforeach()
add_library(ptxjit::ptxjit ALIAS ptxjit)

if(PTXJIT_INSTALL)
  include(CMakePackageConfigHelpers)
  set(PTXJIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ptxjit)
  install(TARGETS ptxjit ptxjit_headers EXPORT ptxjitTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES ${PROJECT_BINARY_DIR}/include/ptxjit/Version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ptxjit)
  install(FILES LICENSE CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
  install(EXPORT ptxjitTargets NAMESPACE ptxjit:: DESTINATION ${PTXJIT_CMAKE_DIR})
  configure_package_config_file(cmake/ptxjitConfig.cmake.in ${PROJECT_BINARY_DIR}/ptxjitConfig.cmake
                                INSTALL_DESTINATION ${PTXJIT_CMAKE_DIR})
  # 0.x: a minor release may change the API.
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/ptxjitConfigVersion.cmake
                                   COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/ptxjitConfig.cmake ${PROJECT_BINARY_DIR}/ptxjitConfigVersion.cmake
          DESTINATION ${PTXJIT_CMAKE_DIR})
endif()
