# Writes ${OUTPUT}: PTXJIT_SOURCE_HASH, a hash of every source file of the library, so that the
# compile cache never serves code an older build of ptxjit made (run by jit/CMakeLists.txt
# whenever one of them changes). SOURCES is the list of files, one per line, in ${LIST_FILE}.
file(STRINGS "${LIST_FILE}" sources)
set(hashes "")
foreach(source IN LISTS sources)
  file(SHA256 "${source}" hash)
  string(APPEND hashes "${hash}")
endforeach()
string(SHA256 combined "${hashes}")
string(SUBSTRING "${combined}" 0 32 combined)
set(content "#define PTXJIT_SOURCE_HASH \"${combined}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" previous)
endif()
if(NOT previous STREQUAL content)
  file(WRITE "${OUTPUT}" "${content}")
endif()
