# libgpux-rt.so: the device runtime preloaded into traced CUDA programs
# (rt.h). Links the fatbin reader, the PTX rewriter and the session
# layout; no LLVM, no libelf. Only cuda.h is needed to build it: libcuda
# is the program's own, found at run time.
find_path(GPUX_CUDA_INCLUDE cuda.h
  HINTS /usr/local/cuda/include ENV CUDA_HOME PATH_SUFFIXES include)
if(GPUX_CUDA_INCLUDE)
  add_library(gpux-rt SHARED
    ${CMAKE_CURRENT_LIST_DIR}/rt_cuda.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_attach.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_attach_images.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_session.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_image.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_ctx.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_snap.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_clock.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_ring.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_drain.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_live.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_live_top.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_live_graph.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_graph_hooks.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_crash.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_interpose.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_entry.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_rename.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_api.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_launch_ev.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_kernel_end.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_cupti.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_graph_ev.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_cev_util.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_nvjitlink.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_original.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_regs.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_relink.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_triton.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_sass.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_sass_ctx.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_ptxas.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_cache.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_link.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_helpers.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_host.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_host_out.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_actions.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_allocs.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_mirror.c
    ${CMAKE_CURRENT_LIST_DIR}/rt_push.c)
  target_include_directories(gpux-rt PRIVATE ${GPUX_CUDA_INCLUDE}
                             ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(gpux-rt PRIVATE gpux_abi gpux_rewrite gpux_fatbin gpux_session gpux_vm
                        Threads::Threads ${CMAKE_DL_LIBS})
  # libgpux-rt.so next to gpux, where the controller looks for it
  set_target_properties(gpux-rt PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/cli
    C_VISIBILITY_PRESET default)
  # -Bsymbolic-functions: the runtime's own references to its hooks are
  # its own even where it is not first in the lookup order (loaded late
  # into a running process by gpux -p), as they are when preloaded.
  target_link_options(gpux-rt PRIVATE -Wl,--no-undefined -Wl,-Bsymbolic-functions
    -Wl,--version-script=${CMAKE_CURRENT_LIST_DIR}/libgpux_rt.map)
  set_target_properties(gpux-rt PROPERTIES LINK_DEPENDS
    ${CMAKE_CURRENT_LIST_DIR}/libgpux_rt.map)
  include(${CMAKE_CURRENT_LIST_DIR}/helpers_cubin.cmake)
  # where gpux looks for it when installed (cli/module_open.h)
  install(TARGETS gpux-rt LIBRARY DESTINATION lib/gpux)
else()
  message(WARNING "cuda.h not found: libgpux-rt.so (the device runtime) is not built")
endif()
