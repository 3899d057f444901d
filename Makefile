# SPDX-License-Identifier: MIT
#
# The project's commands (README). Each wraps CMake/CTest; the build lands in
# build/, executables in build/bin/.
#
#   make            build
#   make setup      install every system package (scripts/setup.sh, as root)
#   make test       set-up + build + every test but the benchmarks
#   make sanitize   the unit tests again under AddressSanitizer + UBSan
#   make format     format every C source with the checked-in .clang-format
#   make fuzz       the parser's and the engine's libFuzzer targets, each
#                   for FUZZ_SECONDS (clang)
#
# WERROR=1 turns warnings into errors (CI sets it).

BUILD_DIR ?= build
SANITIZE_DIR ?= build-sanitize
JOBS ?= $(shell nproc)
WERROR ?= 0
SANITIZERS ?= address,undefined
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60

C_FLAGS := $(if $(filter 1,$(WERROR)),-Werror,)
CONFIGURE = cmake -S . -B $(1) -DCMAKE_C_FLAGS="$(C_FLAGS)" $(2) >/dev/null

.PHONY: all build setup test sanitize fuzz format clean

all: build

build:
	$(call CONFIGURE,$(BUILD_DIR),-DCMAKE_BUILD_TYPE=RelWithDebInfo)
	cmake --build $(BUILD_DIR) -j $(JOBS)

setup:
	scripts/setup.sh

test:
	scripts/setup.sh
	$(call CONFIGURE,$(BUILD_DIR),-DCMAKE_BUILD_TYPE=RelWithDebInfo)
	cmake --build $(BUILD_DIR) -j $(JOBS)
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -LE bench

sanitize:
	scripts/setup.sh
	$(call CONFIGURE,$(SANITIZE_DIR),-DCMAKE_BUILD_TYPE=Debug \
		-DSANITIZE=$(SANITIZERS))
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	ctest --test-dir $(SANITIZE_DIR) --output-on-failure -j $(JOBS) -L unit

fuzz:
	scripts/setup.sh
	CC=clang cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DSANITIZE=fuzzer-no-link$(,)address$(,)undefined >/dev/null
	cmake --build $(FUZZ_DIR) --target fuzz_parse fuzz_engine -j $(JOBS)
	for target in fuzz_parse fuzz_engine; do \
		mkdir -p $(FUZZ_DIR)/corpus-$$target && \
		$(FUZZ_DIR)/bin/$$target -max_total_time=$(FUZZ_SECONDS) \
			-print_final_stats=1 $(FUZZ_DIR)/corpus-$$target \
			engine/test/fuzz_seeds || exit 1; \
	done

format:
	scripts/check-format.sh --fix

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR) $(FUZZ_DIR)


, := ,
