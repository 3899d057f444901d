# SPDX-License-Identifier: MIT
#
# Proof that module edges are enforced by the build: for each forbidden edge
# (docs/architecture.md), an object library that links the lower module and
# includes the higher module's header is built by a CTest case, which passes
# only when the compiler reports that header as not found.
function(sinew_forbid_include module header)
  string(MAKE_C_IDENTIFIER "${module}_includes_${header}" id)
  set(source ${CMAKE_BINARY_DIR}/layering/${id}.c)
  file(WRITE ${source} "#include \"${header}\"\nint ${id}(void);\n")
  add_library(layering_${id} OBJECT EXCLUDE_FROM_ALL ${source})
  target_link_libraries(layering_${id} PRIVATE ${module})
  add_test(NAME layering_${id}
    COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR}
            --target layering_${id})
  set_tests_properties(layering_${id} PROPERTIES
    LABELS unit
    RESOURCE_LOCK build_tree
    PASS_REGULAR_EXPRESSION "${header}: No such file or directory")
endfunction()

sinew_forbid_include(common hlc.h)
sinew_forbid_include(common engine.h)
sinew_forbid_include(engine_value hlc.h)
sinew_forbid_include(engine transport.h)
sinew_forbid_include(transport engine.h)
sinew_forbid_include(transport hlc.h)
sinew_forbid_include(engine replication.h)
sinew_forbid_include(transport replication.h)
# consensus carries bytes: it knows neither the engine nor replication, and
# replication does not know consensus (node joins them).
sinew_forbid_include(consensus engine.h)
sinew_forbid_include(consensus replication.h)
sinew_forbid_include(replication consensus.h)
