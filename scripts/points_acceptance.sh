#!/usr/bin/env bash
# The same comparison runs as a part of a sweep plan: impulse reproduce contact
# --only points (docs/contact.md); this script made the numbers docs/cdl.md quotes.
# Issue 24's "Several bodies" acceptance measurement on bouncing-points:5
# (docs/cdl.md, "Several point masses in a box"): five point masses in a 2-D
# box, each (point, wall) contact with its own restitution e and Coulomb
# friction mu (impulse simulate bouncing-points:5), 20 noise-free training
# trajectories (seed 100) and 4 test trajectories (seed 200) of 300 samples
# at dt 0.01. Trains CD-Lagrange with --friction (e and mu learned per
# contact pair; e from 0.5, mu from the default data estimate, never from
# the file's true contact_restitution/contact_friction), ResNetContact and
# ResNet per seed; evaluates each by its rollout RMSE on the test
# trajectories, and CD-Lagrange's e and mu per contact against the truth.
# CD-Lagrange runs twice: with the labels as given (every sample of a point
# resting on the floor labelled, in the state loss) and with
# --contact-labels onset (one label per impact; resting targets left out of
# the state loss, as the impulse law cannot hold a point at rest).
# Counts each contact's impacts in the training data (reversals of its
# normal velocity within one sample's travel of its wall, from the
# noise-free states) and how many of them slide (the impulse does not stop
# the tangential velocity: the only impacts from which mu can be read).
# Resumable: a finished step (its output file exists) is not redone; rerun
# the same command after an interruption.
#
#   bash scripts/points_acceptance.sh [--out DIR] [--seeds N] [--epochs E] [--jobs J] [--summary-only]
#
# Defaults: --out results/points, --seeds 5, --epochs 150, --jobs 2.
# Writes DIR/summary.md and DIR/summary.json; --summary-only writes them
# from the runs finished so far (it reads each run's predictions.npz, which
# DIR/.gitignore keeps out of the repository with the other .npz files).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=results/points SEEDS=5 EPOCHS=150 JOBS=2 SUMMARY_ONLY=0
while [ $# -gt 0 ]; do
    case "$1" in
    --out) OUT=$2; shift 2 ;;
    --seeds) SEEDS=$2; shift 2 ;;
    --epochs) EPOCHS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --summary-only) SUMMARY_ONLY=1; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "points_acceptance.sh: error: unknown option '$1'" >&2; exit 2 ;;
    esac
done
IMPULSE=${IMPULSE:-build/impulse}
PY=/usr/bin/python3
[ -x "$IMPULSE" ] || { echo "points_acceptance.sh: error: $IMPULSE not built (scripts/build.sh)" >&2; exit 1; }
mkdir -p "$OUT"

[ -f "$OUT/train.npz" ] || "$IMPULSE" simulate bouncing-points:5 --trajectories 20 --seed 100 -o "$OUT/train.npz"
[ -f "$OUT/test.npz" ] || "$IMPULSE" simulate bouncing-points:5 --trajectories 4 --seed 200 -o "$OUT/test.npz"

# one run: NAME MODEL TRAIN-OPTIONS...; trains, then evaluates
run() {
    local name=$1 model=$2
    shift 2
    local dir="$OUT/$name"
    mkdir -p "$dir"
    if [ ! -f "$dir/model.npz" ]; then
        local resume=()
        [ -f "$dir/model.npz.state.npz" ] && resume=(--resume "$dir/model.npz.state.npz")
        "$IMPULSE" train "$model" --data "$OUT/train.npz" --epochs "$EPOCHS" --quiet "$@" "${resume[@]}" \
            -o "$dir/model.npz" > "$dir/train.out" 2>&1 || { echo "points_acceptance.sh: $name: training failed" >&2; cat "$dir/train.out" >&2; return 1; }
    fi
    [ -f "$dir/eval.json" ] || { "$IMPULSE" eval --model "$dir/model.npz" --data "$OUT/test.npz" --json \
        --predictions "$dir/predictions.npz" > "$dir/eval.json.tmp" && mv "$dir/eval.json.tmp" "$dir/eval.json"; }
    echo "points_acceptance.sh: $name done" >&2
}
export -f run
export OUT EPOCHS IMPULSE

