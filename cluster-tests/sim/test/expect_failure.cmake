# SPDX-License-Identifier: MIT
#
# expect_failure.cmake: the mutant tests' verdict (ctest sim_mutant_*).
# Runs SIM (a mutant binary) with ARGS (a ;-list) and passes only when its
# output names the mutation it was built with (MARKER: a build that linked
# the real code fails here) and some seed failed with one of the expected
# checkers (CHECKERS, a regex such as "convergence|lww"): a crash or a
# liveness failure does not count.
#
#   cmake -DSIM=... -DARGS="--mode;crdt;..." -DMARKER=... -DCHECKERS=...
#         -P expect_failure.cmake
execute_process(COMMAND ${SIM} ${ARGS} OUTPUT_VARIABLE out
                ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT out MATCHES "mutation: ${MARKER}")
  message(FATAL_ERROR "the binary does not say 'mutation: ${MARKER}'")
endif()
if(NOT out MATCHES "FAIL mode=[a-z]+ seed=0x[0-9a-f]+ checker=(${CHECKERS}) ")
  message(FATAL_ERROR "no seed failed with checker ${CHECKERS}: the "
                      "checkers did not catch the mutant")
endif()
