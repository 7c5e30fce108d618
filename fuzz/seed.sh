#!/usr/bin/env bash
# Fill the working corpora fuzz/corpus/<target>/ (ignored by git) from the
# example programs and the committed seeds in fuzz/seeds/ (docs/fuzzing.md).
#
#   fuzz/seeds/common/     front_end and pipeline
#   fuzz/seeds/<target>/   one target
#
# The pipeline target also gets each example with its large integer
# constants shrunk (so that it runs to the end under the fuzzing limits) and
# every input longer than the target's 4 KiB cap is left out of its corpus.
# Files are named by the SHA-1 of their content, as libFuzzer names its own,
# so running this again adds nothing twice. Existing corpus files are kept.
set -euo pipefail
fuzz="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$fuzz")"

add() { # add TARGET FILE
    local dir="$fuzz/corpus/$1" sum
    mkdir -p "$dir"
    sum=$(sha1sum "$2" | cut -d' ' -f1)
    cp "$2" "$dir/$sum"
}

examples=()
for d in "$root/examples" "$root/../shared/examples"; do
    [ -d "$d" ] || continue
    for f in "$d"/*.accl; do
        [ -e "$f" ] && examples+=("$f")
    done
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for f in "${examples[@]}" "$fuzz"/seeds/common/* "$fuzz"/seeds/front_end/*; do
    add front_end "$f"
done

for f in "${examples[@]}"; do
    small="$tmp/$(basename "$f")"
    # `1 << 20` -> `1 << 4`, 1000 -> 16, 100_000 -> 16
    sed -E -e 's/1 << [0-9]+/1 << 4/g' -e 's/\b[0-9][0-9_]{2,}\b/16/g' "$f" > "$small"
    for g in "$f" "$small"; do
        if [ "$(wc -c < "$g")" -le 4096 ]; then add pipeline "$g"; fi
    done
done
for f in "$fuzz"/seeds/common/* "$fuzz"/seeds/pipeline/*; do
    add pipeline "$f"
done

# surfaces: its committed corpus (format strings, CSV, .npy, parameters;
# the first byte picks which).
for f in "$fuzz"/seeds/surfaces/*; do
    add surfaces "$f"
done

# lsp: framing and edit sessions (the first byte picks which).
for f in "$fuzz"/seeds/lsp/*; do
    add lsp "$f"
done

# imports: up to five files split at NUL bytes (main.accl first).
for f in "$fuzz"/seeds/imports/*; do
    add imports "$f"
done

for t in front_end pipeline surfaces lsp imports; do
    echo "$t: $(ls "$fuzz/corpus/$t" | wc -l) files in fuzz/corpus/$t"
done
