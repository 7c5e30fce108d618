#!/usr/bin/env bash
# On a GPU machine, from the repository root (gpu-prep's carry): where the
# ports of bench/apps spend their process time outside `--time`'s wall
# (twice each, scripts/gpu/exit_cost.py), nw's process without --time, and
# nw and srad under --time a few times (the spread of their wall).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json; [ -f .mpi/use.sh ] && . .mpi/use.sh /tmp/mpi
d=/tmp/apps-data; mkdir -p $d; python3 bench/apps/gen_hotspot.py 2048 2048 $d >/dev/null
A=.gpu/accl
for k in 1 2; do
python3 scripts/gpu/exit_cost.py $A bench/apps/hotspot.accl 2048 2048 10000 $d/temp_2048x2048 $d/power_2048x2048
python3 scripts/gpu/exit_cost.py $A bench/apps/srad.accl 4096 4096 0 127 0 127 0.5 2000
python3 scripts/gpu/exit_cost.py $A bench/apps/nw.accl 16384 10
python3 scripts/gpu/exit_cost.py $A bench/apps/pathfinder.accl 1000000 100
python3 scripts/gpu/exit_cost.py $A bench/apps/miniweather.accl 2000 1000 10
done
for k in 1 2 3; do s=$(date +%s.%N); $A run bench/apps/nw.accl 16384 10 | tail -1; e=$(date +%s.%N); echo "no --time: process $(awk -v a="$s" -v z="$e" 'BEGIN { printf "%.3f", z - a }') s"; done
# The CUDA context that holds the clocks starts after a second open; its
# start and release may land in the exit.
for k in 1 2; do for hc in 1 0; do
  echo "ACCL_HOLD_CLOCKS=$hc:"; ACCL_HOLD_CLOCKS=$hc python3 scripts/gpu/exit_cost.py $A bench/apps/nw.accl 16384 10
  ACCL_HOLD_CLOCKS=$hc python3 scripts/gpu/exit_cost.py $A bench/apps/hotspot.accl 2048 2048 10000 $d/temp_2048x2048 $d/power_2048x2048
done; done
for k in 1 2 3; do $A run --time bench/apps/nw.accl 16384 10 2>&1 | grep -E "^nw|wall [0-9]|interpreted host"; done
for k in 1 2; do $A run --time bench/apps/srad.accl 4096 4096 0 127 0 127 0.5 2000 2>&1 | grep -E "^srad|wall [0-9]|host loops"; done
# Huge pages for large arrays, on and off.
for k in 1 2; do for hp in 1 0; do
  for app in "nw.accl 16384 10" "miniweather.accl 2000 1000 10" "pathfinder.accl 1000000 100"; do
    ACCL_HUGE_PAGES=$hp $A run --time bench/apps/$app 2>&1 | grep -E "init|wall [0-9]" | sed 's/^.*init/init/' | tr '\n' ' '; echo " ($app, huge pages $hp)"
  done
done; done
