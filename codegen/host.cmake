# Host lowering through the LLVM C API and LLVM 16's BPF backend
# (llvm_host.h). Links the shared libLLVM-16 (the GPU machine has
# libLLVM-16.so.1, not the static archives), libelf for -d bpf, and
# libbpf for the tests that open and load the objects.
find_program(GPUX_LLVM_CONFIG NAMES llvm-config-16 llvm-config
             HINTS /usr/lib/llvm-16/bin)
if(NOT GPUX_LLVM_CONFIG)
  message(FATAL_ERROR "llvm-config (LLVM 16) not found: apt-get install llvm-16-dev")
endif()
execute_process(COMMAND ${GPUX_LLVM_CONFIG} --version
                OUTPUT_VARIABLE llvm_version OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT llvm_version MATCHES "^16\\.")
  message(FATAL_ERROR "LLVM ${llvm_version} found; gpux needs LLVM 16 (llvm-16-dev)")
endif()
execute_process(COMMAND ${GPUX_LLVM_CONFIG} --includedir
                OUTPUT_VARIABLE llvm_inc OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND ${GPUX_LLVM_CONFIG} --libdir
                OUTPUT_VARIABLE llvm_libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
find_library(GPUX_LLVM_LIB NAMES LLVM-16 HINTS ${llvm_libdir} NO_DEFAULT_PATH)
find_library(GPUX_ELF_LIB elf)
find_library(GPUX_BPF_LIB bpf)
if(NOT GPUX_LLVM_LIB OR NOT GPUX_ELF_LIB)
  message(FATAL_ERROR "libLLVM-16 or libelf missing: apt-get install llvm-16-dev libelf-dev")
endif()

# One set of objects, two products: a static library for the tests and
# the module gpux loads (dlopen) only when a program has host or driver
# probes, so a device one-liner or -d ast never pays for loading LLVM.
add_library(gpux_host_objs OBJECT
  ${CMAKE_CURRENT_LIST_DIR}/host_module.c
  ${CMAKE_CURRENT_LIST_DIR}/host_btf.c
  ${CMAKE_CURRENT_LIST_DIR}/host_maps.c
  ${CMAKE_CURRENT_LIST_DIR}/host_probe.c
  ${CMAKE_CURRENT_LIST_DIR}/host_expr.c
  ${CMAKE_CURRENT_LIST_DIR}/host_stmt.c
  ${CMAKE_CURRENT_LIST_DIR}/host_output.c
  ${CMAKE_CURRENT_LIST_DIR}/host_abi.c
  ${CMAKE_CURRENT_LIST_DIR}/host_dump.c)
# Running in the kernel (host_live.h) needs libbpf; without it gpux says
# that this build cannot attach probes.
if(GPUX_BPF_LIB)
  target_sources(gpux_host_objs PRIVATE
    ${CMAKE_CURRENT_LIST_DIR}/host_live.c
    ${CMAKE_CURRENT_LIST_DIR}/host_path.c)
else()
  set(GPUX_BPF_LIB "")
endif()
set_target_properties(gpux_host_objs PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_include_directories(gpux_host_objs PUBLIC ${CMAKE_CURRENT_LIST_DIR})
# LLVM's headers are system headers: their warnings are not ours.
target_include_directories(gpux_host_objs SYSTEM PRIVATE ${llvm_inc})
target_link_libraries(gpux_host_objs PUBLIC gpux_codegen gpux_lang)

add_library(gpux_host STATIC $<TARGET_OBJECTS:gpux_host_objs>)
target_include_directories(gpux_host PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(gpux_host PUBLIC gpux_codegen gpux_lang
                      ${GPUX_LLVM_LIB} ${GPUX_ELF_LIB} ${GPUX_BPF_LIB})

# The module takes the front end and codegen symbols from the gpux
# executable (exported with ENABLE_EXPORTS), so both share one catalog.
add_library(gpux-host MODULE $<TARGET_OBJECTS:gpux_host_objs>)
target_link_libraries(gpux-host PRIVATE ${GPUX_LLVM_LIB} ${GPUX_ELF_LIB} ${GPUX_BPF_LIB})
set_target_properties(gpux-host PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/cli)
install(TARGETS gpux-host LIBRARY DESTINATION lib/gpux)
set(GPUX_HOST_LLVM ON CACHE INTERNAL "host lowering built")
