#!/usr/bin/env bash
# On a GPU machine (after gpu-prep's prefix), from the repository root:
# where pathfinder's and nw's walls go (three runs each: the device's open
# with its vkCreateDevice and queues, host memory imports, the host copies
# and launches), then every shared example once under --time (status,
# process wall, the open's queues), so a change to opening or launching is
# seen on all of them.
#
#     scripts/gpu/open_and_launch.sh ACCL_BINARY
A=$(realpath "$1")
for k in 1 2 3; do
  "$A" run --time bench/apps/pathfinder.accl 1000000 100 2>&1 |
    grep -E "^pathfinder|wall [0-9]|open|imported|outside|interpreted host|launches  |copies  "
done
for k in 1 2 3; do
  "$A" run --time bench/apps/nw.accl 16384 10 2>&1 |
    grep -E "^nw|wall [0-9]|interpreted host|launches  |launch \(host|vkCreate"
done
cd .gpu/examples || exit 1
for f in *.accl; do
  s=$(date +%s%N)
  timeout 120 "$A" run --time "$f" > /tmp/example.txt 2>&1
  rc=$?
  e=$(date +%s%N)
  q=$(grep -o 'vkCreateDevice [0-9.]* ms ([0-9]* queue(s))' /tmp/example.txt)
  echo "$f: rc $rc, process $(( (e - s) / 1000000 )) ms, $q $(grep -m1 -iE 'error|fail' /tmp/example.txt)"
done
