#!/usr/bin/python3
"""PyTorch peer of bench/bench_box_toss_epoch.c (issue #24: "a box-toss epoch
is measured against a PyTorch peer written the same way"): one training
epoch of impulse's learned cube on box-toss tosses, the same algorithm in
float64:

- the rigid-body step of src/models/rigid_step.c: gravity kick (and the
  gyroscopic term), the 8 corners against the ground plane (gap, normal and
  the tangents x, y of the contact module, Jacobian rows (d, R^T (l x d))),
  the active set (J_n v- + max(phi, 0)/h < 0; Newton's law above
  e_threshold 0.1 m/s, plastic on the shifted velocity below), the active
  corners' impulses solved together as src/contact/solve.c does it
  (regularization 1e-4 tr(A)/rows, 10 projected Gauss-Seidel sweeps,
  generalized Newton on the Alart-Curnier function with a line search, the
  identified branches solved exactly and verified, flipped where violated),
  v+ = v- + M^-1 J^T lambda, x+ = x + h v+, q+ = normalise(q exp(h w+/2));
- the reverse pass by implicit differentiation on the solved branches, as
  the C code's (eqs 12-15): lambda = lambda* - J_F^-1 F(lambda*; A, u-, e,
  mu) with lambda* and J_F constant, so that autograd gives
  d lambda = -J_F^-1 dF (F = 0 at lambda*); everything else by autograd;
- imp_rigid_window_loss: rollouts of W samples, S steps per sample, loss
  mean over samples of |x - y|^2 / width^2 + 1 - (q . y_q)^2;
- one epoch: every window once, in order, batches of B, the batch mean's
  gradient, Adam (lr 0.02) on e, mu, the ground and the corners in
  rigid_learn.c's units (ground and corners in mm), clamped as there.

The solver (bench/contact_solve_torch.py, shared with the CLNN peer) runs
its numerics (no gradient) in NumPy, which is faster than torch on these
3..24-row problems; the differentiable parts are torch.
One thread unless asked for more.

usage: box_toss_epoch_torch.py tosses.npz [repeats] [window] [substeps] [batch]
                               [--threads N] [--c-json c.json]
With --c-json (bench_box_toss_epoch's output) it prints the differences of
the check window's states, loss and gradient from the C code's.
"""
import argparse
import json
import time

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from contact_solve_torch import contact_impulse  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("data")
ap.add_argument("repeats", nargs="?", type=int, default=3)
ap.add_argument("window", nargs="?", type=int, default=12)
ap.add_argument("substeps", nargs="?", type=int, default=4)
ap.add_argument("batch", nargs="?", type=int, default=16)
ap.add_argument("--threads", type=int, default=1)
ap.add_argument("--c-json")
args = ap.parse_args()
torch.set_num_threads(args.threads)
DT = torch.float64

f = np.load(args.data)
meta = json.loads(str(f["meta"]))
states = np.ascontiguousarray(f["states"], dtype=np.float64)
lengths = f["lengths"].astype(np.int64)
size = f["body_size"].astype(np.float64)
inertia = f["body_inertia"].astype(np.float64)
mass, dt, gravity, ground0 = float(meta["mass"]), float(meta["dt"]), float(meta["gravity"]), float(meta["ground_height"])
W, SUB, B, LR = args.window, args.substeps, args.batch, 0.02
E0, MU0, SCALE = 0.5, 0.5, 1e-3
REG, SWEEPS, E_THRESHOLD = 1e-4, 10, 0.1
width = float(size[0])
I_t = torch.tensor(inertia, dtype=DT)
MINV = np.concatenate([np.full(3, 1.0 / mass), 1.0 / inertia])
MINV_t = torch.tensor(MINV, dtype=DT)
corners0 = np.array([[(0.5 if (k >> i) & 1 else -0.5) * size[i] for i in range(3)] for k in range(8)])
# contact directions: the ground's normal, then the module's tangents for n = e_z
DIRS = torch.tensor([[0, 0, 1], [1, 0, 0], [0, 1, 0]], dtype=DT)

