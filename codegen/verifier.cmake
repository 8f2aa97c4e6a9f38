# The SIMT verifier (docs/ARCHITECTURE.md, "The device execution model"): control-flow facts, the
# abstract domain, instruction transfer and the path search.
target_sources(gpux_codegen PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/simt_cfg.c
  ${CMAKE_CURRENT_LIST_DIR}/simt_value.c
  ${CMAKE_CURRENT_LIST_DIR}/simt_insn.c
  ${CMAKE_CURRENT_LIST_DIR}/simt_call.c
  ${CMAKE_CURRENT_LIST_DIR}/simt_verifier.c)
