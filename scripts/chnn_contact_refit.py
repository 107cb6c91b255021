"""Issue 25: a second stage for e and mu of a CHNN/CLNN-with-contact
checkpoint, on training data only. The potential and the masses stay at the
checkpoint's values; e and mu of the contacts that act are re-fitted by
minimising training's loss on the checkpoint's own training windows (one
random 5-state window per trajectory, imp_ctrain_make_chunks with the run's
seed) whose loss depends on the contact law, with R RK4 steps per sample
interval and the contact map after each (R 20: the truth simulator's dt/20
for sustained contact). Search: a grid of e by 0.05 x mu by 0.025 (default
e 0.50-0.95, mu 0.05-0.25; --e-grid, --mu-grid), then two refinements
around the best point (steps 0.01 / 0.005, then 0.002 / 0.001). Prints one
JSON line per checkpoint.

  IMPULSE_LIBRARY=build/libimpulse.so /usr/bin/python3 scripts/chnn_contact_refit.py \
      --data TRAIN.npz --seed K [--substeps R] [--save DIR] [--e-grid LO HI] [--mu-grid LO HI] MODEL.npz

--save DIR writes the checkpoint with the re-fitted e and mu to DIR (same
file name), for `impulse eval`.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chnn_contact_profile as prof  # noqa: E402
import impulse  # noqa: E402  (path set by chnn_contact_profile)
from impulse.data import _as_dataset  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--substeps", type=int, default=20)
    ap.add_argument("--save", default=None)
    ap.add_argument("--e-grid", type=float, nargs=2, default=(0.50, 0.95), metavar=("LO", "HI"))
    ap.add_argument("--mu-grid", type=float, nargs=2, default=(0.05, 0.25), metavar=("LO", "HI"))
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    d = _as_dataset(a.data)
    z, dt = np.ascontiguousarray(d._z("data"), dtype=np.float64), d._dt()
    _, fit = prof.windows(z, dt, a.seed)
    for path in a.models:
        t0 = time.time()
        m = impulse.load_model(path)
        p0 = m.params.copy()
        # the contacts that act: moved from the initial e 0.5, mu 0.25 (those that never touch drift by
        # weight decay alone, below 1e-3)
        cs = [c["contact"] for c in m.contacts if abs(c["e"] - 0.5) > 1e-3 or abs(c["mu"] - 0.25) > 1e-3]
        if len(cs) != 1:
            sys.exit("chnn_contact_refit.py: one acting contact expected")
        c0 = m.contacts[cs[0]]
        L1 = prof.Loss(m, dt)
        lw = L1.per_window(p0, fit)
        moved = L1.per_window(prof.set_law(m, p0, cs, 0.5, 0.25), fit)
        L1.free()
        cw = fit[np.abs(moved - lw) > 1e-12 * np.maximum(lw, 1e-300)]
        L = prof.Loss(m, dt, substeps=a.substeps)
        cache = {}

        def f(e, mu):
            key = (round(e, 6), round(mu, 6))
            if key not in cache:
                cache[key] = L(prof.set_law(m, p0, cs, e, mu), cw)
            return cache[key]

        es = np.arange(a.e_grid[0], a.e_grid[1] + 1e-9, 0.05)
        mus = np.arange(a.mu_grid[0], a.mu_grid[1] + 1e-9, 0.025)
        best = min(((f(e, mu), e, mu) for e in es for mu in mus))
        for de, dmu in ((0.01, 0.005), (0.002, 0.001)):
            _, eb, mb = best
            es = [eb + k * de for k in range(-5, 6) if 0 < eb + k * de < 1]
            mus = [mb + k * dmu for k in range(-5, 6) if mb + k * dmu > 0]
            es, mus = [min(max(e, 1e-4), 1 - 1e-4) for e in es], [max(mu, 1e-4) for mu in mus]
            best = min([best] + [(f(e, mu), e, mu) for e in es for mu in mus])
        L.free()
        r = {"model": path, "substeps": a.substeps, "contact_windows": int(len(cw)), "fitted_windows": int(len(fit)),
             "stage1": {"e": c0["e"], "mu": c0["mu"], "loss": f(c0["e"], c0["mu"])},
             "refit": {"e": float(best[1]), "mu": float(best[2]), "loss": float(best[0])},
             "declared": {"e": c0["e_declared"], "mu": c0["mu_declared"]}, "evaluations": len(cache),
             "seconds": round(time.time() - t0, 1)}
        if a.save:
            os.makedirs(a.save, exist_ok=True)
            m.params[:] = prof.set_law(m, p0, cs, best[1], best[2])
            m.save(os.path.join(a.save, os.path.basename(path)))
            r["saved"] = os.path.join(a.save, os.path.basename(path))
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
