# Host lowering through the LLVM C API and LLVM 16's BPF backend
# (llvm_host.h). Links the shared libLLVM-16 (the GPU machine has
# libLLVM-16.so.1, not the static archives), libelf for -d bpf and the
# uprobe targets' symbols, and libbpf (GPUX_WITH_LIBBPF) for attaching,
# for reading the driver's BTF (host_bind.c) and for the tests that open
# and load the objects.
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
if(NOT GPUX_LLVM_LIB OR NOT GPUX_ELF_LIB)
  message(FATAL_ERROR "libLLVM-16 or libelf missing: apt-get install llvm-16-dev libelf-dev")
endif()
# Running in the kernel (kattach.h) and binding driver probes to the
# driver's BTF need libbpf; without it gpux compiles every program (driver
# probes against the built-in ABIs) but says that it cannot attach.
set(gpux_bpf_lib "")
if(GPUX_WITH_LIBBPF)
  find_library(GPUX_BPF_LIB bpf)
  if(GPUX_BPF_LIB)
    set(gpux_bpf_lib ${GPUX_BPF_LIB})
  else()
    message(STATUS "libbpf not found: this gpux cannot attach uprobes or tracepoints "
                   "(apt-get install libbpf-dev)")
  endif()
else()
  message(STATUS "GPUX_WITH_LIBBPF=OFF: this gpux cannot attach uprobes or tracepoints")
endif()
if(gpux_bpf_lib)
  set(GPUX_HOST_LIBBPF ON CACHE INTERNAL "libgpux-host.so attaches through libbpf")
else()
  set(GPUX_HOST_LIBBPF OFF CACHE INTERNAL "libgpux-host.so attaches through libbpf")
endif()

# One set of objects, two products: a static library for the tests and
# the module gpux loads (dlopen) only when a program has host or driver
# probes, so a device one-liner or -d ast never pays for loading LLVM.
add_library(gpux_host_objs OBJECT
  ${CMAKE_CURRENT_LIST_DIR}/host_module.c
  ${CMAKE_CURRENT_LIST_DIR}/host_passes.c
  ${CMAKE_CURRENT_LIST_DIR}/host_index.c
  ${CMAKE_CURRENT_LIST_DIR}/host_btf.c
  ${CMAKE_CURRENT_LIST_DIR}/host_btf_maps.c
  ${CMAKE_CURRENT_LIST_DIR}/host_maps.c
  ${CMAKE_CURRENT_LIST_DIR}/host_syms.c
  ${CMAKE_CURRENT_LIST_DIR}/host_uses.c
  ${CMAKE_CURRENT_LIST_DIR}/host_usdt_lower.c
  ${CMAKE_CURRENT_LIST_DIR}/host_watch.c
  ${CMAKE_CURRENT_LIST_DIR}/host_probe.c
  ${CMAKE_CURRENT_LIST_DIR}/host_capture.c
  ${CMAKE_CURRENT_LIST_DIR}/host_expr.c
  ${CMAKE_CURRENT_LIST_DIR}/host_fns.c
  ${CMAKE_CURRENT_LIST_DIR}/host_memory.c
  ${CMAKE_CURRENT_LIST_DIR}/host_stacks.c
  ${CMAKE_CURRENT_LIST_DIR}/host_stmt.c
  ${CMAKE_CURRENT_LIST_DIR}/host_output.c
  ${CMAKE_CURRENT_LIST_DIR}/host_dump.c)
if(GPUX_HOST_LIBBPF)
  target_sources(gpux_host_objs PRIVATE ${PROJECT_SOURCE_DIR}/attach/kattach.c
                 ${PROJECT_SOURCE_DIR}/attach/kattach_watch.c
                 ${PROJECT_SOURCE_DIR}/attach/kattach_iter.c
                 ${PROJECT_SOURCE_DIR}/attach/kattach_driver.c
                 ${PROJECT_SOURCE_DIR}/attach/kattach_verdict.c
                 ${PROJECT_SOURCE_DIR}/attach/kattach_features.c
                 ${CMAKE_CURRENT_LIST_DIR}/host_bind.c
                 ${CMAKE_CURRENT_LIST_DIR}/host_btf_lib.c)
