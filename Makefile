# SPDX-License-Identifier: MIT
#
# The project's commands (README). Each wraps CMake/CTest; the build lands in
# build/, executables in build/bin/.
#
#   make run        set-up + build + a single-node server on
#                   127.0.0.1:8080 with its data in ./sinew-data
#                   (RUN_ARGS adds options to `sinew serve`)
#   make            build
#   make setup      install every system package (scripts/setup.sh, as root)
#   make test       set-up + build + every test but the benchmarks
#   make chaos      the chaos suite's real-process tier: sinew serve nodes
#                   (in network namespaces when root), faults, checked
#                   histories, a report in build/chaos (CHAOS_PROFILE=full
#                   or ci; cluster-tests/proc/README.md)
#   make sanitize   the unit tests again under AddressSanitizer + UBSan
#   make tsan       the tests that run threads under ThreadSanitizer
#                   (the engine's connections, the node's server)
#   make format     format every C source with the checked-in .clang-format
#   make fuzz       the libFuzzer targets (parser, engine, file and WAL
#                   readers, transport session, change sets, what a peer
#                   sends a replica, what a client sends the node),
#                   each for FUZZ_SECONDS
#                   (clang)
#   make bench      the benchmarks against their peers (bench/README.md);
#                   BENCH_ARGS passes options to bench_storage,
#                   TRANSPORT_BENCH_ARGS to bench_transport,
#                   REPL_BENCH_ARGS to bench_replication,
#                   CATCHUP_BENCH_ARGS to bench_catchup,
#                   QUORUM_BENCH_ARGS to bench_quorum
#   make bench-quorum  quorum mode's commit latency and throughput alone
#   make bench-engine  the engine against C SQLite and DuckDB (npm ci of
#                   bench/engine/duckdb's pinned lock into the bench tree;
#                   without it the DuckDB column stays empty);
#                   here BENCH_ARGS passes options to bench_engine
#   make bench-replication  3-node sinew clusters (quorum, crdt, leader)
#                   beside etcd and dqlite on loopback, results in
#                   bench-results/replication.{md,csv,svg}; installs the
#                   peers as root (scripts/setup-bench-peers.sh; without
#                   them their columns stay empty); CLUSTER_BENCH_ARGS
#                   passes options to bench/replication/cluster_bench.sh
#
# WERROR=1 turns warnings into errors (CI sets it).

BUILD_DIR ?= build
SANITIZE_DIR ?= build-sanitize
TSAN_DIR ?= build-tsan
JOBS ?= $(shell nproc)
WERROR ?= 0
RUN_ARGS ?=
CHAOS_PROFILE ?= full
SANITIZERS ?= address,undefined
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
BENCH_DIR ?= build-bench
BENCH_ARGS ?=
TRANSPORT_BENCH_ARGS ?=
REPL_BENCH_ARGS ?=
CATCHUP_BENCH_ARGS ?=
CLUSTER_BENCH_ARGS ?=

C_FLAGS := $(if $(filter 1,$(WERROR)),-Werror,)
CONFIGURE = cmake -S . -B $(1) -DCMAKE_C_FLAGS="$(C_FLAGS)" $(2) >/dev/null

.PHONY: all build run setup test chaos sanitize tsan fuzz bench bench-quorum bench-engine \
	bench-replication format clean

all: build

build:
	$(call CONFIGURE,$(BUILD_DIR),-DCMAKE_BUILD_TYPE=RelWithDebInfo)
	cmake --build $(BUILD_DIR) -j $(JOBS)

setup:
	scripts/setup.sh

run:
	scripts/setup.sh
	$(call CONFIGURE,$(BUILD_DIR),-DCMAKE_BUILD_TYPE=RelWithDebInfo)
	cmake --build $(BUILD_DIR) -j $(JOBS)
	$(BUILD_DIR)/bin/sinew serve --data ./sinew-data --http 127.0.0.1:8080 \
		$(RUN_ARGS)

test:
	scripts/setup.sh
	$(call CONFIGURE,$(BUILD_DIR),-DCMAKE_BUILD_TYPE=RelWithDebInfo)
	cmake --build $(BUILD_DIR) -j $(JOBS)
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) -LE 'bench|chaos'

sanitize:
	scripts/setup.sh
	$(call CONFIGURE,$(SANITIZE_DIR),-DCMAKE_BUILD_TYPE=Debug \
		-DSANITIZE=$(SANITIZERS))
	cmake --build $(SANITIZE_DIR) -j $(JOBS)
	ctest --test-dir $(SANITIZE_DIR) --output-on-failure -j $(JOBS) -L unit

tsan:
	scripts/setup.sh
	$(call CONFIGURE,$(TSAN_DIR),-DCMAKE_BUILD_TYPE=Debug -DSANITIZE=thread)
	cmake --build $(TSAN_DIR) --target engine_connections sinew \
		node_test_serve -j $(JOBS)
	ctest --test-dir $(TSAN_DIR) --output-on-failure -L threads

