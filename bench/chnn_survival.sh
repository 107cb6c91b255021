#!/usr/bin/env bash
# Do the baselines train from their defaults? For every seed, system and
# model, train with the CLI's default settings (800 chunks of the docs'
# 800-trajectory data, batch 200, lr 3e-3 (1e-3 on the rotor), the default
# warm-up and gradient-norm bound) for EPOCHS
# epochs and report whether the run survived (no divergence error) and its
# last loss. Seed-major order, so a partial run covers every system and
# model for the first seeds. One line per run, then a summary.
#
#   bash bench/chnn_survival.sh [build/impulse]
#   SEEDS="0 1 2" SYSTEMS="gyroscope" MODELS="hnn" EPOCHS=20 OUT=dir bash bench/chnn_survival.sh
set -u
IMPULSE=${1:-build/impulse}
SEEDS=${SEEDS:-"0 1 2 3 4 5 6 7 8 9"}
SYSTEMS=${SYSTEMS:-"pendulum-chain:3 gyroscope rotor"}
MODELS=${MODELS:-"hnn delan node"}
EPOCHS=${EPOCHS:-20}
THREADS=${THREADS:-1}
OUT=${OUT:-survival}
mkdir -p "$OUT"
for sys in $SYSTEMS; do
    data="$OUT/${sys//:/}.npz"
    [ -f "$data" ] || "$IMPULSE" simulate "$sys" --trajectories 800 --quiet -o "$data" || exit 1
done
pass=0 fail=0
for seed in $SEEDS; do
    for sys in $SYSTEMS; do
        for model in $MODELS; do
            data="$OUT/${sys//:/}.npz"
            log="$OUT/${model}_${sys//:/}_s$seed.log"
            if "$IMPULSE" train "$model" --data "$data" --epochs "$EPOCHS" --seed "$seed" --threads "$THREADS" \
                -o "$OUT/${model}_${sys//:/}_s$seed.npz" >"$log" 2>&1; then
                loss=$(grep -o 'final loss [0-9.e+-]*' "$log" | awk '{print $3}')
                # states are O(1), so an untrained model's mean L1 error is below 1: a
                # last loss above 10 is a rollout that blew up without overflowing
                if awk -v l="$loss" 'BEGIN { exit !(l > 10) }'; then
                    fail=$((fail + 1))
                    echo "DIVERGED seed $seed $sys $model: final loss $loss"
                    continue
                fi
                pass=$((pass + 1))
                echo "ok    seed $seed $sys $model: final loss $loss"
            else
                fail=$((fail + 1))
                echo "FAIL  seed $seed $sys $model: $(tail -n 1 "$log")"
            fi
        done
    done
done
echo "survived $pass of $((pass + fail)) runs of $EPOCHS epochs"
[ "$fail" -eq 0 ]
