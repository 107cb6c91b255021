#!/usr/bin/env bash
# Learned restitution and friction on sliding impacts (docs/cdl.md, "Learned
# contact law"): a spinning disk bouncing on a floor (impulse simulate
# bouncing-disk, e = 0.8, mu = 0.2). Per seed: 20 training trajectories
# (noise 0.01), then CDL with friction (e and mu learned from data estimates)
# with the paper's impact law and with --impact-law newton, CDL without
# friction (e learned) and ResNetContact, the same epochs each;
# rollouts on 10 held-out noise-free trajectories (another seed and first
# state). Prints the table.
#   usage: scripts/reproduce_friction.sh [OUT_DIR] [SEEDS] [EPOCHS]   (defaults: friction-run 3 200)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-friction-run}
SEEDS=${2:-3}
EPOCHS=${3:-200}
B=$(pwd)/build/impulse
[ -x "$B" ] || bash scripts/build.sh
mkdir -p "$OUT"
cd "$OUT"
export IMPULSE_PROGRESS=0
"$B" simulate bouncing-disk --trajectories 10 --seed 100 --q0 1.2 --spin 25 --v0 -0.5 -o test.npz 2>/dev/null
for s in $(seq 1 "$SEEDS"); do
    [ -f "train$s.npz" ] || "$B" simulate bouncing-disk --trajectories 20 --seed "$s" --noise 0.01 -o "train$s.npz" 2>/dev/null
    for m in cdl-friction cdl-friction-newton cdl resnet-contact; do
        [ -f "$m-$s.json" ] && continue
        case $m in
        cdl-friction) args=(cdl --friction --restitution-init data) ;;
        cdl-friction-newton) args=(cdl --friction --restitution-init data --impact-law newton) ;;
        cdl) args=(cdl --restitution-init data) ;;
        resnet-contact) args=(resnet-contact) ;;
        esac
        "$B" train "${args[@]}" --data "train$s.npz" --epochs "$EPOCHS" --seed "$s" --quiet -o "$m-$s.npz"
        "$B" eval --model "$m-$s.npz" --data test.npz --json > "$m-$s.json.tmp" && mv "$m-$s.json.tmp" "$m-$s.json"
    done
done
/usr/bin/python3 - "$SEEDS" <<'EOF'
import json, math, statistics, sys
seeds = range(1, int(sys.argv[1]) + 1)
f = lambda v: f"{v:.3g}" if abs(v) >= 1e3 else f"{v:.3f}"  # diverged rollouts print as 1e+28
print(f"bouncing disk (e = 0.8, mu = 0.2), rollout RMSE (paper) on 10 held-out trajectories x 300 steps, {len(seeds)} seeds")
print("| model | RMSE mean ± s.e. | median | per seed | learned e (per seed) | learned mu (per seed) |")
print("|---|---|---|---|---|---|")
for m, title in [("cdl-friction", "CDL + friction (AP Newton)"),
                 ("cdl-friction-newton", "CDL + friction, --impact-law newton"),
                 ("cdl", "CDL, no friction"), ("resnet-contact", "ResNetContact")]:
    r = [json.load(open(f"{m}-{s}.json")) for s in seeds]
    x = [d["rmse"] for d in r]
    se = statistics.stdev(x) / math.sqrt(len(x)) if len(x) > 1 else float("nan")
    e = ", ".join(f"{d['restitution'][0]:.3f}" for d in r) if "restitution" in r[0] else ""
    mu = ", ".join(f"{d['friction'][0]:.3f}" for d in r) if "friction" in r[0] else ""
    print(f"| {title} | {f(statistics.mean(x))} ± {f(se)} | {f(statistics.median(x))} | "
          f"{', '.join(f(v) for v in x)} | {e} | {mu} |")
EOF
