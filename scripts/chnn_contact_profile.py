"""Issue 25: training-data checks of a CHNN/CLNN-with-contact checkpoint,
without the test set.

1. Held-out training windows. Training fits one random 5-state window per
   trajectory (imp_ctrain_make_chunks with the run's seed); the other
   non-overlapping windows of the same training trajectories are never
   fitted. Their mean L1 loss (training's loss: RK4 with the contact map,
   imp_ctrain_chunk_loss) is a validation loss drawn from the training file:
   printed for every checkpoint given, over all held-out windows and over
   those whose loss depends on the contact law ("contact windows": changing
   e and mu changes their loss).
2. Profile in e and mu (--profile): the same loss on the contact windows with
   the potential and the masses fixed at the checkpoint's values and e, mu of
   the contacts that act set on a grid; prints the grid's minimum and how much
   the loss rises 0.02 away from it.

  IMPULSE_LIBRARY=build/libimpulse.so /usr/bin/python3 scripts/chnn_contact_profile.py \
      --data TRAIN.npz [--seed K] [--heldout-from A] [--profile] MODEL.npz [MODEL.npz ...]

--seed is the training seed of the checkpoints (the windows fitted by
--windows one, left out of the held-out set); --heldout-from A keeps only
trajectories A.. in the held-out set (for --windows all runs); --json
prints one JSON object per checkpoint instead of text.
"""
import argparse
import ctypes
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import impulse  # noqa: E402
from impulse import _lib  # noqa: E402
from impulse._lib import check, lib, ptr  # noqa: E402
from impulse.data import _as_dataset  # noqa: E402

S = 4  # training's chunk_steps: windows of 5 states
V, dptr = ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)
lib.imp_ctrain_make_chunks.argtypes = [ctypes.POINTER(_lib.CTraj), ctypes.c_int, ctypes.c_int,
                                       ctypes.POINTER(_lib.Rng), ctypes.POINTER(dptr), ctypes.POINTER(ctypes.c_int)]
lib.imp_ctrain_all_windows.argtypes = [ctypes.POINTER(_lib.CTraj), ctypes.c_int, ctypes.c_int,
                                       ctypes.POINTER(dptr), ctypes.POINTER(ctypes.c_int)]
lib.imp_cmodel_work_new_slots.argtypes = [V, ctypes.c_int, ctypes.c_int]
lib.imp_cmodel_work_new_slots.restype = V
lib.imp_ctrain_chunk_loss.argtypes = [V, dptr, dptr, ctypes.c_int, ctypes.c_int, ctypes.c_double, V, dptr, dptr,
                                      dptr, ctypes.POINTER(ctypes.c_double)]
lib.imp_ctrain_chunk_loss.restype = ctypes.c_int
lib.imp_ctrain_chunk_loss_substeps.argtypes = [V, dptr, dptr, ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int,
                                               ctypes.c_double, V, dptr, dptr, dptr, ctypes.POINTER(ctypes.c_double)]
lib.imp_ctrain_chunk_loss_substeps.restype = ctypes.c_int


