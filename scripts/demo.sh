#!/usr/bin/env bash
# The main job, short (about a minute after the build): install deps, build,
# simulate a bouncing ball with restitution 0.7, train a CD-Lagrange network
# and a ResNet baseline on it (touch feedback, reference-code settings, 1000
# epochs each), and compare their rollouts from the first state over the
# whole trajectory.
#
# 300 samples of 0.02 s (6 s) hold the ball's first four bounces; after
# them the 0.7 ball's bounces last fewer than a few samples each and no
# model sampled at 0.02 s can time them. 1000 epochs: at 300 the
# CD-Lagrange network has not yet learnt the impacts' timing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
out=demo-out
mkdir -p "$out"
imp=./build/impulse
$imp simulate bouncing-ball --restitution 0.7 --steps 300 --noise 0.05 --seed 1 -o "$out/ball.npz"
$imp train cdl    --data "$out/ball.npz" --epochs 1000 -o "$out/cdl.npz"
$imp train resnet --data "$out/ball.npz" --epochs 1000 -o "$out/resnet.npz"
echo
echo "Each model rolled out from the first state over the 300 samples, against the noise-free truth:"
echo "rmse: the rollout's error in height and velocity (lower is better); energy error: how far the"
echo "model's energy is from the data's along the way (the ball loses energy at each bounce, so the drift"
echo "from the start says little); contact timing: how far each true bounce is from the nearest"
echo "predicted one, with how many bounces each side has (the truth has 4)."
echo
$imp eval --model "$out/cdl.npz"    --data "$out/ball.npz"
$imp eval --model "$out/resnet.npz" --data "$out/ball.npz"
