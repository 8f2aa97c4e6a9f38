# The PTX rewriter (issue 5 item 4): splices probe trampolines into user
# PTX. Included from runtime/CMakeLists.txt; depends on abi/ headers only.
add_library(gpux_rewrite STATIC
  ${CMAKE_CURRENT_LIST_DIR}/ptx_scan.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_site.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_walk.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_tramp.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_rewrite.c
  ${CMAKE_CURRENT_LIST_DIR}/ptx_vars.c
  ${CMAKE_CURRENT_LIST_DIR}/sass_ptx.c)
target_include_directories(gpux_rewrite PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(gpux_rewrite PUBLIC gpux_abi)
# Linked into the preloaded runtime (a shared object) later.
set_target_properties(gpux_rewrite PROPERTIES POSITION_INDEPENDENT_CODE ON)
