/* SPDX-License-Identifier: MIT
 *
 * scenario.h: what the crdt.md §5 scenario tests (test_scenarios*.c) share:
 * one simulated cluster (cluster.h) with the scenarios' schema, and the
 * helpers they all use. One test at a time owns cl; each frees it.
 */
#ifndef SINEW_REPLICATION_TEST_SCENARIO_H
#define SINEW_REPLICATION_TEST_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster.h"

/* t(id, a, b DEFAULT 'dflt', c), v(id, x), parent(id, name),
 * child(id, parent_id, name). */
extern const char *const scenario_schema;
extern struct cluster cl;

void start_cluster(size_t n, uint64_t seed, bool files);
void start_cluster_history_kept(size_t n, uint64_t seed, bool files);
void set_delay(uint32_t delay_ms);
void cut(unsigned i, unsigned j);
void heal(unsigned i, unsigned j);
uint64_t query_u64(unsigned i, const char *sql);
uint64_t local_version(unsigned i);
void assert_everywhere(const char *sql, const char *expected);
bool later(unsigned i, unsigned j);
void stats_of(unsigned i, struct replication_stats *out);
struct replication_peer_stats *peer_of(struct replication_stats *stats,
                                       unsigned j);
void insert_many(unsigned i, const char *prefix, int count, int blob_size);

#endif /* SINEW_REPLICATION_TEST_SCENARIO_H */
