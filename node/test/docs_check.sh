#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# docs_check.sh SINEW_BINARY ROOT: fails when the documentation names a
# `sinew` command or option that the binary no longer has, or when
# docs/operations.md's settings table and `sinew serve --help` disagree.
# It reads ROOT/README.md and ROOT/docs/*.md.
#
# The rules:
#
#  1. Code is what the reader would type or see: fenced blocks (```) and
#     inline code spans (`...`, which may run over several lines of one
#     paragraph). Prose is never read.
#  2. An invocation is the word `sinew` (alone or as the end of a path,
#     build/bin/sinew) followed by a lowercase word, the command. In a
#     fenced block it runs to the end of the line (lines ending in `\`
#     continue it) or to the first `|`, `;`, `&`, `)`, `<`, `>`, `#` outside
#     quotes; in an inline span, to the end of the span. Quoted strings in
#     it are skipped (SQL given to -c). Heredoc bodies (<<'EOF' ... EOF)
#     and `#` comments of fenced blocks are not code.
#  3. Variables: a fenced line `NAME="..."` (or '...' or a bare word) sets
#     NAME for the rest of that file, and `$NAME` / `${NAME}` in later
#     fenced lines is replaced by it, so `sinew serve $common` is checked
#     with the options `common` holds.
#  4. Each command must exist: `sinew --help` lists it and `sinew CMD
#     --help` exits 0. For `sinew cluster WORD`, WORD must be one of the
#     subcommands in the usage lines of `sinew cluster --help`.
#  5. Each option of an invocation (a word starting with `-`, its `=value`
#     dropped) must be an option of that command's --help: a word starting
#     with `-` at the start of an indented line of it (and those after it
#     on the line, joined by "," or "/"), or in its usage lines. `sinew
#     shell` takes its options with one dash or two, so there `--csv`
#     counts as `-csv`.
#  6. An inline span that starts with `--name` (an option in a sentence
#     or a table, a message quoting options) outside an invocation must
#     name, in each of its `--` words, an option some command has (a span
#     that starts with another word is another tool's command line). Mentions that are not sinew's options (other tools'
#     flags, the shell's dot commands, placeholders) are listed in
#     docs_check.allow beside this script, with the reason: a line
#     `FILE OPTION REASON...`, OPTION `*` for a whole file. An entry
#     without a reason is an error; an entry that matches nothing is
#     reported (not failed), so it can be removed.
#  7. docs/operations.md's table under "### Settings" lists exactly the
#     options `sinew serve --help` lists, each row's "File name" column is
#     the option without its dashes (or "(command line only)").
#
# Every problem is printed as FILE:LINE: what is wrong; the exit status is
# 1 when there is one. Nothing is started but `sinew ... --help`.
# DOCS_CHECK_LIST=1 prints every piece of code it found, as it read it.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 SINEW_BINARY ROOT" >&2
    exit 2
