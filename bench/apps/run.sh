#!/usr/bin/env bash
# Runs the ports in bench/apps with `accl run --time` and prints one line
# per app: wall time, device busy time and time reading input files, as
# `--time` reports them ("-" where it reports none; the host backend has no
# device time). Where `--time` has no row for file reading, the app's own
# clock() around its reading is shown, marked "(app)".
#
#     bench/apps/run.sh ACCL_BINARY small|gpu [--host]
#
# `small` runs each app at its default size (seconds on lavapipe); `gpu` at
# the sizes the apps document for a GPU (hotspot 2048^2 x 10,000 steps,
# srad 4096^2 x 2,000, nw 16384, pathfinder 1M x 100, miniWeather 2000 x
# 1000). Hotspot's input files are generated first (gen_hotspot.py) into
# $ACCL_APPS_DATA (default: a temporary directory, removed at the end).
# Exits 1 if any app fails; its output is printed then.
set -euo pipefail

if [[ $# -lt 2 || ( $2 != small && $2 != gpu ) ]]; then
    echo "usage: $0 ACCL_BINARY small|gpu [--host]" >&2
    exit 2
fi
accl=$1
preset=$2
backend=()
if [[ ${3:-} == --host ]]; then
    backend=(--host)
fi
here=$(cd "$(dirname "$0")" && pwd)
data=${ACCL_APPS_DATA:-}
if [[ -z $data ]]; then
    data=$(mktemp -d)
    trap 'rm -rf "$data"' EXIT
fi

if [[ $preset == small ]]; then
    hs=(32 32 10)
    apps=(
        "hotspot|${hs[*]} $data/temp_32x32 $data/power_32x32"
        "srad|"
        "nw|"
        "pathfinder|"
        "miniweather|"
    )
else
    hs=(2048 2048 10000)
    apps=(
        "hotspot|${hs[*]} $data/temp_2048x2048 $data/power_2048x2048"
        "srad|4096 4096 0 127 0 127 0.5 2000"
        "nw|16384 10"
        "pathfinder|1000000 100"
        "miniweather|2000 1000 10"
    )
fi
python3 "$here/gen_hotspot.py" "${hs[0]}" "${hs[1]}" "$data"

# The total ms of the `--time` rows whose name mentions reading or file
# I/O, summed; "-" when there is none.
read_ms() {
    awk 'tolower($0) ~ /(read|file|i\/o|input)/ && $0 !~ /^host code/ && $0 !~ /interpreted/ {
             for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/ && $(i+1) ~ /^[0-9.]+$/) { s += $(i+1); n = 1; break }
         }
         END { if (n) printf "%.1f", s; else printf "-" }'
}

status=0
printf '%-12s %12s %16s %14s  %s\n' app "wall ms" "device busy ms" "read input ms" result
for entry in "${apps[@]}"; do
    name=${entry%%|*}
    args=${entry#*|}
    file=$here/$name.accl
    if [[ ! -f $file ]]; then
        printf '%-12s %12s %16s %14s  %s\n' "$name" - - - "missing ($file)"
        status=1
        continue
    fi
    # shellcheck disable=SC2086
    if out=$("$accl" run "${backend[@]}" --time "$file" $args 2>&1); then
        ok=passed
    else
        ok=FAILED
        status=1
    fi
    wall=$(sed -n 's/.*wall \([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -1)
    busy=$(sed -n 's/^device busy \([0-9.]*\) ms.*/\1/p' <<<"$out" | tail -1)
    rd=$(read_ms <<<"$out")
    if [[ $rd == - ]]; then
        # The app's own clock() around its reading, marked as such.
        own=$(sed -n 's/.*; read \([0-9.]*\) s,.*/\1/p' <<<"$out" | tail -1)
        if [[ -n $own ]]; then
            rd=$(awk -v s="$own" 'BEGIN { printf "%.1f(app)", s * 1000 }')
        fi
    fi
    printf '%-12s %12s %16s %14s  %s\n' "$name" "${wall:--}" "${busy:--}" "$rd" "$ok"
    if [[ $ok == FAILED ]]; then
        printf '%s\n' "$out" | sed 's/^/    /'
    fi
done
exit $status
