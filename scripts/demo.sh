#!/usr/bin/env bash
# The main job, short: install deps, build, simulate a bouncing ball, train a
# CD-Lagrange network on it, and evaluate it against the ResNet baseline.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
mkdir -p demo-out
./build/impulse info
