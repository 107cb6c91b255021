#!/bin/bash
# Do two builds of impulse give the same CD-Lagrange numbers, bit for bit?
# Simulates 6 contact systems with each build, trains `cdl` (30 epochs,
# hidden 16) on the first build's data with the default step, event timing,
# friction, projection, no touch and event timing with friction, rolls the
# default and event models out, and compares every array of every file
# (all but each checkpoint's meta text). Then simulates every contact
# simulator at length (10 trajectories x 400 samples: bouncing-points:5,
# bouncing-disks:5, bouncing-disk, ball-box, compliant-ball-box, box-toss,
# chain-ground:3, gyroscope-wall, colliding-pendulums), whose chaotic
# collisions turn a last-bit change of a gap into a different trajectory,
# and trains CHNN and CLNN with --contact on chain-ground:3 and
# colliding-pendulums (the constrained systems' contact frames) and rolls
# them out.
#   scripts/cdl_same_numbers.sh OLD/impulse NEW/impulse [workdir]
# Prints the differing arrays and "N arrays compared, M differ"; exits 1
# when any differs. Takes about five minutes under load (gyroscope-wall:
# 36 to 70 s a build); run it under nice -n 19.
set -eu
old=$(readlink -f "$1") new=$(readlink -f "$2") dir=${3:-$(mktemp -d)}
mkdir -p "$dir" && cd "$dir"
run() { # BIN TAG
    local B=$1 T=$2
    $B simulate bouncing-ball --trajectories 2 --steps 200 --noise 0.01 --seed 3 -o $T-ball.npz >/dev/null
    $B simulate newtons-cradle --trajectories 2 --steps 200 --noise 0.01 --seed 3 -o $T-cradle.npz >/dev/null
    local s
    for s in ball-box:box bouncing-points:5:pts bouncing-disks:3:disks compliant-ball-box:cbox; do
        $B simulate ${s%:*} --trajectories 4 --steps 120 --noise 0.01 --seed 3 -o $T-${s##*:}.npz >/dev/null
    done
    local d v
    for d in ball cradle box pts disks cbox; do
        for v in "step:" "event:--impact-timing event" "fric:--friction" "proj:--projection" "notouch:--no-touch" \
                 "evfric:--impact-timing event --friction"; do
            # --friction fails (nothing can slide) where no pair has a tangent, alike in both builds
            $B train cdl --data old-$d.npz --epochs 30 --hidden 16 ${v#*:} -o $T-$d-${v%%:*}.npz >/dev/null 2>&1 || true
        done
        $B rollout --model $T-$d-step.npz --data old-$d.npz -o $T-$d-roll.npz >/dev/null
        $B rollout --model $T-$d-event.npz --data old-$d.npz -o $T-$d-rollev.npz >/dev/null
    done
    for s in bouncing-points:5 bouncing-disks:5 bouncing-disk ball-box compliant-ball-box box-toss chain-ground:3 \
             gyroscope-wall colliding-pendulums; do
        $B simulate $s --trajectories 10 --steps 400 --seed 5 -o $T-long-${s/:/}.npz >/dev/null
    done
    # the constrained systems' contacts: CHNN and CLNN with --contact, trained and rolled out
    local m
    for s in chain-ground:3:cg colliding-pendulums:cp; do
        $B simulate ${s%:*} --trajectories 6 --steps 100 --seed 1 -o $T-${s##*:}.npz >/dev/null
        for m in chnn clnn; do
            $B train $m --data old-${s##*:}.npz --epochs 10 --batch 100 --hidden 16 --threads 1 --seed 1 --quiet \
                --contact -o $T-${s##*:}-$m.npz >/dev/null
            $B rollout --model $T-${s##*:}-$m.npz --data old-${s##*:}.npz -o $T-${s##*:}-$m-roll.npz >/dev/null
        done
    done
}
run "$old" old
run "$new" new
/usr/bin/python3 - <<'PY'
import glob, sys
import numpy as np
n = bad = 0
olds = sorted(glob.glob('old-*.npz'))
for f in olds:
    a, b = np.load(f), np.load('new-' + f[4:])
    for k in a.files:
        if k == 'meta':
            continue
        n += 1
        x, y = a[k], b[k]
        if x.shape != y.shape or x.tobytes() != y.tobytes():
            bad += 1
            print('differs:', f[4:], k)
print(f'{len(olds)} files, {n} arrays compared, {bad} differ')
sys.exit(1 if bad else 0)
PY
