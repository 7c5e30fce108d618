#!/usr/bin/env bash
# hotspot at 2048^2 after 1, 2, 10, 100 and 1000 steps on the device, and
# after 1, 2 and 10 on the host backend (the same inputs): where a device
# result leaves the host's.
accl=$1
d=${ACCL_APPS_DATA:-/tmp/apps-data}
mkdir -p "$d"
[ -f "$d/temp_2048x2048" ] || python3 bench/apps/gen_hotspot.py 2048 2048 "$d"
"$accl" run bench/apps/hotspot.accl 2>&1 | tail -1
for n in 1 2 10 100 1000; do
    "$accl" run bench/apps/hotspot.accl 2048 2048 $n "$d/temp_2048x2048" "$d/power_2048x2048" 2>&1 | tail -1
done
for n in 1 2 10; do
    "$accl" run --host bench/apps/hotspot.accl 2048 2048 $n "$d/temp_2048x2048" "$d/power_2048x2048" 2>&1 | tail -1
done
