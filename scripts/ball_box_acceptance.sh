#!/usr/bin/env bash
# The same comparison runs as a part of a sweep plan: impulse reproduce contact
# --only ball-box (docs/contact.md); this script made the numbers docs/cdl.md quotes.
# Issue 24's acceptance experiment for the ball in a box (docs/cdl.md,
# "Ball in a box"): spring-damper contact with an apparent restitution of
# 0.80 (impulse simulate compliant-ball-box), a floor and two walls, per-body
# touch labels, noise 0.05, 24 training and 6 noise-free test trajectories
# of 400 samples at dt 0.02. Trains CD-Lagrange (e learned per wall, from
# 0.5, not from the data's meta), ResNetContact and ResNet per seed, and
# CD-Lagrange again without the labels (--no-touch: the contact network
# trained without touch feedback; --geometry-gates: geometry alone;
# --contact-labels geometry on a copy of the training set without its
# labels: labels derived from the motion and the geometry; -tol0: with
# --contact-tol 0, a labelled step's impulse to the pairs its drifted
# position penetrates, else the body's nearest pair; -projection: with
# --projection); evaluates each by its rollout RMSE on the
# test trajectories, each wall's learned e against the truth, and the lowest
# height any rollout reaches. CD-Lagrange runs with the data's default
# impact law (Newton's), with --projection, and with the paper's law. Resumable: a finished step (its output file
# exists) is not redone; rerun the same command after an interruption.
#
#   bash scripts/ball_box_acceptance.sh [--out DIR] [--seeds N] [--epochs E] [--jobs J] [--summary-only]
#
# Defaults: --out results/ball-box, --seeds 3, --epochs 200, --jobs 2.
# Writes DIR/summary.md and DIR/summary.json (one row per run); --summary-only
# writes them from the runs finished so far.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=results/ball-box SEEDS=3 EPOCHS=200 JOBS=2 SUMMARY_ONLY=0
while [ $# -gt 0 ]; do
    case "$1" in
    --out) OUT=$2; shift 2 ;;
    --seeds) SEEDS=$2; shift 2 ;;
    --epochs) EPOCHS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --summary-only) SUMMARY_ONLY=1; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "ball_box_acceptance.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
IMPULSE=${IMPULSE:-build/impulse}
PY=/usr/bin/python3
[ -x "$IMPULSE" ] || { echo "ball_box_acceptance.sh: error: $IMPULSE not built (scripts/build.sh)" >&2; exit 1; }
mkdir -p "$OUT"

# data: the training set (noisy, touch labels) and the test set (noise-free,
# its first trajectory from another start than the training set's first)
[ -f "$OUT/train.npz" ] || "$IMPULSE" simulate compliant-ball-box --trajectories 24 --noise 0.05 --seed 100 \
    -o "$OUT/train.npz"
[ -f "$OUT/test.npz" ] || "$IMPULSE" simulate compliant-ball-box --trajectories 6 --seed 200 --q0 2.5 --v0 -2 \
    -o "$OUT/test.npz"
# the training set without its labels (the array 'contact' left out)
[ -f "$OUT/train-nolabels.npz" ] || "$PY" -c 'import sys, numpy as np; d = dict(np.load(sys.argv[1])); del d["contact"]; np.savez(sys.argv[2], **d)' \
    "$OUT/train.npz" "$OUT/train-nolabels.npz"

# run NAME MODEL TRAIN-OPTIONS...: trains, then evaluates (scripts/acceptance_run.sh)
ACCEPT_NAME=ball_box_acceptance.sh
source scripts/acceptance_run.sh

tasks=()
for s in $(seq 0 $((SEEDS - 1))); do
    tasks+=("cdl.s$s cdl --seed $s --restitution-init 0.5")
    tasks+=("cdl-projection.s$s cdl --seed $s --restitution-init 0.5 --projection")
    tasks+=("cdl-paperlaw.s$s cdl --seed $s --restitution-init 0.5 --impact-law paper")
    tasks+=("cdl-nolabels.s$s cdl --seed $s --restitution-init 0.5 --no-touch")
    tasks+=("cdl-geometry.s$s cdl --seed $s --restitution-init 0.5 --geometry-gates")
    tasks+=("cdl-geomlabels.s$s cdl --seed $s --restitution-init 0.5 --data $OUT/train-nolabels.npz --contact-labels geometry")
    tasks+=("cdl-geomlabels-tol0.s$s cdl --seed $s --restitution-init 0.5 --data $OUT/train-nolabels.npz --contact-labels geometry --contact-tol 0")
    tasks+=("cdl-geomlabels-tol0-projection.s$s cdl --seed $s --restitution-init 0.5 --data $OUT/train-nolabels.npz --contact-labels geometry --contact-tol 0 --projection")
    tasks+=("cdl-tol0.s$s cdl --seed $s --restitution-init 0.5 --contact-tol 0")
    tasks+=("resnet-contact.s$s resnet-contact --seed $s")
    tasks+=("resnet.s$s resnet --seed $s")
done
[ "$SUMMARY_ONLY" = 1 ] || printf '%s\n' "${tasks[@]}" | xargs -P "$JOBS" -I{} bash -c 'run {}'

# the summary: rollout RMSE, learned e per pair, the lowest height reached
"$PY" - "$OUT" <<'EOF'
import json, os, sys
import numpy as np
out = sys.argv[1]
truth_e = 0.8
rows = []
for name in sorted(os.listdir(out)):
    d = os.path.join(out, name)
    if not os.path.isfile(os.path.join(d, "eval.json")):
        continue
    ev = json.load(open(os.path.join(d, "eval.json")))
    states = np.load(os.path.join(d, "predictions.npz"))["states"]
    x, y = states[..., 0], states[..., 1]
    row = {"run": name, "config": name.rsplit(".", 1)[0], "seed": int(name.rsplit(".s", 1)[1]),
           "rmse": ev["rmse"], "min_height": float(y.min()),
           "min_height_per_rollout": [float(v) for v in y.min(axis=1)],
           "max_abs_x": float(np.abs(x).max())}
    if "restitution" in ev:
        row["e"] = ev["restitution"]
        row["e_error"] = [abs(e - truth_e) for e in ev["restitution"]]
    rows.append(row)
json.dump(rows, open(os.path.join(out, "summary.json"), "w"), indent=1)
configs = sorted({r["config"] for r in rows}, key=lambda c: ["cdl", "cdl-projection", "cdl-paperlaw", "cdl-nolabels", "cdl-geometry", "cdl-geomlabels", "cdl-geomlabels-tol0", "cdl-geomlabels-tol0-projection", "cdl-tol0", "resnet-contact", "resnet"].index(c))
lines = ["| model | seeds | rollout RMSE (mean; per seed) | e floor, left, right (mean) | worst abs(e - 0.8) | lowest height | abs(x) max |",
         "|---|---|---|---|---|---|---|"]
for c in configs:
    rs = [r for r in rows if r["config"] == c]
    rm = [r["rmse"] for r in rs]
    e = "n/a" if "e" not in rs[0] else ", ".join("%.3f" % np.mean([r["e"][p] for r in rs]) for p in range(3))
    ew = "n/a" if "e" not in rs[0] else "%.3f" % max(max(r["e_error"]) for r in rs)
    lines.append("| %s | %d | %.3f; %s | %s | %s | %.3f | %.3f |" % (c, len(rs), np.mean(rm), ", ".join("%.3f" % v for v in rm), e, ew,
                                                             min(r["min_height"] for r in rs), max(r["max_abs_x"] for r in rs)))
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