endif()
set_target_properties(gpux_host_objs PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_include_directories(gpux_host_objs PUBLIC ${CMAKE_CURRENT_LIST_DIR}
                           ${PROJECT_SOURCE_DIR}/attach)
# LLVM's headers are system headers: their warnings are not ours.
target_include_directories(gpux_host_objs SYSTEM PRIVATE ${llvm_inc})
target_link_libraries(gpux_host_objs PUBLIC gpux_codegen gpux_lang gpux_symbols)

add_library(gpux_host STATIC $<TARGET_OBJECTS:gpux_host_objs>)
target_include_directories(gpux_host PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${PROJECT_SOURCE_DIR}/attach)
target_link_libraries(gpux_host PUBLIC gpux_codegen gpux_lang gpux_symbols
                      ${GPUX_LLVM_LIB} ${GPUX_ELF_LIB} ${gpux_bpf_lib})

# The module takes the front end and codegen symbols from the gpux
# executable (exported with ENABLE_EXPORTS), so both share one catalog.
add_library(gpux-host MODULE $<TARGET_OBJECTS:gpux_host_objs>)

# The module carries libbpf inside it: the GPU machine (Ubuntu 24.04) has
# libLLVM-16, libelf and libz but no libbpf.so.1. Debian's libbpf.a is
# built -fPIE, not -fPIC: its one reference to a data symbol outside it,
# stderr (libbpf.o's default print function), is a PC32 relocation that
# a shared object cannot hold. So a copy of the archive in the build
# tree has that reference renamed to gpux_libbpf_stderr, a hidden
# pointer in the module set to stderr when it loads; every other
# reference is to libbpf itself or a call through the PLT. A test link
# of a shared object with the whole copy in it decides: if it fails, the
# module takes libbpf.so.1 as before (and so it does without libbpf.a,
# or with -DGPUX_BPF_STATIC=OFF).
option(GPUX_BPF_STATIC "Link libbpf.a into libgpux-host.so" ON)
set(GPUX_HOST_BPF_LIBS ${gpux_bpf_lib})
if(GPUX_HOST_LIBBPF AND GPUX_BPF_STATIC)
  find_library(GPUX_BPF_ARCHIVE NAMES libbpf.a)
  find_library(GPUX_Z_LIB z)
  set(bpf_dir ${CMAKE_BINARY_DIR}/libbpf-static)
  set(bpf_rc 1)
  set(bpf_err "libbpf.a, libz, ar or objcopy not found")
  if(GPUX_BPF_ARCHIVE AND GPUX_Z_LIB AND CMAKE_AR AND CMAKE_OBJCOPY)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${GPUX_BPF_ARCHIVE})
    set(bpf_rc 0)
    set(bpf_from "")
    if(EXISTS ${bpf_dir}/from)
      file(READ ${bpf_dir}/from bpf_from)
    endif()
    if(NOT EXISTS ${bpf_dir}/libbpf.a OR NOT bpf_from STREQUAL GPUX_BPF_ARCHIVE OR
       ${GPUX_BPF_ARCHIVE} IS_NEWER_THAN ${bpf_dir}/libbpf.a)
      file(REMOVE_RECURSE ${bpf_dir})
      file(MAKE_DIRECTORY ${bpf_dir}/o)
      execute_process(COMMAND ${CMAKE_AR} x ${GPUX_BPF_ARCHIVE}
                      WORKING_DIRECTORY ${bpf_dir}/o RESULT_VARIABLE bpf_rc
                      ERROR_VARIABLE bpf_err)
      file(GLOB bpf_objs ${bpf_dir}/o/*.o)
      foreach(obj IN LISTS bpf_objs)
        if(bpf_rc EQUAL 0)
          execute_process(COMMAND ${CMAKE_OBJCOPY}
                          --redefine-sym stderr=gpux_libbpf_stderr ${obj}
                          RESULT_VARIABLE bpf_rc ERROR_VARIABLE bpf_err)
        endif()
      endforeach()
      if(bpf_rc EQUAL 0)
        execute_process(COMMAND ${CMAKE_AR} rcs ${bpf_dir}/tmp.a ${bpf_objs}
                        RESULT_VARIABLE bpf_rc ERROR_VARIABLE bpf_err)
      endif()
      if(bpf_rc EQUAL 0)
        file(RENAME ${bpf_dir}/tmp.a ${bpf_dir}/libbpf.a)
        file(WRITE ${bpf_dir}/from "${GPUX_BPF_ARCHIVE}")
        file(REMOVE_RECURSE ${bpf_dir}/o)
      endif()
    endif()
    file(CONFIGURE OUTPUT ${bpf_dir}/bpf_stderr.c CONTENT
"/* Generated by codegen/host.cmake: stderr for the copy of libbpf.a. */
#include <stdio.h>
__attribute__((visibility(\"hidden\"))) FILE *gpux_libbpf_stderr;
__attribute__((constructor)) static void gpux_libbpf_stderr_init(void)
{
\tgpux_libbpf_stderr = stderr;
}
" @ONLY)
    file(CONFIGURE OUTPUT ${bpf_dir}/try.c CONTENT
"#include <bpf/libbpf.h>
int try_bpf(void) { return (int)libbpf_major_version(); }
" @ONLY)
    if(bpf_rc EQUAL 0)
      execute_process(COMMAND ${CMAKE_C_COMPILER} -shared -fPIC
                      -o ${bpf_dir}/try.so ${bpf_dir}/try.c ${bpf_dir}/bpf_stderr.c
                      -Wl,--whole-archive ${bpf_dir}/libbpf.a -Wl,--no-whole-archive
                      ${GPUX_ELF_LIB} ${GPUX_Z_LIB}
                      -Wl,--exclude-libs,ALL -Wl,--no-undefined
                      RESULT_VARIABLE bpf_rc OUTPUT_QUIET ERROR_VARIABLE bpf_err)
    endif()
  endif()
  if(bpf_rc EQUAL 0)
    message(STATUS "libgpux-host.so links libbpf statically (${GPUX_BPF_ARCHIVE})")
    set(GPUX_HOST_BPF_LIBS ${bpf_dir}/libbpf.a ${GPUX_Z_LIB})
    target_sources(gpux-host PRIVATE ${bpf_dir}/bpf_stderr.c)
    # libbpf's symbols stay inside the module.
    target_link_options(gpux-host PRIVATE -Wl,--exclude-libs,ALL)
  else()
    string(REGEX MATCH "[^\n]*(can not be used|No such|error)[^\n]*" bpf_why
           "${bpf_err}")
    if(NOT bpf_why)
      set(bpf_why "${bpf_err}")
    endif()
    string(STRIP "${bpf_why}" bpf_why)
    message(STATUS "libgpux-host.so links libbpf.so.1; libbpf.a not used: ${bpf_why}")
  endif()
endif()
target_link_libraries(gpux-host PRIVATE ${GPUX_HOST_BPF_LIBS} ${GPUX_LLVM_LIB} ${GPUX_ELF_LIB})
set_target_properties(gpux-host PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/cli)
install(TARGETS gpux-host LIBRARY DESTINATION lib/gpux)
set(GPUX_HOST_LLVM ON CACHE INTERNAL "host lowering built")