def windows(z, dt, seed, first=0):
    """(held-out windows, fitted windows), each n x (S+1) x dim; held-out
    windows only from trajectories first.. on."""
    t = _lib.CTraj()
    t.n_traj, t.T, t.dim, t.dt, t.z = z.shape[0], z.shape[1], z.shape[2], dt, ptr(z)
    p, n = dptr(), ctypes.c_int()
    check(lib.imp_ctrain_all_windows(ctypes.byref(t), 1 << 30, S, ctypes.byref(p), ctypes.byref(n)))
    allw = np.ctypeslib.as_array(p, shape=(n.value, S + 1, z.shape[2])).copy()
    _lib.libc_free(ctypes.cast(p, ctypes.c_void_p))
    rng = _lib.Rng()
    lib.imp_rng_seed(ctypes.byref(rng), seed)  # imp_ctrain seeds its rng with the training seed
    check(lib.imp_ctrain_make_chunks(ctypes.byref(t), 800, S, ctypes.byref(rng), ctypes.byref(p), ctypes.byref(n)))
    fit = np.ctypeslib.as_array(p, shape=(n.value, S + 1, z.shape[2])).copy()
    _lib.libc_free(ctypes.cast(p, ctypes.c_void_p))
    fitted = {w.tobytes() for w in fit}
    per = z.shape[1] // (S + 1)
    held = np.array([w for i, w in enumerate(allw) if i // per >= first and w.tobytes() not in fitted])
    return held, fit


class Loss:
    """Training's loss of a checkpoint on given windows; substeps R > 1: R
    RK4 steps per sample interval, the contact map after each
    (imp_ctrain_chunk_loss_substeps)."""

    def __init__(self, m, dt, max_b=256, substeps=1):
        self.m, self.dt, self.max_b = m, dt, max_b
        self.w = lib.imp_cmodel_work_new_slots(m._m, max_b, 4 * S + 1)
        self.traj = np.zeros((S + 1) * max_b * m.dim)
        self.tbar = np.zeros_like(self.traj)
        self.sub = (ctypes.c_int * max_b)(*([substeps] * max_b)) if substeps > 1 else None

    def __call__(self, params, chunks):
        """Mean L1 loss over the chunks (batches of max_b, weighted by size)."""
        total = 0.0
        for b0 in range(0, len(chunks), self.max_b):
            c = np.ascontiguousarray(chunks[b0:b0 + self.max_b])
            out = ctypes.c_double()
            check(lib.imp_ctrain_chunk_loss_substeps(self.m._m, ptr(params), ptr(c), self.sub, len(c), S, self.dt,
                                                     self.w, ptr(self.traj), ptr(self.tbar), None, ctypes.byref(out)))
            total += out.value * len(c)
        return total / len(chunks)

    def per_window(self, params, chunks):
        return np.array([self(params, chunks[i:i + 1]) for i in range(len(chunks))])

    def free(self):
        lib.imp_cmodel_work_free(self.w)


def set_law(m, params, cs, e, mu):
    """params with e, mu written into the contacts cs (the last 2 n_contacts
    parameters: e = sigmoid(10 a), mu = softplus(10 b))."""
    p = params.copy()
    nc = len(m.contacts)
    for c in cs:
        p[len(p) - 2 * nc + 2 * c] = math.log(e / (1 - e)) / 10.0
        p[len(p) - 2 * nc + 2 * c + 1] = math.log(math.expm1(mu)) / 10.0
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--heldout-from", type=int, default=0,
                    help="held-out windows only from this trajectory on (a run with --windows all --chunks C "
                         "fits every window of the first C / 20 trajectories)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()
    d = _as_dataset(a.data)
    z, dt = np.ascontiguousarray(d._z("data"), dtype=np.float64), d._dt()
    held, fit = windows(z, dt, a.seed, a.heldout_from)
    for path in a.models:
        m = impulse.load_model(path)
        L = Loss(m, dt)
        p0 = m.params.copy()
        cs = [c["contact"] for c in m.contacts if (c["e"], c["mu"]) != (0.5, 0.25)]
        e0 = {c["contact"]: (c["e"], c["mu"]) for c in m.contacts}
        # contact windows: those whose loss moves when the law of the acting contacts moves
        lw = L.per_window(p0, held)
        moved = L.per_window(set_law(m, p0, cs, 0.5, 0.25), held) if cs else lw
        cw = held[np.abs(moved - lw) > 1e-12 * np.maximum(lw, 1e-300)]
        r = {"model": os.path.basename(path), "fitted_windows": len(fit), "fitted_loss": L(p0, fit),
             "heldout_windows": len(held), "heldout_loss": float(lw.mean()), "contact_windows": len(cw),
             "contact_loss": L(p0, cw) if len(cw) else None,
             "learned": {str(c): {"e": e0[c][0], "mu": e0[c][1]} for c in cs}}
        if a.profile and len(cw) and len(cs) == 1:
            es = np.round(np.arange(0.60, 0.96, 0.02), 4)
            mus = np.round(np.arange(0.06, 0.181, 0.01), 4)
            grid = np.array([[L(set_law(m, p0, cs, e, mu), cw) for mu in mus] for e in es])
            i, j = np.unravel_index(np.argmin(grid), grid.shape)
            base = grid[i, j]
            r["profile"] = {"e": es.tolist(), "mu": mus.tolist(), "loss": grid.tolist(),
                            "argmin": {"e": float(es[i]), "mu": float(mus[j])}, "min_loss": float(base),
                            "at_learned": L(p0, cw),
                            "at_truth": L(set_law(m, p0, cs, m.contacts[cs[0]]["e_declared"] or 1e-4,
                                                  max(m.contacts[cs[0]]["mu_declared"], 1e-4)), cw)}
            # the rise 0.02 (one grid step) away from the minimum, per direction, relative to the minimum
            rise = {}
            for name, (di, dj) in (("e-", (-1, 0)), ("e+", (1, 0)), ("mu-", (0, -2)), ("mu+", (0, 2))):
                ii, jj = i + di, j + dj
                if 0 <= ii < len(es) and 0 <= jj < len(mus):
                    rise[name] = float(grid[ii, jj] / base - 1)
            r["profile"]["rise_0.02"] = rise
        L.free()
        if a.json:
            print(json.dumps(r))
        else:
            print(f"{r['model']}: fitted {r['fitted_windows']} windows loss {r['fitted_loss']:.6g}; held-out "
                  f"{r['heldout_windows']} loss {r['heldout_loss']:.6g}; contact windows {r['contact_windows']} "
                  f"loss {r['contact_loss']}; learned {r['learned']}")
            if "profile" in r:
                pr = r["profile"]
                print(f"  profile minimum at e {pr['argmin']['e']}, mu {pr['argmin']['mu']} (loss {pr['min_loss']:.6g}; "
                      f"at the learned values {pr['at_learned']:.6g}, at the truth {pr['at_truth']:.6g}); rise 0.02 away: "
                      + ", ".join(f"{k} {v:.3%}" for k, v in pr["rise_0.02"].items()))


if __name__ == "__main__":
    main()
