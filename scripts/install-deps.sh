#!/usr/bin/env bash
# Install the Debian 12 packages impulse needs to build, test and plot.
# Idempotent: skips apt when everything is already there.
set -euo pipefail
PKGS=(build-essential cmake pkg-config clang libclang-rt-14-dev
      libopenblas-dev liblapacke-dev zlib1g-dev libmatio-dev libhdf5-dev libnlopt-dev
      python3-numpy python3-matplotlib python3-pip python3-venv python3-setuptools python3-wheel-whl
      libopenmpi-dev openmpi-bin
      libmujoco-dev)  # optional at build time: the cube's MuJoCo peer (peers/cube_mujoco.c)
# Optional extras: python3-torch for bench/ (the PyTorch peers).
if [[ "${IMPULSE_BENCH_DEPS:-0}" == 1 ]]; then PKGS+=(python3-torch python3-scipy); fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
