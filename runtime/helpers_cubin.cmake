# The helper library (codegen/ptx/helpers.cu, as codegen/jit.cmake's
# PTX) as relocatable cubins for libgpux-rt.so: ptxas -c for every SM
# architecture this toolkit compiles for, once per register budget, each
# packed into one zstd frame (cubin_pack.c) and embedded (embed_cubins.cmake).
# The runtime links a patched module with the cubin of its device
# (rt_helpers.c, rt_link.c), so the driver compiles only the user's code
# and the probes, not the whole library for every module.
#
# Budgets: nvlink refuses a kernel whose register cap (the runtime keeps
# each kernel to its original SASS's count) is below the count of a
# function it calls, and ptxas raises any cap of code that calls to 24,
# so the library comes at 24, 32, 40, 48 and 64 registers and without a
# cap; the runtime takes the largest that fits.
set(GPUX_HELPER_REG_CAPS "24;32;40;48;64" CACHE STRING
    "Register budgets of the helper library's cubins besides an uncapped one")
set(GPUX_HELPER_ARCHS "" CACHE STRING
    "SM architectures of the helper cubins (80;90;...); empty: every sm_80 or newer ptxas takes")

set(hc_dir ${CMAKE_CURRENT_BINARY_DIR}/helpers_cubin)
set(hc_c ${hc_dir}/helpers_cubin.c)
set(hc_entries "")
set(hc_files "")
set(kept "")

if(GPUX_HELPERS_PTX AND GPUX_PTXAS)
  set(archs ${GPUX_HELPER_ARCHS})
  if(NOT archs)
    # What nvcc lists; a fixed list when it cannot say. Either way each
    # is tried with ptxas below, so a toolkit lacking one leaves it out.
    set(archs 80 86 87 89 90 100 103 110 120 121)
    if(GPUX_NVCC)
      execute_process(COMMAND ${GPUX_NVCC} --list-gpu-code OUTPUT_VARIABLE listed
                      RESULT_VARIABLE list_rc ERROR_QUIET)
      string(REGEX MATCHALL "sm_[0-9]+" listed "${listed}")
      if(list_rc EQUAL 0 AND listed)
        set(archs "")
        foreach(sm ${listed})
          string(SUBSTRING ${sm} 3 -1 n)
          if(n GREATER_EQUAL 80) # the probes' PTX is .target sm_80
            list(APPEND archs ${n})
          endif()
        endforeach()
      endif()
    endif()
  endif()
  file(MAKE_DIRECTORY ${hc_dir})
  file(WRITE ${hc_dir}/probe.ptx ".version 7.0\n.target sm_80\n.address_size 64\n")
  set(kept "")
  foreach(a ${archs})
    execute_process(COMMAND ${GPUX_PTXAS} -arch=sm_${a} -c ${hc_dir}/probe.ptx
                            -o ${hc_dir}/probe.o
                    RESULT_VARIABLE prc OUTPUT_QUIET ERROR_QUIET)
    if(prc EQUAL 0)
      list(APPEND kept ${a})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES kept)
  message(STATUS "helper library cubins for sm_{${kept}}")

  add_executable(cubin_pack ${CMAKE_CURRENT_LIST_DIR}/cubin_pack.c)
  target_link_libraries(cubin_pack PRIVATE ${GPUX_ZSTD_LIB})
  foreach(a ${kept})
    foreach(cap 0 ${GPUX_HELPER_REG_CAPS})
      set(base ${hc_dir}/helpers_sm${a}_r${cap})
      set(regs "")
      if(cap)
        set(regs -maxrregcount=${cap})
      endif()
      add_custom_command(OUTPUT ${base}.cubin ${base}.zst
        COMMAND ${GPUX_PTXAS} -arch=sm_${a} -c -O3 ${regs} ${GPUX_HELPERS_PTX}
                -o ${base}.cubin
        COMMAND cubin_pack ${base}.cubin ${base}.zst
        DEPENDS ${GPUX_HELPERS_PTX} gpux_helpers_ptx cubin_pack
        COMMENT "Helper library cubin for sm_${a}, registers ${cap} (0: no cap)"
        VERBATIM)
      list(APPEND hc_entries "${a}:${cap}:${base}.cubin:${base}.zst")
      list(APPEND hc_files ${base}.cubin ${base}.zst)
    endforeach()
  endforeach()
else()
  message(STATUS "no helper library PTX or no ptxas: patched modules carry the "
                 "helper library as PTX")
endif()
# for the tests (tests/rt): the architectures that have cubins
set(GPUX_HELPER_CUBIN_ARCHS "${kept}" CACHE INTERNAL "SM architectures with helper cubins")

string(REPLACE ";" "|" hc_arg "${hc_entries}")
add_custom_command(OUTPUT ${hc_c}
  COMMAND ${CMAKE_COMMAND} "-DOUT=${hc_c}" "-DENTRIES=${hc_arg}"
          -P ${CMAKE_CURRENT_LIST_DIR}/embed_cubins.cmake
  DEPENDS ${hc_files} ${CMAKE_CURRENT_LIST_DIR}/embed_cubins.cmake
  VERBATIM)
# .incbin reads the packed files when the table compiles
set_source_files_properties(${hc_c} PROPERTIES OBJECT_DEPENDS "${hc_files}")
target_sources(gpux-rt PRIVATE ${hc_c})
