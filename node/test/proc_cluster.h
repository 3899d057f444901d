/* SPDX-License-Identifier: MIT
 *
 * proc_cluster.h: N quorum members as real processes (quorum_member) on
 * loopback TCP, in a temporary directory, for the real-process tests and
 * the quorum benchmark. Each member gets its own key file, data directory
 * and port; all share one cluster secret and bootstrap the same voters.
 * One command at a time per member (quorum_member.c lists them).
 */
#ifndef SINEW_NODE_TEST_PROC_CLUSTER_H
#define SINEW_NODE_TEST_PROC_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "transport.h"

#define PC_MEMBERS_MAX 5

struct pc_member {
    pid_t pid; /* 0: not running */
    int to_child;
    int from_child;
    char buffer[8192]; /* bytes read, not yet a whole line */
    size_t buffered;
    char dir[600];
    char key[700];
    int port;
    struct transport_identity identity;
};

struct pc_cluster {
    const char *binary; /* the quorum_member executable */
    size_t count;
    char dir[512];
    char secret[2 * TRANSPORT_CLUSTER_SECRET_BYTES + 1];
    uint32_t election_timeout_ms; /* 0: the default */
    struct pc_member members[PC_MEMBERS_MAX];
};

/* 0, or -1 with a message on stderr. */
int pc_init(struct pc_cluster *c, size_t n, const char *binary);
/* Kills every member still running and removes the directory. */
void pc_free(struct pc_cluster *c);

int pc_start(struct pc_cluster *c, unsigned i);
/* SIGKILL, and waits for it. */
void pc_kill(struct pc_cluster *c, unsigned i);

/* Sends "<kind> <tag> <args>" to member i and reads its reply line (the
 * part after "R <tag> ") into reply; -1 on timeout or a dead member. */
int pc_command(struct pc_cluster *c, unsigned i, char kind, const char *args,
               char *reply, size_t size, int timeout_ms);

/* The member that reports itself a ready leader, polling every 10 ms up
 * to timeout_ms; -1 if none. */
int pc_leader(struct pc_cluster *c, int timeout_ms);

#endif /* SINEW_NODE_TEST_PROC_CLUSTER_H */
