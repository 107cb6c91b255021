#!/usr/bin/python3
"""PyTorch peer for issue #25's speed acceptance: one training epoch of CLNN
with contact on chain-ground:3, written the way impulse's model is
(docs/derivations/contact.md sec 10, docs/chnn.md "CLNN"), to be timed one
thread against one thread against `impulse train clnn --contact` on the same
chunks:

- CLNN ([F] eq 7): V a 3 x 256 tanh MLP on the flattened x (orthogonal
  init), point masses M^-1 = e^-theta; xddot = f - W D^T S^-1 (D f + A v),
  f = -W grad V, D = DPhi(x), A = dPhidot/dx, S = D W D^T; grad V by autograd
  with create_graph (as bench_chnn_torch.py);
- RK4 (Kutta's 3/8 rule) steps of h = dt on y = (x, v), 4 per 5-state chunk;
- after each step the contact map (sec 10, eqs 21-23): every bob's sphere
  against the ground with phi(x*) < 0 and closing is active; P = W - Z^T S^-1 Z
  (Z = D W at x*), lambda = solve(J P J^T, J v*, e, mu) with the contact
  module's solver and its reverse pass by implicit differentiation
  (bench/contact_solve_torch.py, regularization 1e-9), v+ = v* + P J^T
  lambda, x+ = x* + (1 - alpha) h (v+ - v*) with alpha the earliest active
  contact's crossing fraction phi(x_k) / (phi(x_k) - phi(x*)) (0 if it
  already penetrated at x_k); learned e = sigmoid(10 a), mu = softplus(10 b)
  per contact, starting at 0.5 and 0.25;
- L1 loss over every entry of the 5 states, AdamW 3e-3 (weight decay 1e-4),
  minibatches of 200 shuffled chunks.

The smooth dynamics run batched over the minibatch; the contact map runs
per sample that has an active contact (each has its own active set), as the
C code does. float64 by default (impulse's CLNN trains in double).

usage: chnn_contact_epoch_torch.py data.npz [epochs] [--threads N] [--float32] [--batch B]
       data: `impulse simulate chain-ground:3 --trajectories 800 --chunk 4 -o data.npz`
       (its `chunks`, (n, 5, 2, points, 2)), or 5-state trajectories
       (`--steps 4 --rollout-start 4`, as bench/chnn_contact_epoch.py makes). Prints per-epoch CPU and wall
       time (the first epoch includes torch's warm-up) and the contact solves.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from contact_solve_torch import contact_impulse  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("data")
ap.add_argument("epochs", nargs="?", type=int, default=2)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--float32", action="store_true")
ap.add_argument("--batch", type=int, default=200)
ap.add_argument("--seed", type=int, default=0)
args = ap.parse_args()
torch.set_num_threads(args.threads)
torch.manual_seed(args.seed)
DT = torch.float32 if args.float32 else torch.float64

f = np.load(args.data)
meta = json.loads(str(f["meta"]))
dt = float(meta["dt"])
# the chunks: the file's `chunks` (simulate --chunk 4), else its 5-state
# trajectories themselves (simulate --steps 4 --rollout-start 4: what
# `impulse train clnn` takes as its one window per trajectory)
chunks = torch.tensor(f["chunks"] if "chunks" in f.files else f["z"][:, :5], dtype=DT)  # (n, 5, 2, points, d)
n_pts, d = chunks.shape[3], chunks.shape[4]
N = n_pts * d
L = chunks.shape[1] - 1
# chain-ground:3: tether of point 0 to the origin, then links (i-1, i); each
# bob a sphere against the ground y = -1 (docs/chnn-systems.md)
edges = [(0, -1)] + [(i - 1, i) for i in range(1, n_pts)]
C = len(edges)
RADIUS = torch.tensor([0.15, 0.08, 0.1], dtype=DT)[:n_pts]
GROUND = -1.0
CONTACT_SCALE = 10.0


class CLNNContact(nn.Module):
    def __init__(self):
        super().__init__()
        layers, k = [], N
        for _ in range(3):
            lin = nn.Linear(k, 256)
            nn.init.orthogonal_(lin.weight)
            layers += [lin, nn.Tanh()]
            k = 256
        last = nn.Linear(256, 1)
        nn.init.orthogonal_(last.weight)
        layers.append(last)
        self.V = nn.Sequential(*layers).to(DT)
        self.theta = nn.Parameter(0.1 * torch.randn(n_pts, dtype=DT))
        e0, mu0 = 0.5, 0.25
        self.a = nn.Parameter(torch.full((n_pts,), float(np.log(e0 / (1 - e0))) / CONTACT_SCALE, dtype=DT))
        self.b = nn.Parameter(torch.full((n_pts,), float(np.log(np.expm1(mu0))) / CONTACT_SCALE, dtype=DT))

    def winv(self):                   # diagonal of W = M^-1, (N,)
        return torch.exp(-self.theta).repeat_interleave(d)

    def e_mu(self):
        return torch.sigmoid(CONTACT_SCALE * self.a), nn.functional.softplus(CONTACT_SCALE * self.b)

    def D(self, x):                   # DPhi (bs, C, N) of the rods, x (bs, n_pts, d)
        bs = x.shape[0]
        Dm = x.new_zeros(bs, C, n_pts, d)
        for c, (i, j) in enumerate(edges):
            r = x[:, i] - (x[:, j] if j >= 0 else 0.0)
            Dm[:, c, i] = 2 * r
            if j >= 0:
                Dm[:, c, j] = -2 * r
        return Dm.reshape(bs, C, N)

    def accel(self, x, v):            # x, v (bs, N)
        bs = x.shape[0]
        with torch.enable_grad():
            xg = x if x.requires_grad else x.requires_grad_(True)
            V = self.V(xg).sum()
            gV = torch.autograd.grad(V, xg, create_graph=True)[0]
        W = self.winv()
        fx = -W * gV
        Dm = self.D(x.reshape(bs, n_pts, d))
        Am = self.D(v.reshape(bs, n_pts, d))     # dPhidot/dx: the same structure in v
        S = (Dm * W) @ Dm.transpose(1, 2)
        rhs = (Dm @ fx[..., None] + Am @ v[..., None])
        mu = torch.linalg.solve(S, rhs)
        return fx - W * (Dm.transpose(1, 2) @ mu).squeeze(-1)

    def rk38(self, x, v, h):
        def F(x, v):
            return v, self.accel(x, v)
        k1x, k1v = F(x, v)
        k2x, k2v = F(x + h * k1x / 3, v + h * k1v / 3)
        k3x, k3v = F(x + h * (k2x - k1x / 3), v + h * (k2v - k1v / 3))
        k4x, k4v = F(x + h * (k1x - k2x + k3x), v + h * (k1v - k2v + k3v))
        return (x + h * (k1x + 3 * (k2x + k3x) + k4x) / 8, v + h * (k1v + 3 * (k2v + k3v) + k4v) / 8)

    def contact_map(self, xk, xs, vs, h, stats):
        """eqs 21-23 per sample with an active contact; xk the step's start."""
        bs = xs.shape[0]
        ys = xs.detach().reshape(bs, n_pts, d)[:, :, 1]
        phis = ys - RADIUS - GROUND                       # (bs, n_pts)
        closing = vs.detach().reshape(bs, n_pts, d)[:, :, 1] < 0
        act = (phis < 0) & closing
        rows = torch.nonzero(act.any(1)).flatten().tolist()
        if not rows:
            return xs, vs
        e_all, mu_all = self.e_mu()
        W = self.winv()
        dx, dv = [], []
        for b in range(bs):
            if b not in rows:
                dx.append(xs.new_zeros(N)), dv.append(xs.new_zeros(N))
                continue
            ids = torch.nonzero(act[b]).flatten().tolist()
            x = xs[b]
            Dm = self.D(x.reshape(1, n_pts, d))[0]         # (C, N)
            Z = Dm * W
            S = Z @ Dm.T
            P = torch.diag(W) - Z.T @ torch.linalg.solve(S, Z)
            J = xs.new_zeros(2 * len(ids), N)
            for a, c in enumerate(ids):
                J[2 * a, c * d + 1] = 1.0                  # normal (0, 1)
                J[2 * a + 1, c * d + 0] = 1.0              # tangent (n_y, -n_x) = (1, 0)
            PJ = P @ J.T
            A = J @ PJ
            lam = contact_impulse(A, J @ vs[b], [e_all[c] for c in ids], [mu_all[c] for c in ids], 2)
            dvb = PJ @ lam
            # alpha: the earliest active contact's crossing fraction
            phik = xk[b].reshape(n_pts, d)[:, 1] - RADIUS - GROUND
            phis_b = x.reshape(n_pts, d)[:, 1] - RADIUS - GROUND
            alphas = []
            for c in ids:
                if float(phik[c]) <= 0:
                    alphas.append(xs.new_zeros(()))
                else:
                    alphas.append(phik[c] / (phik[c] - phis_b[c]))
            alpha = min(alphas, key=float)
            dx.append((1 - alpha) * h * dvb)
            dv.append(dvb)
            stats["solves"] += 1
            stats["contacts"] += len(ids)
        return xs + torch.stack(dx), vs + torch.stack(dv)

    def rollout(self, x0, v0, h, steps, stats):
        xs, vs = [x0], [v0]
        x, v = x0, v0
        for _ in range(steps):
            xn, vn = self.rk38(x, v, h)
            x, v = self.contact_map(x, xn, vn, h, stats)
            xs.append(x), vs.append(v)
        return torch.stack(xs, 1), torch.stack(vs, 1)