starts = []
off = 0
for L in lengths:
    a = 0
    while a + W <= L:
        starts.append(off + a)
        a += W - 1
    off += int(L)


def quat_mul(a, b):
    aw, ax, ay, az = a[0], a[1], a[2], a[3]
    bw, bx, by, bz = b[0], b[1], b[2], b[3]
    return torch.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                        aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw])


def rotation(q):
    w, x, y, z = q[0], q[1], q[2], q[3]
    return torch.stack([torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)]),
                        torch.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)]),
                        torch.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)])])


def half_exp(a):
    t2 = a @ a
    if float(t2) < 1e-8:  # |a| < 1e-4: the series, as rigid_step.c
        f = 0.5 - t2 / 48.0 + t2 * t2 / 3840.0
        c = 1.0 - t2 / 8.0 + t2 * t2 / 384.0
    else:
        t = torch.sqrt(t2)
        f = torch.sin(0.5 * t) / t
        c = torch.cos(0.5 * t)
    return torch.cat([c.reshape(1), f * a])


def step(s, h, e, mu, ground, points):
    q = s[0:4]
    qn = q / torch.linalg.norm(q)
    pos, w, v = s[4:7], s[7:10], s[10:13]
    # 1. kick
    gyr = torch.linalg.cross(I_t * w, w)
    vm = torch.cat([v - h * gravity * DIRS[0], w + h * gyr / I_t])
    # 2. detection: corners, gaps, rows (d, R^T (l x d))
    R = rotation(qn)
    lever = points @ R.T                       # (8, 3) world
    phi = pos[2] + lever[:, 2] - ground        # (8,)
    ang = torch.linalg.cross(lever.unsqueeze(1).expand(8, 3, 3), DIRS.expand(8, 3, 3)) @ R  # (8, 3 dirs, 3)
    J = torch.cat([DIRS.expand(8, 3, 3), ang], dim=2)  # (8, 3, 6)
    un = J[:, 0, :] @ vm
    b = torch.clamp(phi, min=0.0) / h
    # 3. active set (a decision: no gradient)
    un_v, b_v = un.detach().numpy(), b.detach().numpy()
    act = [c for c in range(8) if un_v[c] + b_v[c] < 0.0]
    if not act:
        vp = vm
        pos_out = pos + 0.5 * h * (v + vp[0:3])
    else:
        rows, ums, es = [], [], []
        for c in act:
            bounce = un_v[c] < -E_THRESHOLD and float(e) > 0.0
            es.append(e if bounce else 0.0)
            Jc = J[c]
            u = Jc @ vm
            if not bounce:
                u = u + torch.stack([b[c], torch.zeros((), dtype=DT), torch.zeros((), dtype=DT)])
            rows.append(Jc)
            ums.append(u)
        Jm = torch.cat(rows)                   # (3n, 6)
        BT = Jm * MINV_t                       # rows M^-1 J_k^T
        A = Jm @ BT.T
        lam = contact_impulse(A, torch.cat(ums), es, [mu] * len(es), 3, REG, SWEEPS, retries=3)
        vp = vm + BT.T @ lam
        pos_out = pos + h * vp[0:3]
    r = quat_mul(qn, half_exp(h * vp[3:6]))
    return torch.cat([r / torch.linalg.norm(r), pos_out, vp[3:6], vp[0:3]])


def params_to_model(p):
    return p[0], p[1], p[2] * SCALE, p[3:].reshape(8, 3) * SCALE


def window_loss(p, start, keep_states=False):
    e, mu, ground, points = params_to_model(p)
    meas = torch.tensor(states[start:start + W], dtype=DT)
    x, h, wk, L = meas[0], dt / SUB, 1.0 / (W - 1), torch.zeros((), dtype=DT)
    pred = [x.detach().numpy().copy()]
    for k in range(1, W):
        for _ in range(SUB):
            x = step(x, h, e, mu, ground, points)
        y = meas[k]
        d2 = ((x[4:7] - y[4:7]) ** 2).sum()
        dq = x[0:4] @ y[0:4]
        L = L + wk * (d2 / (width * width) + 1.0 - dq * dq)
        if keep_states:
            pred.append(x.detach().numpy().copy())
    return L, pred