tasks=()
for s in $(seq 0 $((SEEDS - 1))); do
    tasks+=("cdl.s$s cdl --seed $s --friction --restitution-init 0.5")
    tasks+=("cdl-onset.s$s cdl --seed $s --friction --restitution-init 0.5 --contact-labels onset")
    tasks+=("resnet-contact.s$s resnet-contact --seed $s")
    tasks+=("resnet.s$s resnet --seed $s")
done
[ "$SUMMARY_ONLY" = 1 ] || printf '%s\n' "${tasks[@]}" | xargs -P "$JOBS" -I{} bash -c 'run {}'

"$PY" - "$OUT" <<'PYEOF'
import json, os, sys
import numpy as np
out = sys.argv[1]
d = np.load(os.path.join(out, "train.npz"))
e_true, mu_true = d["contact_restitution"], d["contact_friction"]
pairs, normals, offsets = d["contact_pairs"], d["contact_normals"], d["contact_offsets"]
q, v = d["q_clean"], d["qdot_clean"]
dt, g = 0.01, 9.81
walls = ["floor", "left", "right", "ceiling"]
P = len(e_true)
impacts, fast, sliding = np.zeros(P, int), np.zeros(P, int), np.zeros(P, int)
for p in range(P):
    k = int(pairs[p, 1]); n = normals[p]; t = np.array([-n[1], n[0]])
    x, u = q[..., 2 * k:2 * k + 2], v[..., 2 * k:2 * k + 2]
    gap = x @ n - offsets[p]
    un, ut = u @ n, u @ t
    acc_t = np.array([0.0, -g]) @ t  # free flight's tangential acceleration
    # an impact between samples i and i+1: closing, then opening, the wall within one sample's travel
    hit = (un[:, :-1] < 0) & (un[:, 1:] > 0) & (gap[:, :-1] <= -un[:, :-1] * dt + 1e-9)
    impacts[p] = int(hit.sum())
    fast[p] = int((un[:, :-1][hit] < -0.5).sum())
    ut0, ut1 = ut[:, :-1][hit], ut[:, 1:][hit] - acc_t * dt
    sliding[p] = int(((np.abs(ut1) > 1e-3) & (np.sign(ut1) == np.sign(ut0))).sum())
rows = []
for name in sorted(os.listdir(out)):
    f = os.path.join(out, name, "eval.json")
    if not os.path.isfile(f):
        continue
    ev = json.load(open(f))
    st = np.load(os.path.join(out, name, "predictions.npz"))["states"]
    pos = st[..., :10]
    row = {"run": name, "config": name.rsplit(".", 1)[0], "seed": int(name.rsplit(".s", 1)[1]), "rmse": ev["rmse"],
           "outside_box_max": float(max(0, -pos.min(), (pos - 2.0).max()))}
    if "restitution" in ev:
        row["e"], row["mu"] = ev["restitution"], ev["friction"]
    rows.append(row)
order = ["cdl", "cdl-onset", "resnet-contact", "resnet"]
configs = [c for c in order if any(r["config"] == c for r in rows)]
def mse(vals):
    vals = np.asarray(vals, float)
    return vals.mean(), (vals.std(ddof=1) / np.sqrt(len(vals)) if len(vals) > 1 else float("nan"))
lines = ["Rollout RMSE on the 4 test trajectories (mean ± standard error over seeds):", "",
         "| model | seeds | rollout RMSE | median | per seed | farthest outside the box (m) |", "|---|---|---|---|---|---|"]
