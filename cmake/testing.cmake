# SPDX-License-Identifier: MIT
#
# sinew_unit_test(NAME SOURCES... LIBS...): one cmocka executable per tested
# noun, registered with CTest under the label "unit". Tests link only their own
# module and what it may depend on, so hidden coupling breaks the test build.
function(sinew_unit_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} PkgConfig::CMOCKA)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 120)
endfunction()