fuzz:
	scripts/setup.sh
	CC=clang cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DSANITIZE=fuzzer-no-link$(,)address$(,)undefined >/dev/null
	cmake --build $(FUZZ_DIR) --target fuzz_parse fuzz_engine fuzz_storage \
		fuzz_storage_seeds fuzz_frame fuzz_changeset fuzz_sync fuzz_wire \
		fuzz_hrana -j $(JOBS)
	mkdir -p $(FUZZ_DIR)/seeds-fuzz_storage
	$(FUZZ_DIR)/bin/fuzz_storage_seeds $(FUZZ_DIR)/seeds-fuzz_storage
	for target in fuzz_parse fuzz_engine fuzz_storage fuzz_frame \
		fuzz_changeset fuzz_sync fuzz_wire fuzz_hrana; do \
		seeds=engine/test/fuzz_seeds; \
		if [ $$target = fuzz_frame ]; then \
			seeds=transport/test/fuzz_seeds; \
		fi; \
		if [ $$target = fuzz_changeset ]; then \
			seeds=replication/test/fuzz_seeds; \
		fi; \
		if [ $$target = fuzz_sync ]; then \
			seeds=replication/test/fuzz_seeds_sync; \
		fi; \
		if [ $$target = fuzz_wire ]; then \
			seeds=consensus/test/fuzz_seeds; \
		fi; \
		if [ $$target = fuzz_hrana ]; then \
			seeds=node/test/fuzz_seeds_hrana; \
		fi; \
		if [ $$target = fuzz_storage ]; then \
			seeds="$(FUZZ_DIR)/seeds-fuzz_storage \
				engine/test/fuzz_regressions/storage"; \
		fi; \
		mkdir -p $(FUZZ_DIR)/corpus-$$target && \
		$(FUZZ_DIR)/bin/$$target -max_total_time=$(FUZZ_SECONDS) \
			-print_final_stats=1 $(FUZZ_DIR)/corpus-$$target \
			$$seeds || exit 1; \
	done

chaos:
	scripts/setup.sh
	$(call CONFIGURE,$(BUILD_DIR),-DCMAKE_BUILD_TYPE=RelWithDebInfo)
	cmake --build $(BUILD_DIR) --target sinew chaos-proc -j $(JOBS)
	$(BUILD_DIR)/bin/chaos-proc --profile $(CHAOS_PROFILE) --out $(BUILD_DIR)/chaos

bench:
	scripts/setup.sh
	$(call CONFIGURE,$(BENCH_DIR),-DCMAKE_BUILD_TYPE=Release -DBUILD_BENCH=ON)
		cmake --build $(BENCH_DIR) --target bench_storage bench_transport \
		bench_replication bench_catchup bench_quorum -j $(JOBS)
	$(BENCH_DIR)/bin/bench_storage $(BENCH_ARGS)
	$(BENCH_DIR)/bin/bench_transport $(TRANSPORT_BENCH_ARGS)
		$(BENCH_DIR)/bin/bench_replication $(REPL_BENCH_ARGS)
	$(BENCH_DIR)/bin/bench_catchup $(CATCHUP_BENCH_ARGS)
	$(BENCH_DIR)/bin/bench_quorum $(BENCH_DIR)/bin/quorum_member \
		$(QUORUM_BENCH_ARGS)

bench-quorum:
	scripts/setup.sh
	$(call CONFIGURE,$(BENCH_DIR),-DCMAKE_BUILD_TYPE=Release -DBUILD_BENCH=ON)
	cmake --build $(BENCH_DIR) --target bench_quorum -j $(JOBS)
	$(BENCH_DIR)/bin/bench_quorum $(BENCH_DIR)/bin/quorum_member \
		$(QUORUM_BENCH_ARGS)

bench-engine:
	scripts/setup.sh
	$(call CONFIGURE,$(BENCH_DIR),-DCMAKE_BUILD_TYPE=Release -DBUILD_BENCH=ON)
	cmake --build $(BENCH_DIR) --target bench_engine -j $(JOBS)
	mkdir -p $(BENCH_DIR)/duckdb
	cp bench/engine/duckdb/package.json bench/engine/duckdb/package-lock.json \
		$(BENCH_DIR)/duckdb/
	(cd $(BENCH_DIR)/duckdb && npm ci --no-audit --no-fund --silent \
		--prefer-offline) || echo "bench-engine: npm ci failed: no DuckDB"
	$(BENCH_DIR)/bin/bench_engine $(BENCH_ARGS)

bench-replication:
	scripts/setup.sh
	$(call CONFIGURE,$(BENCH_DIR),-DCMAKE_BUILD_TYPE=Release -DBUILD_BENCH=ON)
	cmake --build $(BENCH_DIR) --target sinew bench_cluster -j $(JOBS)
	scripts/setup-bench-peers.sh || \
		echo "bench-replication: a peer is missing: its columns stay empty"
	bench/replication/cluster_bench.sh --sinew $(BENCH_DIR)/bin/sinew \
		--tool $(BENCH_DIR)/bin/bench_cluster $(CLUSTER_BENCH_ARGS)

format:
	scripts/check-format.sh --fix

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR) $(TSAN_DIR) $(FUZZ_DIR) $(BENCH_DIR)


, := ,
