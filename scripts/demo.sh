#!/usr/bin/env bash
# The main job, short: install deps, build, simulate a bouncing ball with
# restitution 0.7, train a CD-Lagrange network and a ResNet baseline on it
# (touch feedback, reference-code settings, 300 epochs), and compare their
# rollouts from the first state over the whole trajectory.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
out=demo-out
mkdir -p "$out"
imp=./build/impulse
$imp simulate bouncing-ball --restitution 0.7 --noise 0.05 --seed 1 -o "$out/ball.npz"
$imp train cdl    --data "$out/ball.npz" --epochs 300 -o "$out/cdl.npz"
$imp train resnet --data "$out/ball.npz" --epochs 300 -o "$out/resnet.npz"
echo
$imp eval --model "$out/cdl.npz"    --data "$out/ball.npz"
$imp eval --model "$out/resnet.npz" --data "$out/ball.npz"
