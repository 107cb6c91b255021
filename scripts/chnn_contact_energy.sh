#!/usr/bin/env bash
# Issue 25: energy lost at impacts and constraint violation away from them,
# for the models of scripts/chnn_contact_runs.sh (docs/chnn-systems.md,
# "Learning the contacts"). Every checkpoint DIR/SYS_MODEL_VARIANT_sK.npz
# is evaluated on DIR/SYS_test.npz with `impulse eval --json`, for a model
# with contact twice: DOPRI5 between the contact maps (the default) and
# --contact-rk4 (one RK4 step per sample, training's integrator).
# Resumable: a finished evaluation (its JSON exists) is not redone.
#
#   bash scripts/chnn_contact_energy.sh [--models DIR] [--out DIR] [--integrators "dopri5 rk4"]
#       [--systems "cg cge gw"]
#
# --integrators: the rollouts to evaluate a model with contact with (default
# both); --systems: only these systems' checkpoints (default all).
# Defaults: --models results/chnn-contact, --out results/chnn-contact-energy.
# Each evaluation is niced (19); they run one at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
MODELS=results/chnn-contact OUT=results/chnn-contact-energy INTEGS="dopri5 rk4" SYSTEMS=""
while [ $# -gt 0 ]; do
    case "$1" in
    --models) MODELS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --integrators) INTEGS=$2; shift 2 ;;
    --systems) SYSTEMS=$2; shift 2 ;;
    *) echo "chnn_contact_energy.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
B=${IMPULSE:-build/impulse}
mkdir -p "$OUT"
for m in "$MODELS"/*_*_*_s*.npz; do
    r=$(basename "$m" .npz)
    s=${r%%_*}
    [ -n "$SYSTEMS" ] && ! [[ " $SYSTEMS " == *" $s "* ]] && continue
    case $r in *_no-contact_*) integs=dopri5 ;; *) integs=$INTEGS ;; esac
    for g in $integs; do
        j="$OUT/$r.$g.json"
        [ -f "$j" ] && continue
        flag=()
        [ "$g" = rk4 ] && flag=(--contact-rk4)
        nice -n 19 "$B" eval --model "$m" --data "$MODELS/${s}_test.npz" --json "${flag[@]}" > "$j.tmp"
        mv "$j.tmp" "$j"
    done
done
# Summary of every finished evaluation: DIR/summary.md
/usr/bin/python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
f = open(os.path.join(out, "summary.md"), "w")
f.write("| system | model | contact | seed | rollout integrator | rel. err. summed, 5 steps | summed, rollout | "
        "constraint violation | away from impacts (states) | impacts | energy lost, one step: rel. err. | "
        "per impact mean / max | within 5 % | rollouts: rel. err. | per impact mean / max | within 5 % | "
        "steps the map acted in (one step) | energy lost there, truth / model, of the kinetic energy | "
        "impact map alone: located impacts | fraction of kinetic energy lost, rel. err. (learned masses) | "
        "per impact mean / max | within 5 % | rel. err. (true masses) | normalised compliance: rel. err. |\n")
f.write("|" + "---|" * 24 + "\n")
for p in sorted(glob.glob(os.path.join(out, "*.json"))):
    r = json.load(open(p))
    run, integ = os.path.basename(p)[:-len(".json")].rsplit(".", 1)
    sysname, model, contact, seed = run.split("_")
    row = [r["system"], model, contact, seed[1:], integ, f"{r['sum_rel_err_5']:.4g}", f"{r['sum_rel_err']:.4g}",
           f"{r['mean_violation']:.2g}"]
    ie = r.get("impact_energy")
    if ie:
        o, q = ie["one_step"], ie["rollout"]
        row += [f"{r['mean_violation_away']:.2g} ({r['violation_away_states']})", str(o["impacts"]),
                f"{o['rel_error']:.3g}", f"{o['mean_rel_error']:.3g} / {o['max_rel_error']:.3g}",
                f"{o['within_5pct']}", f"{q['rel_error']:.3g}", f"{q['mean_rel_error']:.3g} / {q['max_rel_error']:.3g}",
                f"{q['within_5pct']}"]
        a = ie["at_model_impacts"]
        row += [str(a["steps"]), f"{a['truth_lost'] / a['kinetic']:.3g} / {a['model_lost'] / a['kinetic']:.3g}"]
        im, it = ie.get("impact_map"), ie.get("impact_map_true_masses")
        if im:  # evaluations made before eval reported the impact map alone have none
            row += [str(im["impacts"]), f"{im['rel_error']:.3g}", f"{im['mean_rel_error']:.3g} / {im['max_rel_error']:.3g}",
                    f"{im['within_5pct']}", f"{it['rel_error']:.3g}", f"{ie['compliance']['rel_error']:.2g}"]
        else:
            row += [""] * 6
    else:
        row += [""] * 16
    f.write("| " + " | ".join(row) + " |\n")
f.close()
print(open(os.path.join(out, "summary.md")).read())
PY
