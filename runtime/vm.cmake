# The userspace BPF VM (bpf_vm.h): runs the gpux/ programs of a host
# object (BEGIN, END, interval, cuda:) with its own maps. Included from
# runtime/CMakeLists.txt. No libelf or LLVM: the preloaded runtime may
# link it; it shares only abi/ headers (the eBPF encoding) with codegen/.
find_package(Threads REQUIRED)
add_library(gpux_vm STATIC
  ${CMAKE_CURRENT_LIST_DIR}/bpf_vm.c
  ${CMAKE_CURRENT_LIST_DIR}/bpf_vm_elf.c
  ${CMAKE_CURRENT_LIST_DIR}/bpf_vm_check.c
  ${CMAKE_CURRENT_LIST_DIR}/bpf_vm_exec.c
  ${CMAKE_CURRENT_LIST_DIR}/bpf_vm_helpers.c
  ${CMAKE_CURRENT_LIST_DIR}/umaps.c
  ${CMAKE_CURRENT_LIST_DIR}/umaps_ring.c
  ${CMAKE_CURRENT_LIST_DIR}/umaps_dev.c)
target_include_directories(gpux_vm PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(gpux_vm PUBLIC Threads::Threads PRIVATE gpux_abi)
set_target_properties(gpux_vm PROPERTIES POSITION_INDEPENDENT_CODE ON)