fi
sinew=$(realpath "$1")
root=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
allow="$here/docs_check.allow"
work=$(mktemp -d "${TMPDIR:-/tmp}/sinew-docs-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

problems=0
problem() {
    echo "$1: $2" >&2
    problems=$((problems + 1))
}

# ---- what the binary offers ----

"$sinew" --help >"$work/help.main" 2>&1 ||
    { echo "docs_check: '$sinew --help' failed" >&2; exit 1; }
commands=$(awk '/^Commands:/ { on = 1; next }
                on && /^  [a-z]/ { print $1 }
                on && /^$/ { on = 0 }' "$work/help.main")
if [ -z "$commands" ]; then
    echo "docs_check: no commands in '$sinew --help'" >&2
    exit 1
fi

# The options of a --help text (rule 5), one a line, without "=value".
options_of() {
    awk '
        function take(word) {
            gsub(/^[\[(]+|[\]),|]+$/, "", word)
            sub(/=.*/, "", word)
            if (word ~ /^--?[a-z][a-z0-9-]*$/) print word
        }
        /^ *[Uu]sage:/ || /^ +sinew [a-z]/ {
            for (i = 1; i <= NF; i++) take($i)
            next
        }
        /^[ \t]+-/ {
            for (i = 1; i <= NF; i++) {
                w = $i; sub(/,$/, "", w)
                if (w == "/" || w == ",") continue
                if (w !~ /^-/) break
                take(w)
            }
        }' "$1" | sort -u
}

for cmd in $commands; do
    if ! "$sinew" "$cmd" --help >"$work/help.$cmd" 2>&1; then
        problem "$sinew" "'sinew $cmd --help' fails although 'sinew --help' lists $cmd"
    fi
    options_of "$work/help.$cmd" >"$work/options.$cmd"
    if [ "$cmd" = shell ]; then
        # rule 5: one dash or two
        sed -n 's/^-\([a-z]\)/--\1/p' "$work/options.$cmd" >"$work/shell.long"
        sort -u -o "$work/options.$cmd" "$work/options.$cmd" "$work/shell.long"
    fi
done
cat "$work"/options.* | sort -u >"$work/options.all"
subcommands=$(awk '/^ *[Uu]sage:/ || /^ +sinew cluster/ {
                       for (i = 1; i < NF; i++)
                           if ($i == "cluster" && $(i + 1) ~ /^[a-z]+$/) print $(i + 1)
                   }' "$work/help.cluster" 2>/dev/null | sort -u)

# ---- what the documents say (rules 1-3) ----

# Prints one record per piece of code: FILE<TAB>LINE<TAB>inv<TAB>CMD ARGS
# for an invocation, FILE<TAB>LINE<TAB>span<TAB>TEXT for the rest of an
# inline span.
extract() {
    awk '
        BEGIN { OFS = "\t" }
        FNR == 1 {
            fence = 0; heredoc = ""; para = ""; split("", vars)
            cont = ""
        }
        # Replaces $NAME and ${NAME} by the values set so far (rule 3).
        function expand(s,    name, out, i, c, rest, n) {
            out = ""
            while ((i = index(s, "$")) > 0) {
                out = out substr(s, 1, i - 1)
                rest = substr(s, i + 1)
                if (substr(rest, 1, 1) == "{" && match(rest, /^\{[A-Za-z_][A-Za-z0-9_]*\}/)) {
                    name = substr(rest, 2, RLENGTH - 2); n = RLENGTH
                } else if (match(rest, /^[A-Za-z_][A-Za-z0-9_]*/)) {
                    name = substr(rest, 1, RLENGTH); n = RLENGTH
                } else {
                    out = out "$"; s = rest; continue
                }
                if (name in vars) out = out vars[name]
                else out = out "$" substr(rest, 1, n)
                s = substr(rest, n + 1)
            }
            return out s
        }
        # Blanks out quoted strings, keeping the quotes.
        function unquote(s,    out, q, i, j) {
            out = ""
            while (match(s, /["\047]/)) {
                q = substr(s, RSTART, 1)
                out = out substr(s, 1, RSTART)
                s = substr(s, RSTART + 1)
                j = index(s, q)
                if (j == 0) return out s
                out = out "Q" q
                s = substr(s, j + 1)
            }
            return out s
        }
        # Emits the invocations in text; returns text without them.
        function invocations(text, line, in_fence,    rest, out, inv, start, end) {
            out = ""
            while (match(text, /(^|[^A-Za-z0-9_.-])sinew [a-z][a-z]*/)) {
                # the match may start with the character before "sinew"
                start = RSTART
                if (substr(text, start, 5) != "sinew") start++
                inv = substr(text, start + 6)
                out = out substr(text, 1, start - 1)
                inv = unquote(inv)
                if (in_fence) {
                    end = match(inv, /[|;&)<>#]/) ? RSTART : length(inv) + 1
                } else {
                    end = length(inv) + 1
                }
                rest = substr(inv, end)
                inv = substr(inv, 1, end - 1)
                print FILENAME, line, "inv", inv
                text = rest
            }
            return out text
        }
        function fenced(s, line,    name, value) {
            if (heredoc != "") {
                value = s; gsub(/^[ \t]+|[ \t]+$/, "", value)
                if (value == heredoc) heredoc = ""
                return
            }
            if (match(s, /<<-?[ \t]*["\047]?[A-Za-z_][A-Za-z0-9_]*/)) {
                heredoc = substr(s, RSTART, RLENGTH)
                sub(/^<<-?[ \t]*["\047]?/, "", heredoc)
            }
            sub(/^[ \t]*\$ /, "", s)        # a prompt
            sub(/(^|[ \t])#.*$/, "", s)     # a comment
            s = expand(s)
            if (match(s, /^[ \t]*[A-Za-z_][A-Za-z0-9_]*=/)) {
                name = substr(s, RSTART, RLENGTH - 1); sub(/^[ \t]*/, "", name)
                value = substr(s, RSTART + RLENGTH)
                if (value ~ /^"[^"]*"/) { sub(/^"/, "", value); sub(/".*/, "", value); vars[name] = value }
                else if (value ~ /^\047[^\047]*\047/) { sub(/^\047/, "", value); sub(/\047.*/, "", value); vars[name] = value }
                else if (value !~ /^\$\(/) { sub(/[ \t].*/, "", value); vars[name] = value }
            }
            invocations(s, line, 1)
        }
        # Inline spans of a paragraph (lines joined by spaces; starts[]
        # holds where each line begins, for line numbers).
        function paragraph(    text, pos, i, n, ticks, endat, span, line, k) {
            text = para
            pos = 0
            while (match(text, /`+/)) {
                ticks = substr(text, RSTART, RLENGTH)
                n = RLENGTH
                pos += RSTART - 1 + n
                text = substr(text, RSTART + n)
                endat = index(text, ticks)
                if (endat == 0) break
                span = substr(text, 1, endat - 1)
                line = para_line
                for (k = 1; k <= nlines; k++) if (starts[k] <= pos) line = para_line + k - 1
                span = invocations(span, line, 0)
                # rule 6: only a span that starts with an option
                if (span ~ /^[ \t(]*--[a-z]/) print FILENAME, line, "span", span
                pos += endat - 1 + n
                text = substr(text, endat + n)
            }
            para = ""; nlines = 0
        }
        /^[ \t]*```/ {
            if (para != "") paragraph()
            fence = !fence; heredoc = ""; cont = ""
            next
        }
        fence {
            if ($0 ~ /\\$/) {
                if (cont == "") cont_line = FNR
                cont = cont substr($0, 1, length($0) - 1) " "
                next
            }
            if (cont != "") { fenced(cont $0, cont_line); cont = ""; next }
            fenced($0, FNR)
            next
        }
        /^[ \t]*$/ { if (para != "") paragraph(); next }
        {
            if (para == "") { para_line = FNR; nlines = 0 }
            starts[++nlines] = length(para)
            para = para (para == "" ? "" : " ") $0
        }
    ' "$@"
}

# mawk has no ENDFILE: end each file with a blank line so its last
# paragraph is read.
docs=("$root/README.md" "$root"/docs/*.md)
for doc in "${docs[@]}"; do
    rel=${doc#"$root"/}
    mkdir -p "$work/docs/$(dirname "$rel")"
    { cat "$doc"; echo; } >"$work/docs/$rel"
done
(cd "$work/docs" && extract README.md docs/*.md) >"$work/records"
if [ -n "${DOCS_CHECK_LIST:-}" ]; then
    cat "$work/records" # what the checks below read
fi

# ---- the allowlist (rule 6) ----

touch "$work/allow.used"
allowed() { # FILE OPTION
    local file option reason
    while read -r file option reason; do
        case "$file" in '' | '#'*) continue ;; esac
        if [ "$file" = "$1" ] && { [ "$option" = "$2" ] || [ "$option" = '*' ]; }; then
            echo "$file $option" >>"$work/allow.used"
            return 0
        fi
    done <"$allow"
    return 1
}
if [ -f "$allow" ]; then
    n=0
    while IFS= read -r entry; do
        n=$((n + 1))
        case "$entry" in '' | '#'*) continue ;; esac
        read -r file option reason <<<"$entry"
        [ -n "${reason:-}" ] || problem "docs_check.allow:$n" "'$entry' gives no reason"
        [ -f "$root/$file" ] || problem "docs_check.allow:$n" "no file $file"
    done <"$allow"
else
    allow=/dev/null
fi

# ---- the checks (rules 4-6) ----

has_option() { # COMMAND OPTION
    grep -qxF -- "$2" "$work/options.$1"
}

checked=0
while IFS=$'\t' read -r file line kind text; do
    checked=$((checked + 1))
    where="$file:$line"
    if [ "$kind" = inv ]; then
        read -r -a words <<<"$text"
        cmd=${words[0]%%[^a-z]*} # "sinew import: ..." quotes a message
        if ! grep -qxF -- "$cmd" <<<"$commands"; then
            problem "$where" "'sinew $cmd': no such command ('sinew --help' lists: ${commands//$'\n'/ })"
            continue
        fi
        rest=("${words[@]:1}")
        if [ "$cmd" = cluster ] && [ ${#rest[@]} -gt 0 ] && [[ ${rest[0]} =~ ^[a-z]+$ ]]; then
            if ! grep -qxF -- "${rest[0]}" <<<"$subcommands"; then
                problem "$where" "'sinew cluster ${rest[0]}': no such subcommand (sinew cluster --help: ${subcommands//$'\n'/ })"
            fi
        fi
        for word in "${rest[@]}"; do
            word=${word#[[(]}
            word=${word%%=*}
            word=${word%%[],)]*}
            [[ $word =~ ^--?[a-z][a-z0-9-]*$ ]] || continue
            if ! has_option "$cmd" "$word"; then
                problem "$where" "'sinew $cmd $word': 'sinew $cmd --help' has no $word"
            fi
        done
    else
        for word in $text; do
            word=${word#[[(]}
            word=${word%%=*}
            word=${word%%[],.:;)]*}
            [[ $word =~ ^--[a-z][a-z0-9-]*$ ]] || continue
            grep -qxF -- "$word" "$work/options.all" && continue
            allowed "$file" "$word" && continue
            problem "$where" "'$word' is no option of any sinew command (add it to node/test/docs_check.allow with a reason if it is not meant to be one)"
        done
    fi
done <"$work/records"

if [ "$checked" -eq 0 ]; then
    problem "$root" "no code found in the documents: the extraction is broken"
fi
if [ "$allow" != /dev/null ]; then
    while read -r file option reason; do
        case "$file" in '' | '#'*) continue ;; esac
        grep -qxF -- "$file $option" "$work/allow.used" ||
            echo "docs_check.allow: '$file $option' matches nothing any more (remove it)" >&2
    done <"$allow"
fi

# ---- docs/operations.md's settings table (rule 7) ----

ops="$root/docs/operations.md"
awk '
    /^### Settings/ { on = 1; next }
    on && /^#/ { on = 0 }
    on && /^\| `-/ {
        row = $0
        gsub(/\\\|/, "/", row) # a | escaped in a cell
        split(row, cell, "|")
        first = cell[2]; file = cell[3]
        gsub(/^ +| +$/, "", file)
        n = 0
        while (match(first, /`-[^` ]*/)) {
            opt = substr(first, RSTART + 1, RLENGTH - 1)
            first = substr(first, RSTART + RLENGTH)
            print FNR "\t" opt "\t" (n++ == 0 ? file : "")
        }
    }' "$ops" >"$work/table"
if [ ! -s "$work/table" ]; then
    problem "docs/operations.md" "no settings table under '### Settings'"
fi
while IFS=$'\t' read -r line opt file; do
    if ! has_option serve "$opt"; then
        problem "docs/operations.md:$line" "the settings table lists $opt, which 'sinew serve --help' does not"
    fi
    [ -n "$file" ] || continue
    name=${opt#--}
    case "$file" in
        "(command line only)") ;;
        "\`$name\`" | "\`$name\` (repeatable)") ;;
        *) problem "docs/operations.md:$line" "the settings table gives $opt the file name $file, not \`$name\`" ;;
    esac
done <"$work/table"
while read -r opt; do
    if ! cut -f2 "$work/table" | grep -qxF -- "$opt"; then
        problem "docs/operations.md" "'sinew serve --help' has $opt, which the settings table under '### Settings' lacks"
    fi
done <"$work/options.serve"

if [ "$problems" -gt 0 ]; then
    echo "docs_check: $problems problem(s) in the documentation" >&2
    exit 1
fi
echo "docs_check: $checked pieces of code, $(wc -l <"$work/table") settings: ok"
