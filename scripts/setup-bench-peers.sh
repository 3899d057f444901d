#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# setup-bench-peers.sh: installs the peers the replication benchmark runs
# beside sinew (bench/README.md, "Clusters"): etcd 3.4 (Debian etcd-server,
# etcd-client) and dqlite 1.11 (Debian go-dqlite: the dqlite shell and
# dqlite-demo, with libdqlite0 and its libraft2 0.15). Only `make
# bench-replication` runs it, never `make test`. Idempotent: with every peer
# present it asks apt nothing.
#
# libdqlite0 depends on libraft2 (0.15), a package beside the libraft0 0.22
# sinew builds with (different sonames). Before installing go-dqlite the
# script asks apt what it would do (--simulate); if it would remove, replace
# or change libraft0 or libraft-dev, dqlite is left out and the script says
# so: sinew's own Raft library comes first.
#
# Exit status: 0 when every peer is installed, 1 when one or more are not
# (the benchmark then runs without them and says so).
set -uo pipefail

say() { printf 'setup-bench-peers: %s\n' "$*"; }

have() { command -v "$1" >/dev/null 2>&1; }

etcd_present() { have etcd && have etcdctl; }
dqlite_present() { have dqlite-demo && have dqlite; }

raft_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || true; }

# True when apt would install go-dqlite without touching sinew's libraft:
# no package removed, and neither libraft0 nor libraft-dev installed,
# upgraded or downgraded.
dqlite_is_safe() {
    local plan
    plan=$(apt-get install --simulate -y --no-install-recommends go-dqlite \
        2>&1) || {
        say "apt cannot install go-dqlite: $(printf '%s' "$plan" | tail -n 1)"
        return 1
    }
    if printf '%s\n' "$plan" | grep -Eq '^Remv |^(Inst|Conf) libraft(0|-dev)[ :]'; then
        say "installing go-dqlite would change sinew's libraft:"
        printf '%s\n' "$plan" | grep -E '^Remv |^Inst libraft' >&2
        return 1
    fi
    return 0
}

main() {
    local status=0
    if etcd_present && dqlite_present; then
        say "etcd and dqlite present"
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        if have sudo; then
            exec sudo -- "$0" "$@"
        fi
        say "peers missing and not root: run this script as root"
        return 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    say "updating package lists"
    apt-get update -qq || say "apt-get update failed; trying the lists there are"
    if ! etcd_present; then
        say "installing etcd-server etcd-client"
        apt-get install -y -qq --no-install-recommends etcd-server etcd-client ||
            say "etcd could not be installed"
    fi
    if ! dqlite_present; then
        local before after
        before=$(raft_version libraft0)
        if dqlite_is_safe; then
            say "installing go-dqlite (libdqlite0, libraft2 beside libraft0 $before)"
            apt-get install -y -qq --no-install-recommends go-dqlite ||
                say "go-dqlite could not be installed"
            after=$(raft_version libraft0)
            if [ "$before" != "$after" ]; then
                say "error: libraft0 changed from '$before' to '$after'"
                status=1
            fi
        else
            say "dqlite left out: sinew's libraft0 must stay as it is"
        fi
    fi
    if etcd_present; then
        say "etcd: $(etcd --version 2>/dev/null | head -n 1)"
    else
        say "etcd: absent"
        status=1
    fi
    if dqlite_present; then
        say "dqlite: dqlite-demo $(command -v dqlite-demo)"
    else
        say "dqlite: absent"
        status=1
    fi
    return $status
}

main "$@"
