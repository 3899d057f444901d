#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-format.sh: fails, naming the files, when any C source of the project
# differs from what clang-format makes of it with the checked-in
# .clang-format. With --fix, formats them in place instead.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=(--dry-run -Werror)
[ "${1:-}" = "--fix" ] && mode=(-i)

mapfile -t files < <(find common hlc engine transport replication consensus \
    node cluster-tests bench examples -name '*.[ch]' 2>/dev/null | sort)
[ "${#files[@]}" -gt 0 ] || { echo "check-format: no sources found" >&2; exit 1; }

bad=()
for file in "${files[@]}"; do
    clang-format "${mode[@]}" "$file" >/dev/null 2>&1 || bad+=("$file")
done
if [ "${#bad[@]}" -gt 0 ]; then
    printf 'check-format: not formatted (run scripts/check-format.sh --fix):\n' >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
fi
echo "check-format: ${#files[@]} files formatted"
