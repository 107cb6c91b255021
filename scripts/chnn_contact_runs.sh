#!/usr/bin/env bash
# Issue 25: CHNN and CLNN with contact on the constrained systems with
# contacts (docs/chnn-systems.md, "Learning the contacts"). For each system
# (chain-ground:3, chain-ground-elastic:3, gyroscope-wall): 400 training
# trajectories (seed 0) and 100 test trajectories (seed 2) from
# `impulse simulate`; CLNN with contact (e and mu learned per contact, from
# e 0.5 and mu 0.25) and without (--no-contact), evaluated on the test set
# (eval --json: the learned e and mu per contact against the declared ones,
# the relative state error summed over the first 5 steps and over the
# rollout, the per-trajectory geometric mean). Training: 900 epochs, batch
# 100, hidden 128, one thread, the model's own seed K (--seed K).
# --contact-substeps R: passed to `impulse train` (a window near a contact
# integrated with R RK4 substeps per sample, each followed by the contact
# map; absent: the command's default).
# --precision P: passed to `impulse train` (single: the network's products
# with every dimension above four in float; double; absent: the command's
# default, double for clnn).
# Resumable: a finished run (its eval JSON exists) is not redone, and a run
# stopped during training continues from its training state (DIR/NAME.npz.state.npz).
#
#   bash scripts/chnn_contact_runs.sh [--out DIR] [--seeds "0 1 2"] [--systems "cg cge gw"]
#       [--models "clnn"] [--epochs E] [--variants "contact no-contact"] [--contact-substeps R]
#       [--precision P]
#
# Defaults: --out results/chnn-contact, --seeds 0, --systems "cg gw cge",
# --models clnn, --epochs 900. Each run is niced (19); runs go one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=results/chnn-contact SEEDS=0 SYSTEMS="cg gw cge" MODELS=clnn EPOCHS=900 VARIANTS="contact no-contact"
CSUB=() PREC=()
while [ $# -gt 0 ]; do
    case "$1" in
    --out) OUT=$2; shift 2 ;;
    --seeds) SEEDS=$2; shift 2 ;;
    --systems) SYSTEMS=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --epochs) EPOCHS=$2; shift 2 ;;
    --variants) VARIANTS=$2; shift 2 ;;
    --contact-substeps) CSUB=(--contact-substeps "$2"); shift 2 ;;
    --precision) PREC=(--precision "$2"); shift 2 ;;
    *) echo "chnn_contact_runs.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
B=${IMPULSE:-build/impulse}
mkdir -p "$OUT"
name() { case $1 in cg) echo chain-ground:3 ;; cge) echo chain-ground-elastic:3 ;; gw) echo gyroscope-wall ;; esac; }
for s in $SYSTEMS; do
    [ -f "$OUT/${s}_train.npz" ] || nice -n 19 "$B" simulate "$(name "$s")" --trajectories 400 --seed 0 -o "$OUT/${s}_train.npz"
    [ -f "$OUT/${s}_test.npz" ] || nice -n 19 "$B" simulate "$(name "$s")" --trajectories 100 --seed 2 -o "$OUT/${s}_test.npz"
    for mdl in $MODELS; do
        for k in $SEEDS; do
            for c in $VARIANTS; do
                r="$OUT/${s}_${mdl}_${c}_s$k"
                [ -f "$r.eval.json" ] && continue
                # --skip-factor 1e6: a minibatch whose rollout fails numerically is skipped, not fatal;
                # a finished training (its JSON and checkpoint exist) is only evaluated
                if ! [ -s "$r.train.json" ] || ! [ -f "$r.npz" ]; then
                    resume=()
                    [ -f "$r.npz.state.npz" ] && resume=(--resume "$r.npz.state.npz")
                    cs=()
                    [ "$c" = contact ] && cs=("${CSUB[@]}")
                    nice -n 19 "$B" train "$mdl" --data "$OUT/${s}_train.npz" -o "$r.npz" --epochs "$EPOCHS" --batch 100 \
                        --hidden 128 --threads 1 --seed "$k" --quiet --json --skip-factor 1e6 "--$c" "${cs[@]}" \
                        "${PREC[@]}" "${resume[@]}" > "$r.train.json.tmp"
                    mv "$r.train.json.tmp" "$r.train.json"
                fi
                nice -n 19 "$B" eval --model "$r.npz" --data "$OUT/${s}_test.npz" --json > "$r.eval.json.tmp"
                mv "$r.eval.json.tmp" "$r.eval.json"
            done
        done
    done
done
# Summary of every finished run: DIR/summary.md
/usr/bin/python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(out, "*.eval.json"))):
    r = json.load(open(f))
    name = os.path.basename(f)[:-len(".eval.json")]
    sysname, model, contact, seed = name.split("_")
    touched = ""
    if r.get("contacts"):
        cs = [c for c in r["contacts"] if (c["e"], c["mu"]) != (0.5, 0.25)]
        touched = "; ".join(f"{c['body']}: e {c['e']:.4f} ({c['e_declared']:g}), mu {c['mu']:.4f} ({c['mu_declared']:g})"
                            for c in r["contacts"])
    im = r.get("impact_energy", {}).get("impact_map")
    imap = f"{im['rel_error']:.4g} ({im['within_5pct']} of {im['impacts']})" if im and im.get("impacts") else "-"
    rows.append((r["system"], model, contact, seed[1:], r["sum_rel_err_5"], r["sum_rel_err"], r["mean_geo_rel_err"],
                 r["mean_energy_err"], r["mean_violation"], touched, imap))
with open(os.path.join(out, "summary.md"), "w") as f:
    f.write("| system | model | contact | seed | rel. err. summed, 5 steps | summed, rollout | geometric mean | "
            "energy err. | constraint violation | learned e, mu per contact (declared) | "
            "energy lost at impacts, impact map alone: rel. err. (impacts within 5 %) |\n")
    f.write("|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write("| " + " | ".join([r[0], r[1], r[2], r[3]] + [f"{x:.4g}" for x in r[4:9]] + [r[9], r[10]]) + " |\n")
print(open(os.path.join(out, "summary.md")).read())
PY
