#!/usr/bin/env python3
"""The discrete-equivalent restitution of CD-Lagrange's step-level impact
(issue 24): with the true potential (gravity) and masses fixed, fit only one
contact's e to noise-free event-accurate data, for each of CD-Lagrange's
impact laws, and compare it with the truth.

The CD-Lagrange step of a point mass under gravity is reproduced here in
numpy, exactly as src/models/cdl_structured.c takes it (kick-drift-kick,
touch labels of the target sample as gates, a labelled body's impulse on its
closing pairs penetrated at the drifted position, else its nearest pair;
docs/cdl.md), with three impact laws:

  paper     L v_{n+3/2} = -e L v_{n+1/2}        (--impact-law paper, the default on these data)
  newton    un+ = max(uS - (1 + e) u-, 0)       (--impact-law newton)
  event     Newton's law at the contact time tau inside the step, the step
            finished with the post-impact velocity (--impact-timing event)

For each contact (point, wall) with at least 5 training impacts, e is the
minimiser of the window loss (horizon 10, every window of the training set,
squared position and velocity error of the point along the contact normal;
the other contacts' e held at the truth, friction acting only along the
tangent of a point's contact, so it does not enter): a golden-section search
on [0.01, 0.999]. "rest out" leaves the targets of a point resting on the
floor out of the loss (as --contact-labels onset does). Also printed: the
mean of g h / |u-| over the contact's impacts (u- the half-step normal
velocity of the impact step), the paper law's expected bias
(docs/derivations/contact.md sec 12).

    /usr/bin/python3 scripts/discrete_e.py [TRAIN.npz] [--out results/discrete-e.md]

TRAIN.npz: `impulse simulate bouncing-points:5 --trajectories 20 --seed 100`
(the acceptance's training set; made in a temporary folder when not given).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

H = 10  # impulse train's default horizon


def rollout(q0, v0, labs, normals, offsets, e_pairs, mu_pairs, law, g, h):
    """One point, W windows: q0, v0 (W, 2), labs (W, H) its gates at the
    target samples; returns positions and velocities (W, H, 2)."""
    W = q0.shape[0]
    q, v = q0.copy(), v0.copy()
    a = np.array([0.0, -g])
    Q, V = np.zeros((W, H, 2)), np.zeros((W, H, 2))
    for n in range(H):
        vh = v + 0.5 * h * a
        qt = q + h * vh
        gap = qt @ normals.T - offsets  # (W, P) at the drifted position
        un_h = vh @ normals.T
        un_0 = v @ normals.T
        closing = (un_h < 0) | (2 * un_h - un_0 < 0)
        pen = closing & (gap <= 0.0)
        nearest = np.argmin(gap, axis=1)
        act = pen.copy()
        none = ~pen.any(axis=1)
        act[none, nearest[none]] = True
        act &= labs[:, n][:, None] > 0.5
        qn = qt.copy()
        vS = vh + h * a
        dv = np.zeros_like(v)
        for p in range(normals.shape[0]):
            m = act[:, p]
            if not m.any():
                continue
            nn, e, mu = normals[p], e_pairs[p], mu_pairs[p]
            tt = np.array([nn[1], -nn[0]])
            if law == "event":  # tau from the gap along the free flight q_n + s v_n + s^2/2 a
                c0 = q[m] @ nn - offsets[p]
                a0 = 0.5 * (a @ nn)
                tau = first_hit(a0, v[m] @ nn, c0, h)
                uev = v[m] + tau[:, None] * a[None, :]  # the velocity at the event
                un, ut = uev @ nn, uev @ tt
                lam_n = np.where(un < 0, -(1 + e) * un, 0.0)
            else:
                uh, un, ut = vh[m] @ nn, vS[m] @ nn, vS[m] @ tt
                up = -e * uh if law == "paper" else np.maximum(un - (1 + e) * uh, 0.0)
                lam_n = up - un  # unit mass: the law holds with either sign (equality law)
            # Coulomb: stick (stop the tangent velocity) inside the cone, else slide on its edge
            lam_t = np.where(lam_n > 0, np.clip(-ut, -mu * lam_n, mu * lam_n), 0.0) if mu_pairs is not None else 0.0
            dd = np.outer(lam_n, nn) + np.outer(lam_t, tt)
            dv[m] += dd
            if law == "event":
                qn[m] += (h - tau)[:, None] * dd
        q = qn
        v = vh + 0.5 * h * a + dv
        Q[:, n], V[:, n] = q, v
    return Q, V


def first_hit(a, b, c, h):
    """Per element, the time in [0, h] at which c + b s + a s^2 reaches 0
    while closing (0 when already at or below; h when not within the step)."""
    tau = np.full(np.shape(c), h)
    if a == 0.0:
        s = np.where(b < 0, -c / np.where(b < 0, b, -1.0), np.inf)
        cand = [s]
    else:
        disc = b * b - 4 * a * c
        sq = np.sqrt(np.maximum(disc, 0.0))
        cand = [np.where(disc >= 0, (-b - sq) / (2 * a), np.inf), np.where(disc >= 0, (-b + sq) / (2 * a), np.inf)]
    for r in cand:
        with np.errstate(invalid="ignore"):
            ok = (r >= 0) & (r <= tau) & (2 * a * r + b < 0)
            tau = np.where(ok, r, tau)
    return np.where(c <= 0.0, 0.0, tau)


def golden(f, lo, hi, tol=1e-5):
    r = (np.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - r * (b - a), a + r * (b - a)
    fc, fd = f(c), f(d)
    while b - a > tol:
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - r * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + r * (b - a)
            fd = f(d)
    return 0.5 * (a + b)


def main():
    args = sys.argv[1:]
    out = "results/discrete-e.md"
    if "--out" in args:
        i = args.index("--out")
        out = args[i + 1]
        del args[i:i + 2]
    if args:
        path = args[0]
    else:
        path = os.path.join(tempfile.mkdtemp(), "train.npz")
        subprocess.run([os.environ.get("IMPULSE", "build/impulse"), "simulate", "bouncing-points:5", "--trajectories",
                        "20", "--seed", "100", "-o", path], check=True, stdout=subprocess.DEVNULL)
    d = np.load(path)
    import json
    meta = json.loads(str(d["meta"]))
    h, g = meta["dt"], meta["gravity"]
    q, v, lab = d["q_clean"], d["qdot_clean"], d["contact"]
    pairs, normals, offsets = d["contact_pairs"], d["contact_normals"], d["contact_offsets"]
    e_true, mu_t = d["contact_restitution"], d["contact_friction"]
    NT, T, D = q.shape
    K = len(d["masses"])
    names = {(0, 1): "floor", (1, 0): "left", (-1, 0): "right", (0, -1): "ceiling"}
    rows = []
    for k in range(K):
        ps = [p for p in range(len(pairs)) if pairs[p, 1] == k]
        nrm, off = normals[ps], offsets[ps]
        xs, us = q[..., 2 * k:2 * k + 2], v[..., 2 * k:2 * k + 2]
        # windows
        starts = [(tr, t0) for tr in range(NT) for t0 in range(T - H)]
        idx_tr = np.array([s[0] for s in starts])
        idx_t = np.array([s[1] for s in starts])
        q0, v0 = xs[idx_tr, idx_t], us[idx_tr, idx_t]
        tgt_t = idx_t[:, None] + 1 + np.arange(H)[None, :]
        Qt, Vt = xs[idx_tr[:, None], tgt_t], us[idx_tr[:, None], tgt_t]
        labs = lab[idx_tr[:, None], tgt_t, k]
        rest_t = (labs > 0.5) & (lab[idx_tr[:, None], tgt_t - 1, k] > 0.5)
        for j, p in enumerate(ps):
            nn = normals[p]
            gap = xs @ nn - offsets[p]
            un = us @ nn
            hit = (un[:, :-1] < 0) & (un[:, 1:] > 0) & (gap[:, :-1] <= -un[:, :-1] * h + 1e-9)
            n_imp = int(hit.sum())
            if n_imp < 5:
                continue
            # the paper law's expected bias: per impact -(g h + (1 + e) g (h/2 - tau)) / U (U the half-step
            # normal speed; docs/derivations/contact.md sec 12), over impacts at uniformly random tau and
            # weighted as a least-squares fit weighs them (the velocity residual is U (e' - e)): -g h sum U / sum U^2
            uh = np.abs(un[:, :-1][hit] + 0.5 * h * (np.array([0.0, -g]) @ nn))
            bias = float(g * h * uh.sum() / (uh ** 2).sum()) if nn @ np.array([0.0, -g]) < 0 else 0.0
            # only windows whose labels touch this body matter for e_p
            sel = labs.any(axis=1)
            row = {"pair": p, "body": k, "with": names[(int(round(nn[0])), int(round(nn[1])))], "impacts": n_imp,
                   "e_true": float(e_true[p]), "bias": bias}
            for law in ("paper", "newton", "event"):
                for rest_out in (False, True):
                    wts = np.where(rest_out & rest_t[sel], 0.0, 1.0)

                    def loss(e):
                        ee = e_true[ps].copy()
                        ee[j] = e
                        Q, V = rollout(q0[sel], v0[sel], labs[sel], nrm, off, ee, mu_t[ps], law, g, h)
                        r = ((Q - Qt[sel]) ** 2).sum(-1) + ((V - Vt[sel]) ** 2).sum(-1)
                        return float((wts * r).sum())

                    row[(law, rest_out)] = golden(loss, 0.01, 0.999)
            rows.append(row)
            print("pair %d (%d %s): true %.3f paper %.3f/%.3f newton %.3f/%.3f event %.3f/%.3f  gh/|u-| %.3f" % (
                p, k, row["with"], row["e_true"], row[("paper", False)], row[("paper", True)], row[("newton", False)],
                row[("newton", True)], row[("event", False)], row[("event", True)], bias), flush=True)
    lines = ["Discrete-equivalent e of CD-Lagrange's impact laws on `bouncing-points:5` (20 noise-free training "
             "trajectories, seed 100, dt %g): e of one contact fitted to the window loss (horizon %d) with gravity and "
             "masses exact and every other contact's e at the truth. Made by `/usr/bin/python3 scripts/discrete_e.py`." % (h, H),
             "", "| pair | point | wall | impacts | e true | paper | newton | event | paper, rest out | newton, rest out | "
             "event, rest out | paper's expected bias g h ΣU / ΣU² |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %d | %d | %s | %d | %.3f | %s | %s | %s | %s | %s | %s | %.3f |" % (
            r["pair"], r["body"], r["with"], r["impacts"], r["e_true"],
            *["%.3f (%+.3f)" % (r[(law, ro)], r[(law, ro)] - r["e_true"]) for ro in (False, True)
              for law in ("paper", "newton", "event")], r["bias"]))
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    open(out, "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
