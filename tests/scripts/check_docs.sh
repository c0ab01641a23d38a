#!/usr/bin/env bash
# tests/scripts/check_docs.sh: the user's documents (README.md, docs/*.md) stay short, carry no development history, and link only to files and headings that exist.
#
#   check_docs.sh [ROOT]       ROOT: the source tree (default: two folders above this script)
#
# Checked, each failure printed as FILE:LINE: what:
# - README.md has at most 260 lines (OZ_DOCS_MAX_README_LINES overrides) and
#   holds the two commands (`scripts/demo`, `scripts/run-tests`; .ci/run calls the latter);
# - no development history in README.md or docs/*.md: numbered sessions, calls,
#   runs, issues or helpers, commit hashes (7-40 hex digits with a letter and a
#   digit), "landed", branch names (exp-..., pending-..., branch `...`), the
#   design notes' file names (phase22.md, ozaki2.md) or "outside this repository";
#   BENCHMARKS.md, the dated log, is not checked;
# - every relative link [text](path) or [text](path#anchor) in those files names an
#   existing file, and an anchor a heading of the target (GitHub's slugs).
# Exit status: 0 all good, 1 a check failed, 2 usage error.
set -u
[ $# -le 1 ] || { echo "usage: check_docs.sh [ROOT]" >&2; exit 2; }
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
[ -f "$root/README.md" ] || { echo "check_docs: no README.md in $root" >&2; exit 2; }
max_lines=${OZ_DOCS_MAX_README_LINES:-260}
cd "$root" || exit 2

files=(README.md)
for f in docs/*.md; do [ -f "$f" ] && files+=("$f"); done
failures=0
fail() { echo "$1"; failures=$((failures + 1)); }

# ---- README: length and the two commands
lines=$(wc -l <README.md)
[ "$lines" -le "$max_lines" ] || fail "README.md:$lines: $lines lines, at most $max_lines"
for cmd in scripts/demo scripts/run-tests; do
    grep -qE "^ *$cmd\$" README.md \
        || fail "README.md:1: the command '$cmd' is not on a line of its own"
done

# ---- no development history
history_patterns=(
    '\b[Ss]essions? [0-9]'
    '\b[Cc]alls? [0-9]'
    '\b[Rr]un [0-9]'
    '\b[Rr]uns [0-9]+(-[0-9]+| and [0-9])'
    '\b[Ii]ssues? #?[0-9]'
    '\b[Hh]elpers? [0-9]'
    '\b(not )?landed\b'
    '\b(exp|pending)-[a-z0-9]'
    '\bexp/s[0-9]'
    '\b[Bb]ranch(es)? `'
    '\b(phase22|ozaki2)\.md\b'
    'outside this repository'
)
for f in "${files[@]}"; do
    for p in "${history_patterns[@]}"; do
        while IFS= read -r hit; do
            [ -n "$hit" ] && fail "$f:${hit%%:*}: development history ('$p'): ${hit#*:}"
        done < <(grep -nE "$p" "$f" | cut -c1-160)
    done
    # commit hashes: 7 to 40 hex digits with at least one letter and one digit
    while IFS= read -r hit; do
        word=${hit#*:}
        [[ $word =~ ^[0-9]+e$ ]] && continue      # the mantissa of 4.1091879061484997e-11
        case $word in *[a-f]*) ;; *) continue ;; esac
        case $word in *[0-9]*) ;; *) continue ;; esac
        fail "$f:${hit%%:*}: a commit hash? '$word'"
    done < <(grep -noE '\b[0-9a-f]{7,40}\b' "$f")
done

# ---- links
slugs() {   # the anchors GitHub makes of a Markdown file's headings (outside fenced code)
    awk '/^```/ { fence = !fence; next } !fence && /^#+ / { sub(/^#+ +/, ""); print }' "$1" \
        | tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'
}
nlinks=0
for f in "${files[@]}"; do
    dir=$(dirname "$f")
    while IFS= read -r hit; do
        n=${hit%%:*}
        target=${hit#*:}
        target=${target#](}
        target=${target%)}
        target=${target%% *}                      # drop a "title"
        case $target in http://*|https://*|mailto:*) continue ;; esac
        nlinks=$((nlinks + 1))
        path=${target%%#*}
        anchor=""
        case $target in *'#'*) anchor=${target#*#} ;; esac
        if [ -z "$path" ]; then
            file=$f
        else
            file=$dir/$path
            [ -e "$file" ] || { fail "$f:$n: link to a missing file: $target"; continue; }
        fi
        if [ -n "$anchor" ]; then
            case $file in
            *.md)
                slugs "$file" | grep -qxF -- "$anchor" \
                    || fail "$f:$n: link to a missing heading: $target (no '#$anchor' in $file)" ;;
            esac
        fi
    done < <(grep -noE '\]\([^) ]+( "[^"]*")?\)' "$f")
done

if [ $failures -eq 0 ]; then
    echo "check_docs: ok (${#files[@]} files, $nlinks relative links, README $lines lines)"
    exit 0
fi
echo "check_docs: $failures problem(s) in ${#files[@]} files"
exit 1
