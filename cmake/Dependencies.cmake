# Every dependency is found the standard way; a missing one names the Debian package to install.

# LLVM's version file accepts only an exact major.minor, so the major version is checked here.
find_package(LLVM CONFIG QUIET HINTS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
if(NOT LLVM_FOUND OR NOT LLVM_VERSION_MAJOR EQUAL 19)
  message(FATAL_ERROR "LLVM 19 not found. Install it with: apt-get install llvm-19-dev "
                      "(or run scripts/test.sh, which installs what is missing).")
endif()
message(STATUS "LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
# The LLVM libraries each part links, statically (the GPU machine and users' machines may have no LLVM).
llvm_map_components_to_libnames(PTXJIT_COMPILER_LLVM_LIBS core passes native bitreader linker ipo
  nvptxcodegen nvptxdesc nvptxinfo)
llvm_map_components_to_libnames(PTXJIT_JIT_LLVM_LIBS orcjit native)

find_package(CUDAToolkit QUIET)
if(NOT CUDAToolkit_FOUND)
  message(FATAL_ERROR "CUDA toolkit not found. Install the CUDA toolkit (headers, nvvm/libdevice, "
                      "ptxas) under /usr/local/cuda or pass -DCUDAToolkit_ROOT=<dir>.")
endif()
find_file(PTXJIT_LIBDEVICE libdevice.10.bc
  HINTS "${CUDAToolkit_BIN_DIR}/../nvvm/libdevice" "${CUDAToolkit_LIBRARY_ROOT}/nvvm/libdevice"
  NO_DEFAULT_PATH)
if(NOT PTXJIT_LIBDEVICE)
  message(FATAL_ERROR "libdevice.10.bc not found under ${CUDAToolkit_BIN_DIR}/../nvvm/libdevice: "
                      "the CUDA toolkit installation is incomplete.")
endif()
message(STATUS "CUDA toolkit ${CUDAToolkit_VERSION}, libdevice ${PTXJIT_LIBDEVICE}")

find_program(PTXJIT_PTXAS ptxas HINTS "${CUDAToolkit_BIN_DIR}")
if(NOT PTXJIT_PTXAS)
  message(STATUS "ptxas not found: [ptx] tests will skip their ptxas check")
endif()

find_path(PTXJIT_DLPACK_INCLUDE dlpack/dlpack.h)
if(NOT PTXJIT_DLPACK_INCLUDE)
  message(FATAL_ERROR "DLPack not found. Install it with: apt-get install libdlpack-dev")
endif()

if(PTXJIT_BUILD_TESTS)
  find_package(Catch2 2 QUIET)
  if(NOT Catch2_FOUND)
    message(FATAL_ERROR "Catch2 2 not found. Install it with: apt-get install catch2")
  endif()
  include(Catch)
endif()
