# Device probes: AST -> eBPF lowering (dev_lower.h), verification, the
# `-d bpf` dump and the PTX module writer.
target_sources(gpux_codegen PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/dev_emit.c
  ${CMAKE_CURRENT_LIST_DIR}/dev_expr.c
  ${CMAKE_CURRENT_LIST_DIR}/dev_maps.c
  ${CMAKE_CURRENT_LIST_DIR}/dev_stmt.c
  ${CMAKE_CURRENT_LIST_DIR}/dev_lower.c
  ${CMAKE_CURRENT_LIST_DIR}/dev_output.c
  ${CMAKE_CURRENT_LIST_DIR}/dev_facts.c)
