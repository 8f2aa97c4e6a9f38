# The eBPF -> PTX JIT and its device helper library.
target_sources(gpux_codegen PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/ptx_jit.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_alu.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_mem.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_stack.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_array.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_lookup.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_desc.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_jmp.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_call.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_module.c)

# The helper library is CUDA C compiled to PTX at build time. -rdc keeps
# the extern "C" device functions, which no kernel here calls.
find_program(GPUX_NVCC nvcc)
find_program(GPUX_PTXAS ptxas)
if(GPUX_NVCC)
  set(helpers_ptx ${CMAKE_CURRENT_BINARY_DIR}/helpers.ptx)
  add_custom_command(
    OUTPUT ${helpers_ptx}
    COMMAND ${GPUX_NVCC} -arch=sm_80 -ptx -rdc=true
            -I${PROJECT_SOURCE_DIR}/abi
            ${CMAKE_CURRENT_LIST_DIR}/ptx/helpers.cu -o ${helpers_ptx}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/ptx/helpers.cu
            ${PROJECT_SOURCE_DIR}/abi/gpux_dev.h
    COMMENT "Compiling the device helper library to PTX"
    VERBATIM)
  add_custom_target(gpux_helpers_ptx ALL DEPENDS ${helpers_ptx})
  set(GPUX_HELPERS_PTX ${helpers_ptx} CACHE INTERNAL "helper library PTX")
else()
  message(STATUS "nvcc not found: the device helper library is not built "
                 "and the ptxas tests of the JIT are skipped")
  set(GPUX_HELPERS_PTX "" CACHE INTERNAL "helper library PTX")
endif()
