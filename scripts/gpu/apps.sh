#!/usr/bin/env bash
# On a GPU machine (after gpu-prep's prefix): the ports of bench/apps at
# their GPU sizes, each with `accl run --time` (whole output under $OUT),
# the table of bench/apps/run.sh, the time to read hotspot's inputs at disk
# speed (O_DIRECT) and from the page cache, and the PyTorch peer of
# hotspot's solve on the same inputs.
#
#     scripts/gpu/apps.sh ACCL_BINARY
set -uo pipefail
accl=$1
out=${OUT:-/tmp/apps-out}
mkdir -p "$out"
export ACCL_APPS_DATA=${ACCL_APPS_DATA:-/tmp/apps-data}
mkdir -p "$ACCL_APPS_DATA"
d=$ACCL_APPS_DATA
python3 bench/apps/gen_hotspot.py 2048 2048 "$d"
for f in "$d/temp_2048x2048" "$d/power_2048x2048"; do
    bytes=$(stat -c %s "$f")
    s=$(date +%s.%N); dd if="$f" of=/dev/null bs=16M iflag=direct status=none; e=$(date +%s.%N)
    s2=$(date +%s.%N); cat "$f" > /dev/null; e2=$(date +%s.%N)
    awk -v b="$bytes" -v a="$s" -v z="$e" -v a2="$s2" -v z2="$e2" -v f="$(basename "$f")" \
        'BEGIN { printf "read %s: %d bytes, O_DIRECT %.1f ms (%.0f MB/s), page cache %.1f ms\n", f, b, (z-a)*1e3, b/(z-a)/1e6, (z2-a2)*1e3 }'
done | tee "$out/read.txt"
run() { # NAME ARGS...
    local name=$1; shift
    local s e
    s=$(date +%s.%N)
    "$accl" run --time "bench/apps/$name.accl" "$@" > "$out/$name.stdout" 2> "$out/$name.time"
    local rc=$?
    e=$(date +%s.%N)
    printf '%-12s rc %d, process wall %s s: ' "$name" "$rc" "$(awk -v a="$s" -v z="$e" 'BEGIN { printf "%.3f", z - a }')"
    head -c 300 "$out/$name.stdout" | tr '\n' ' '
    echo
}
{
run hotspot 2048 2048 10000 "$d/temp_2048x2048" "$d/power_2048x2048"
run srad 4096 4096 0 127 0 127 0.5 2000
run nw 16384 10
run pathfinder 1000000 100
run miniweather 2000 1000 10
} | tee "$out/apps.txt"
for n in hotspot srad nw pathfinder miniweather; do
    echo "== $n"; grep -E "device busy|wall|host phases|^  [a-z]" "$out/$n.time" | head -24
done
python3 scripts/gpu/hotspot_torch.py 2048 2048 10000 "$d/temp_2048x2048" "$d/power_2048x2048" 2>&1 | tail -2
