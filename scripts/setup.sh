#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# setup.sh: installs every system package sinew builds, tests and runs with, on
# Debian 12 (bookworm) or later. Idempotent: when everything is already there it
# asks apt nothing and returns in well under a second.
#
# libraft must be 0.22 or newer (0.15.0, in bookworm's main suite, has a
# reproduced Raft safety bug). Where the machine's default suites offer only an
# older one, the script adds the release's backports suite, taking the mirror and
# its signing key from the machine's own apt sources, so the repository never
# names a package host.
set -euo pipefail

RAFT_VERSION_MIN=0.22
PACKAGES=(
    gcc libc6-dev make cmake pkg-config clang-format clang libclang-rt-14-dev
    libuv1-dev libmsgpack-dev libsodium-dev liblz4-dev libxxhash-dev
    libcmocka-dev libsqlite3-dev sqlite3 libedit-dev libhttp-parser-dev
    libjansson-dev nftables iproute2 iptables libnetfilter-queue-dev
    faketime fiu-utils libfiu-dev zlib1g-dev
)
SOURCES_FILE=/etc/apt/sources.list.d/sinew-backports.sources

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

is_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

raft_is_recent() {
    local version
    version=$(dpkg-query -W -f='${Version}' libraft-dev 2>/dev/null) || return 1
    is_installed libraft-dev && dpkg --compare-versions "$version" ge "$RAFT_VERSION_MIN"
}

# Node.js and npm run the client-compatibility test (@libsql/client). A
# machine that already has them from elsewhere (its own nodejs package that
# bundles npm) keeps them: Debian's npm would conflict with it.
COMMAND_PACKAGES=(node:nodejs npm:npm)

missing_packages() {
    local package entry
    for package in "${PACKAGES[@]}"; do
        is_installed "$package" || printf '%s\n' "$package"
    done
    for entry in "${COMMAND_PACKAGES[@]}"; do
        command -v "${entry%%:*}" >/dev/null 2>&1 || printf '%s\n' "${entry#*:}"
    done
}

# Prints "URI<TAB>SIGNED-BY" of the first apt source that serves the release's
# own suite (not -security or -updates), from deb822 .sources files first, then
# one-line .list files.
find_release_mirror() {
    local codename=$1
    local file
    for file in /etc/apt/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        awk -v want="$codename" '
            function flush() {
                if (is_deb && has_suite && uri != "") { print uri "\t" key; found = 1; exit }
                is_deb = 0; has_suite = 0; uri = ""; key = ""
            }
            /^[[:space:]]*$/ { flush(); next }
            /^#/ { next }
            /^Types:/ { is_deb = ($0 ~ /[[:space:]]deb([[:space:]]|$)/) }
            /^URIs:/ { uri = $2 }
            /^Signed-By:/ { key = $2 }
            /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == want) has_suite = 1 }
            END { if (!found) flush() }
        ' "$file" | head -n 1 | grep . && return 0
    done
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$file" ] || continue
        awk -v want="$codename" '
            $1 != "deb" { next }
            {
                key = ""; i = 2
                if ($2 ~ /^\[/) {
                    for (; i <= NF; i++) {
                        if ($i ~ /signed-by=/) { key = $i; sub(/.*signed-by=/, "", key); sub(/\]$/, "", key) }
                        if ($i ~ /\]$/) { i++; break }
                    }
                }
                if ($(i + 1) == want) { print $i "\t" key; exit }
            }
        ' "$file" | head -n 1 | grep . && return 0
    done
    return 1
}

add_backports() {
    local codename=$1 mirror uri key
    if grep -rqs "${codename}-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
        return 0
    fi
    mirror=$(find_release_mirror "$codename") ||
        die "no apt source for '$codename' found to derive ${codename}-backports from"
    uri=${mirror%%$'\t'*}
    key=${mirror#*$'\t'}
    say "adding ${codename}-backports from the mirror the machine already uses"
    {
        printf 'Types: deb\nURIs: %s\nSuites: %s-backports\nComponents: main\n' \
            "$uri" "$codename"
        [ -n "$key" ] && printf 'Signed-By: %s\n' "$key"
    } >"$SOURCES_FILE"
    apt-get update -qq
}

candidate_version() {
    apt-cache policy "$1" | awk '/Candidate:/ { print $2 }'
}

install_raft() {
    local codename=$1 candidate
    candidate=$(candidate_version libraft-dev)
    if [ -n "$candidate" ] && [ "$candidate" != "(none)" ] &&
        dpkg --compare-versions "$candidate" ge "$RAFT_VERSION_MIN"; then
        apt-get install -y -qq libraft-dev
        return 0
    fi
    add_backports "$codename"
    # Only libraft comes from backports; everything else stays on the release.
    apt-get install -y -qq -t "${codename}-backports" libraft-dev
}

main() {
    local missing
    missing=$(missing_packages)
    if [ -z "$missing" ] && raft_is_recent; then
        say "all packages present"
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            exec sudo -- "$0" "$@"
        fi
        die "packages missing and not root: run this script as root"
    fi
    # shellcheck disable=SC1091
    . /etc/os-release
    [ -n "${VERSION_CODENAME:-}" ] || die "/etc/os-release names no release codename"
    export DEBIAN_FRONTEND=noninteractive
    say "updating package lists"
    apt-get update -qq
    if [ -n "$missing" ]; then
        say "installing:" $missing
        # shellcheck disable=SC2086
        apt-get install -y -qq --no-install-recommends $missing
    fi
    raft_is_recent || install_raft "$VERSION_CODENAME"
    raft_is_recent || die "libraft-dev >= $RAFT_VERSION_MIN could not be installed"
    say "libraft-dev $(dpkg-query -W -f='${Version}' libraft-dev) installed"
}

main "$@"