model = CLNNContact()
n_params = sum(p.numel() for p in model.parameters())
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
loader = torch.utils.data.DataLoader(chunks, batch_size=args.batch, shuffle=True)
walls, cpus = [], []
for ep in range(args.epochs):
    stats = {"solves": 0, "contacts": 0}
    t0, c0 = time.perf_counter(), time.process_time()
    total, nb = 0.0, 0
    for batch in loader:
        bs = batch.shape[0]
        x0 = batch[:, 0, 0].reshape(bs, N)
        v0 = batch[:, 0, 1].reshape(bs, N)
        px, pv = model.rollout(x0, v0, dt, L, stats)
        pred = torch.stack([px.reshape(bs, L + 1, n_pts, d), pv.reshape(bs, L + 1, n_pts, d)], 2)
        loss = (pred - batch).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += float(loss)
        nb += 1
    walls.append(time.perf_counter() - t0)
    cpus.append(time.process_time() - c0)
    e, mu = model.e_mu()
    print(json.dumps({"epoch": ep + 1, "wall_s": round(walls[-1], 4), "cpu_s": round(cpus[-1], 4),
                      "mean_loss": total / nb, "contact_maps": stats["solves"], "active_contacts": stats["contacts"],
                      "e": [round(float(x), 5) for x in e], "mu": [round(float(x), 5) for x in mu]}))
rest = slice(1, None) if args.epochs > 1 else slice(0, None)
print(json.dumps({"impl": "PyTorch %s %s, %d thread(s)" % (torch.__version__, "float32" if args.float32 else "float64",
                                                            torch.get_num_threads()),
                  "chunks": int(chunks.shape[0]), "batch": args.batch, "parameters": n_params,
                  "epoch_cpu_s_after_first": sum(cpus[rest]) / len(cpus[rest]),
                  "epoch_wall_s_after_first": sum(walls[rest]) / len(walls[rest])}))
