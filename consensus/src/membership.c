/* SPDX-License-Identifier: MIT
 *
 * membership.c: the admin calls: add a member (spare, then standby, then
 * voter once caught up), change a role, remove, transfer leadership.
 *
 * libraft makes single-server changes one at a time (Ongaro's thesis
 * §4.1). Each call here first needs the leader to be ready (a barrier of
 * its term applied, propose.c), which is the precondition the thesis'
 * correction adds for single-server changes; libraft 0.22 does not check
 * it itself (raft.md §1.5).
 */
#include "consensus_int.h"

static void change_finish(struct consensus__change *change, int status)
{
    struct consensus *c = change->c;

    if (c->change == change) {
        c->change = NULL;
    }
    if (change->done != NULL) {
        change->done(change->ctx, status);
    }
    common_free(change);
}

static void change_step_done(struct raft_change *req, int status);

/* consensus_add's next step: standby after spare, voter after standby. */
static int change_next_step(struct consensus__change *change)
{
    struct consensus *c = change->c;

    change->step++;
    if (change->step == 1 && change->final_role != RAFT_SPARE) {
        return raft_assign(&c->raft, &change->req, change->id, RAFT_STANDBY,
                           change_step_done);
    }
    if (change->step == 2 && change->final_role == RAFT_VOTER) {
        return raft_assign(&c->raft, &change->req, change->id, RAFT_VOTER,
                           change_step_done);
    }
    return 1; /* nothing left */
}

static void change_step_done(struct raft_change *req, int status)
{
    struct consensus__change *change = req->data;
    int rv;

    if (status != 0) {
        change_finish(change, consensus__from_raft(status));
        return;
    }
    if (change->final_role < 0) {
        change_finish(change, 0);
        return;
    }
    rv = change_next_step(change);
    if (rv == 1) {
        change_finish(change, 0);
    } else if (rv != 0) {
        change_finish(change, consensus__from_raft(rv));
    }
}

static struct consensus__change *change_new(struct consensus *c, int *rc,
                                            consensus_change_cb done, void *ctx)
{
    struct consensus__change *change;
    struct consensus_status status;

    consensus_status_get(c, &status);
    if (!status.ready) {
        *rc = c->unavailable ? CONSENSUS_EUNAVAILABLE : CONSENSUS_ENOTLEADER;
        return NULL;
    }
    if (c->change != NULL) {
        *rc = CONSENSUS_EBUSY;
        return NULL;
    }
    change = common_calloc(1, sizeof *change);
    if (change == NULL) {
        *rc = COMMON_ENOMEM;
        return NULL;
    }
    change->c = c;
    change->done = done;
    change->ctx = ctx;
    change->req.data = change;
    change->final_role = -1;
    *rc = 0;
    return change;
}

static int role_to_raft(enum consensus_role role)
{
    switch (role) {
    case CONSENSUS_VOTER:
        return RAFT_VOTER;
    case CONSENSUS_STANDBY:
        return RAFT_STANDBY;
    case CONSENSUS_SPARE:
        return RAFT_SPARE;
    }
    return -1;
}

static int change_started(struct consensus *c, struct consensus__change *change,
                          int rv)
{
    if (rv != 0) {
        common_free(change);
        return consensus__from_raft(rv);
    }
    c->change = change;
    return 0;
}

int consensus_add(struct consensus *c, const struct consensus_member *member,
                  consensus_change_cb done, void *ctx)
{
    struct consensus__change *change;
    char *address = NULL;
    int rc;

    if (member == NULL || member->id == 0 || member->address == NULL ||
        role_to_raft(member->role) < 0) {
        return CONSENSUS_ECONFIG;
    }
    if (consensus__io_knows_member(c, &member->node)) {
        /* One node, one id: an address change is remove, then add. */
        return CONSENSUS_EBADID;
    }
    change = change_new(c, &rc, done, ctx);
    if (change == NULL) {
        return rc;
    }
    rc = consensus__address_format(&member->node, member->address, &address);
    if (rc != 0) {
        common_free(change);
        return rc;
    }
    change->id = member->id;
    change->final_role = role_to_raft(member->role);
    rc =
        raft_add(&c->raft, &change->req, member->id, address, change_step_done);
    raft_free(address);
    return change_started(c, change, rc);
}

int consensus_assign(struct consensus *c, uint64_t id, enum consensus_role role,
                     consensus_change_cb done, void *ctx)
{
    struct consensus__change *change;
    int rc;

    if (role_to_raft(role) < 0) {
        return CONSENSUS_ECONFIG;
    }
    change = change_new(c, &rc, done, ctx);
    if (change == NULL) {
        return rc;
    }
    rc = raft_assign(&c->raft, &change->req, id, role_to_raft(role),
                     change_step_done);
    return change_started(c, change, rc);
}

int consensus_remove(struct consensus *c, uint64_t id, consensus_change_cb done,
                     void *ctx)
{
    struct consensus__change *change;
    int rc;

    change = change_new(c, &rc, done, ctx);
    if (change == NULL) {
        return rc;
    }
    rc = raft_remove(&c->raft, &change->req, id, change_step_done);
    return change_started(c, change, rc);
}

static void transfer_done(struct raft_transfer *req)
{
    change_finish(req->data, 0);
}

int consensus_transfer(struct consensus *c, uint64_t id,
                       consensus_change_cb done, void *ctx)
{
    struct consensus__change *change;
    int rc;

    change = change_new(c, &rc, done, ctx);
    if (change == NULL) {
        return rc;
    }
    change->transfer.data = change;
    rc = raft_transfer(&c->raft, &change->transfer, id, transfer_done);
    return change_started(c, change, rc);
}

void consensus__change_fail(struct consensus *c, int status)
{
    /* libraft fails its own pending requests when closing; a change whose
     * callback it never ran is finished here. */
    if (c->change != NULL) {
        change_finish(c->change, status);
    }
}