def initial_params():
    p = np.concatenate([[E0, MU0, ground0 / SCALE], (corners0 / SCALE).ravel()])
    return torch.tensor(p, dtype=DT, requires_grad=True)


def clamp_(p):
    with torch.no_grad():
        p[0].clamp_(0.0, 1.0)
        p[1].clamp_(0.0, 2.0)
        p[2].clamp_(-0.01 / SCALE, 0.01 / SCALE)


def epoch():
    p = initial_params()
    opt = torch.optim.Adam([p], lr=LR, betas=(0.9, 0.999), eps=1e-8)
    total = 0.0
    for b0 in range(0, len(starts), B):
        batch = starts[b0:b0 + B]
        opt.zero_grad()
        Lb = torch.zeros((), dtype=DT)
        for st in batch:
            L, _ = window_loss(p, st)
            Lb = Lb + L
            total += float(L)
        (Lb / len(batch)).backward()
        opt.step()
        clamp_(p)
    return p.detach(), total / len(starts)


out = {"impl": "PyTorch %s float64, %d thread(s)" % (torch.__version__, torch.get_num_threads()),
       "tosses": int(len(lengths)), "windows": len(starts), "window": W, "substeps": SUB, "batch": B}
if args.c_json:
    cj = json.load(open(args.c_json))
    cw = cj["check_window"]
    p = initial_params()
    L, pred = window_loss(p, cw["start_row"], keep_states=True)
    L.backward()
    g = p.grad.numpy()
    ge, gmu, gground, gpts = g[0], g[1], g[2] / SCALE, g[3:] / SCALE
    cs = np.array(cw["states"])
    ps = np.array(pred)
    diff = {"states_max_abs": float(np.abs(cs - ps).max()),
            "states_first_steps_max_abs": [float(np.abs(cs[k] - ps[k]).max()) for k in range(1, min(4, W))],
            "loss_rel": abs(float(L) - cw["loss"]) / max(abs(cw["loss"]), 1e-300),
            "grad_e_rel": abs(ge - cw["grad_e"]) / max(abs(cw["grad_e"]), 1e-300),
            "grad_mu_rel": abs(gmu - cw["grad_mu"]) / max(abs(cw["grad_mu"]), 1e-300),
            "grad_ground_abs": abs(gground - cw["grad_ground"]),
            "grad_points_max_abs": float(np.abs(gpts - np.array(cw["grad_points"])).max()),
            "grad_points_max": float(np.abs(np.array(cw["grad_points"])).max())}
    out["check_window"] = {"index": cw["index"], "loss": float(L), "grad_e": float(ge), "grad_mu": float(gmu)}
    out["difference_from_c"] = diff
secs = []
for r in range(args.repeats):
    t0 = time.process_time()
    pf, mean_loss = epoch()
    secs.append(time.process_time() - t0)
out["epoch_cpu_seconds"] = [round(x, 4) for x in secs]
out["epoch_cpu_min"] = min(secs)
out["epoch_cpu_median"] = sorted(secs)[len(secs) // 2]
out["after_epoch"] = {"mean_loss": mean_loss, "e": float(pf[0]), "mu": float(pf[1]), "ground": float(pf[2]) * SCALE}
if args.c_json:
    out["after_epoch_difference_from_c"] = {k: abs(out["after_epoch"][k] - cj["after_epoch"][k])
                                            for k in ("mean_loss", "e", "mu", "ground")}
    out["ratio_torch_over_c_min"] = out["epoch_cpu_min"] / cj["epoch_cpu_min"]
print(json.dumps(out, indent=1))
