# SPDX-License-Identifier: MIT
#
# The system libraries sinew is built on, found with pkg-config as imported
# targets (PkgConfig::<NAME>). scripts/setup.sh installs all of them; a missing
# or too old one stops the configure step with a message that says so.
find_package(PkgConfig REQUIRED)

function(sinew_require name module)
  pkg_check_modules(${name} IMPORTED_TARGET ${module})
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR
      "${module} not found (pkg-config). Run scripts/setup.sh as root, "
      "or 'make setup', to install every dependency.")
  endif()
endfunction()

sinew_require(CMOCKA cmocka)
sinew_require(JANSSON jansson)
sinew_require(LIBEDIT libedit)
sinew_require(LIBUV libuv)
sinew_require(LZ4 liblz4)
sinew_require(MSGPACK msgpack)
sinew_require(RAFT raft)
sinew_require(SODIUM libsodium)
sinew_require(SQLITE3 sqlite3)
sinew_require(XXHASH libxxhash)

# http-parser (Debian's libhttp-parser-dev) ships no pkg-config file.
find_path(HTTP_PARSER_INCLUDE_DIR http_parser.h)
find_library(HTTP_PARSER_LIBRARY http_parser)
if(NOT HTTP_PARSER_INCLUDE_DIR OR NOT HTTP_PARSER_LIBRARY)
  message(FATAL_ERROR
    "http-parser not found (libhttp-parser-dev). Run scripts/setup.sh as "
    "root, or 'make setup', to install every dependency.")
endif()
if(NOT TARGET HttpParser::HttpParser)
  add_library(HttpParser::HttpParser UNKNOWN IMPORTED)
  set_target_properties(HttpParser::HttpParser PROPERTIES
    IMPORTED_LOCATION ${HTTP_PARSER_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${HTTP_PARSER_INCLUDE_DIR})
endif()

# libraft 0.15.0 (Debian bookworm's main suite) has a reproduced Raft safety bug;
# 0.22 is the first release the consensus module is written against.
set(SINEW_RAFT_VERSION_MIN 0.22)
if(RAFT_VERSION VERSION_LESS SINEW_RAFT_VERSION_MIN)
  message(FATAL_ERROR
    "libraft ${RAFT_VERSION} is too old: sinew needs ${SINEW_RAFT_VERSION_MIN} "
    "or newer (0.15 has a known Raft safety bug). On Debian 12 run "
    "scripts/setup.sh, which installs it from bookworm-backports.")
endif()

# Proof of the check above: configuring the tree with pkg-config finding a
# libraft 0.15.0 first must stop with the message.
add_test(NAME configure_refuses_old_libraft
  COMMAND ${CMAKE_COMMAND} -E env
          PKG_CONFIG_PATH=${CMAKE_SOURCE_DIR}/cmake/test/old-raft
          ${CMAKE_COMMAND} -S ${CMAKE_SOURCE_DIR}
          -B ${CMAKE_BINARY_DIR}/configure-old-libraft)
set_tests_properties(configure_refuses_old_libraft PROPERTIES
  LABELS unit
  PASS_REGULAR_EXPRESSION "libraft 0\\.15\\.0 is too old")
