#!/usr/bin/env bash
# One place for every system dependency of accl, so a fresh machine (and CI)
# needs nothing installed by hand. Idempotent: installs only what is missing.
#   libvulkan1              the Vulkan loader (ash loads it at run time)
#   mesa-vulkan-drivers     lavapipe, a real Vulkan 1.3 driver on the CPU
#   vulkan-validationlayers the Khronos validation layer (tests run with it on)
#   spirv-tools             spirv-val / spirv-dis (every generated module is validated)
#   vulkan-tools            vulkaninfo, for diagnosing a machine
#   openmpi-bin             mpirun, to run a script on several ranks (the `mpi` feature)
#   libopenmpi-dev          Open MPI's headers and libmpi, which the `mpi` crate links
#   libclang-dev            libclang, for the bindgen step of the `mpi` crate's build
#   pkg-config              how that build finds Open MPI
#   python3, python3-venv   the Python package's environment (below), when missing
# Source it from a script that needs them:  . scripts/setup.sh
set -u
pkgs=(libvulkan1 mesa-vulkan-drivers vulkan-validationlayers spirv-tools vulkan-tools
      openmpi-bin libopenmpi-dev libclang-dev pkg-config)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" != 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null 2>&1 || true
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || {
    echo "setup: apt-get install ${missing[*]} failed" >&2; return 1 2>/dev/null || exit 1; }
fi
# Python for the package in python/ (docs/python.md): a virtual environment
# in the checkout (.venv, ignored), so the system Python is left alone, with
# maturin and what the package's tests use (python/requirements-test.txt).
# A Debian python3 needs python3-venv for `python3 -m venv`.
root_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py_missing=()
command -v python3 >/dev/null 2>&1 || py_missing+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || py_missing+=(python3-venv)
if [ ${#py_missing[@]} -gt 0 ]; then
  echo "setup: installing ${py_missing[*]}" >&2
  sudo=""; [ "$(id -u)" != 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null 2>&1 || true
  $sudo apt-get install -y -qq --no-install-recommends "${py_missing[@]}" >/dev/null || {
    echo "setup: apt-get install ${py_missing[*]} failed" >&2; return 1 2>/dev/null || exit 1; }
fi
if [ ! -x "$root_dir/.venv/bin/python" ]; then
  echo "setup: making the Python environment .venv" >&2
  python3 -m venv "$root_dir/.venv" || { echo "setup: python3 -m venv failed" >&2; return 1 2>/dev/null || exit 1; }
fi
if ! [ -x "$root_dir/.venv/bin/maturin" ] ||
   ! "$root_dir/.venv/bin/python" -c 'import numpy, pytest, ipykernel, jupyter_client, nbclient, nbformat' >/dev/null 2>&1; then
  echo "setup: installing python/requirements-test.txt into .venv" >&2
  "$root_dir/.venv/bin/python" -m pip install -q -r "$root_dir/python/requirements-test.txt" || {
    echo "setup: pip install failed" >&2; return 1 2>/dev/null || exit 1; }
fi
# No driver is pinned here: the loader finds every installed driver and accl
# picks the best device (discrete GPU first, lavapipe only when there is no
# GPU). scripts/test pins lavapipe for the tests.
true