for c in configs:
    rs = sorted([r for r in rows if r["config"] == c], key=lambda r: r["seed"])
    m, se = mse([r["rmse"] for r in rs])
    lines.append("| %s | %d | %.3f ± %.3f | %.3f | %s | %.3f |" % (c, len(rs), m, se, np.median([r["rmse"] for r in rs]), ", ".join("%.3f" % r["rmse"] for r in rs),
                                                           max(r["outside_box_max"] for r in rs)))
seeds = sorted({r["seed"] for r in rows})
complete = [s for s in seeds if len([r for r in rows if r["seed"] == s]) == len(configs)]
nets = [c for c in configs if not c.startswith("cdl")]
first = {}
for c in [c for c in configs if c.startswith("cdl")]:
    by = {(r["config"], r["seed"]): r["rmse"] for r in rows}
    first[c] = [s for s in complete if all(by[(c, s)] < by[(n, s)] for n in nets)]
    lines.append("%s below %s in %d of %d seeds with every model finished." % (c, " and ".join(nets), len(first[c]), len(complete)))
lines.append("")
contacts = {}
for c in [c for c in configs if c.startswith("cdl")]:
    cd = sorted([r for r in rows if r["config"] == c], key=lambda r: r["seed"])
    E, M = np.array([r["e"] for r in cd]), np.array([r["mu"] for r in cd])
    lines += ["%s: learned e and mu per contact (%d seeds; mean ± standard error; worst: largest abs error over the seeds; "
              "impacts in the training data, of them faster than 0.5 m/s along the normal, and sliding: the impulse does not stop the tangential velocity):" % (c, len(cd)), "",
              "| pair | point | wall | impacts | fast | sliding | e true | e learned | worst abs(e err) | mu true | mu learned | worst abs(mu err) |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    contacts[c] = []
    for p in range(P):
        em, ese = mse(E[:, p]); mm, mse_ = mse(M[:, p])
        ew, mw = float(np.abs(E[:, p] - e_true[p]).max()), float(np.abs(M[:, p] - mu_true[p]).max())
        contacts[c].append({"pair": p, "point": int(pairs[p, 1]), "wall": walls[p % 4], "impacts": int(impacts[p]),
                            "fast_impacts": int(fast[p]), "sliding_impacts": int(sliding[p]), "e_true": float(e_true[p]),
                            "e": E[:, p].tolist(), "e_worst_error": ew, "mu_true": float(mu_true[p]), "mu": M[:, p].tolist(),
                            "mu_worst_error": mw})
        lines.append("| %d | %d | %s | %d%s | %d | %d | %.3f | %.3f ± %.3f | %.3f%s | %.3f | %.3f ± %.3f | %.3f%s |" % (
            p, pairs[p, 1], walls[p % 4], impacts[p], " (< 5)" if impacts[p] < 5 else "", fast[p], sliding[p], e_true[p], em, ese,
            ew, " ✓" if ew <= 0.03 else "", mu_true[p], mm, mse_, mw, " ✓" if mw <= 0.03 else ""))
    ok = [x for x in contacts[c] if x["impacts"] >= 5]
    lines += ["", "%s: contacts with at least 5 training impacts: %d of %d; e within 0.03 in every seed: %d of them (%s); mu within 0.03 in every seed: %d of them (%s)."
              % (c, len(ok), P, sum(x["e_worst_error"] <= 0.03 for x in ok), ", ".join(str(x["pair"]) for x in ok if x["e_worst_error"] <= 0.03),
                 sum(x["mu_worst_error"] <= 0.03 for x in ok), ", ".join(str(x["pair"]) for x in ok if x["mu_worst_error"] <= 0.03)), ""]
lines.append("Contacts with fewer than 5 training impacts: %s." % (", ".join("%d (%s of point %d: %d)" % (p, walls[p % 4], pairs[p, 1], impacts[p])
                                                                  for p in range(P) if impacts[p] < 5) or "none"))
json.dump({"runs": rows, "contacts": contacts, "cdl_first_seeds": first, "complete_seeds": complete},
          open(os.path.join(out, "summary.json"), "w"), indent=1)
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PYEOF
