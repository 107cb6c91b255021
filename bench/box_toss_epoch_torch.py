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

The solver's numerics (no gradient) run in NumPy, which is faster than
torch on these 3..24-row problems; the differentiable parts are torch.
One thread unless asked for more.

usage: box_toss_epoch_torch.py tosses.npz [repeats] [window] [substeps] [batch]
                               [--threads N] [--c-json c.json]
With --c-json (bench_box_toss_epoch's output) it prints the differences of
the check window's states, loss and gradient from the C code's.
"""
import argparse
import json
import math
import time

import numpy as np
import torch

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
REG, SWEEPS, TOL, E_THRESHOLD = 1e-4, 10, 1e-10, 0.1
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


# ---- the contact solve (src/contact/solve.c), NumPy, no gradient ----
class Solver:
    def __init__(self, A, um, e, mu, eps):
        self.A, self.um, self.e, self.mu = A, um, e, mu
        self.R = A.shape[0]
        self.n = self.R // 3
        self.set_eps(eps)
        self.beta = e * np.maximum(-um[0::3], 0.0)
        self.vscale = max(self.beta.max(initial=0.0), np.abs(um).max(initial=0.0), 1e-300)
        self.tr_R = np.trace(A) / self.R
        self.lscale = self.vscale / self.tr_R
        self.branch = [0] * self.n  # 0 separate, 1 stick, 2 slide
        self.slide = np.zeros((self.n, 2))

    def set_eps(self, eps):
        self.eps = eps
        self.Ar = self.A + eps * np.eye(self.R)

    def post(self, lam):
        return self.um + self.Ar @ lam

    def pgs_sweep(self, lam):
        Ar, change = self.Ar, 0.0
        for i in range(self.n):
            r0 = 3 * i
            un = self.um[r0] + Ar[r0] @ lam
            Ann, ln = Ar[r0, r0], lam[r0]
            ln_new = max(0.0, ln - (un - self.beta[i]) / Ann)
            change = max(change, abs(ln_new - ln) * Ann)
            lam[r0] = ln_new
            lt = np.empty(2)
            for a in (1, 2):
                r = r0 + a
                ut = self.um[r] + Ar[r] @ lam
                lt[a - 1] = lam[r] - ut / Ar[r, r]
            nrm = math.hypot(lt[0], lt[1])
            cap = self.mu[i] * ln_new
            fac = (cap / nrm if nrm > 0 else 0.0) if nrm > cap else 1.0
            for a in (1, 2):
                r = r0 + a
                v = fac * lt[a - 1]
                change = max(change, abs(v - lam[r]) * Ar[r, r])
                lam[r] = v
        return change

    def ac_function(self, lam, jac):
        R, Ar = self.R, self.Ar
        u = self.post(lam)
        F = np.empty(R)
        J = np.zeros((R, R)) if jac else None
        for i in range(self.n):
            r0 = 3 * i
            rho, mu = 1.0 / Ar[r0, r0], self.mu[i]
            yn = lam[r0] - rho * (u[r0] - self.beta[i])
            if yn <= 0.0:
                self.branch[i] = 0
                F[r0:r0 + 3] = lam[r0:r0 + 3]
                if jac:
                    J[r0:r0 + 3, r0:r0 + 3] = np.eye(3)
                continue
            F[r0] = rho * (u[r0] - self.beta[i])
            if jac:
                J[r0] = rho * Ar[r0]
            yt = lam[r0 + 1:r0 + 3] - rho * u[r0 + 1:r0 + 3]
            ny, cap = math.hypot(yt[0], yt[1]), mu * yn
            if ny <= cap:
                self.branch[i] = 1
                F[r0 + 1:r0 + 3] = rho * u[r0 + 1:r0 + 3]
                if jac:
                    J[r0 + 1:r0 + 3] = rho * Ar[r0 + 1:r0 + 3]
            else:
                self.branch[i] = 2
                yh = yt / ny
                self.slide[i] = -yh
                F[r0 + 1:r0 + 3] = lam[r0 + 1:r0 + 3] - cap * yh
                if jac:
                    for a in (1, 2):
                        r = r0 + a
                        row = J[r]
                        row[r] += 1.0
                        cn = mu * yh[a - 1]
                        row[r0] -= cn
                        row += cn * rho * Ar[r0]
                        for c in (1, 2):
                            P = cap * ((a == c) - yh[a - 1] * yh[c - 1]) / ny
                            if P == 0.0:
                                continue
                            row[r0 + c] -= P
                            row += P * rho * Ar[r0 + c]
        return 0.5 * F @ F, F, J

    def ac_newton(self, lam, max_iter):
        phi, F, J = self.ac_function(lam, True)
        for _ in range(max_iter):
            if math.sqrt(2.0 * phi) <= TOL * self.lscale:
                return True
            try:
                dl = np.linalg.solve(J, -F)
            except np.linalg.LinAlgError:
                return False
            alpha, ok = 1.0, False
            for _ls in range(30):
                trial = lam + alpha * dl
                phi_new, _, _ = self.ac_function(trial, False)
                if phi_new <= (1.0 - 1e-4 * alpha) * phi:
                    ok = True
                    break
                alpha *= 0.5
            if not ok:
                return False
            lam[:] = trial
            phi, F, J = self.ac_function(lam, True)
        return math.sqrt(2.0 * phi) <= TOL * self.lscale

    def rescale(self, lam):
        lm = np.abs(lam).max(initial=0.0)
        if lm > self.lscale:
            self.lscale = lm
            self.vscale = max(self.vscale, lm * self.tr_R)

    def identify(self, lam, u):
        for i in range(self.n):
            r0 = 3 * i
            ln = lam[r0]
            lt = math.hypot(lam[r0 + 1], lam[r0 + 2])
            ut = math.hypot(u[r0 + 1], u[r0 + 2])
            self.slide[i] = 0.0
            if ln <= 1e-7 * self.lscale:
                self.branch[i] = 0
            elif self.mu[i] > 0.0 and lt < self.mu[i] * ln * (1.0 - 1e-7):
                self.branch[i] = 1
            else:
                self.branch[i] = 2
                if ut > 1e-9 * self.vscale:
                    self.slide[i] = u[r0 + 1:r0 + 3] / ut
                elif lt > 0:
                    self.slide[i] = -lam[r0 + 1:r0 + 3] / lt

    def branch_system(self, lam, jac):
        """F(lambda) = 0 on the branches (eq 10) and dF/dlambda."""
        R, Ar = self.R, self.Ar
        u = self.post(lam)
        F = np.empty(R)
        J = np.zeros((R, R)) if jac else None
        for i in range(self.n):
            r0, b = 3 * i, self.branch[i]
            if b == 0:
                F[r0:r0 + 3] = lam[r0:r0 + 3]
                if jac:
                    J[r0:r0 + 3, r0:r0 + 3] = np.eye(3)
                continue
            F[r0] = u[r0] - self.beta[i]
            if jac:
                J[r0] = Ar[r0]
            if b == 1:
                F[r0 + 1:r0 + 3] = u[r0 + 1:r0 + 3]
                if jac:
                    J[r0 + 1:r0 + 3] = Ar[r0 + 1:r0 + 3]
                continue
            ln, mu = lam[r0], self.mu[i]
            ut = u[r0 + 1:r0 + 3]
            rho = math.hypot(ut[0], ut[1])
            K = np.zeros((2, 2))
            if rho > 0.0:
                self.slide[i] = ut / rho
                K = mu * ln * (np.eye(2) - np.outer(self.slide[i], self.slide[i])) / rho
            F[r0 + 1:r0 + 3] = lam[r0 + 1:r0 + 3] + mu * ln * self.slide[i]
            if jac:
                for a in (1, 2):
                    r = r0 + a
                    J[r, r] += 1.0
                    J[r, r0] += mu * self.slide[i][a - 1]
                    for c in (0, 1):
                        if K[a - 1, c] != 0.0:
                            J[r] += K[a - 1, c] * Ar[r0 + 1 + c]
        return F, J

    def branch_solve(self, lam):
        for it in range(30):
            F, J = self.branch_system(lam, True)
            r = 0.0
            for i in range(self.n):
                for a in range(3):
                    sc = self.lscale if (self.branch[i] == 0 or (a > 0 and self.branch[i] == 2)) else self.vscale
                    r = max(r, abs(F[3 * i + a]) / sc)
            if r <= TOL * 1e-2 and it > 0:
                return True
            try:
                lam += np.linalg.solve(J, -F)
            except np.linalg.LinAlgError:
                return False
            if not np.isfinite(lam).all():
                return False
        F, _ = self.branch_system(lam, False)
        return np.abs(F).max() / min(self.vscale, self.lscale) <= TOL

    def verify_and_flip(self, lam, u, one_only):
        nviol, worst, worst_v, worst_to, worst_dir = 0, -1, 0.0, 0, np.zeros(2)
        for i in range(self.n):
            r0, to, viol, d = 3 * i, -1, 0.0, np.zeros(2)
            ln = lam[r0]
            lt = math.hypot(lam[r0 + 1], lam[r0 + 2])
            b = self.branch[i]
            if b == 0:
                if u[r0] - self.beta[i] < -TOL * self.vscale:
                    viol, to = (self.beta[i] - u[r0]) / self.vscale, (1 if self.mu[i] > 0 else 2)
            elif b == 1:
                if ln < -TOL * self.lscale:
                    viol, to = -ln / self.lscale, 0
                elif lt > self.mu[i] * ln + TOL * self.lscale:
                    viol, to = (lt - self.mu[i] * ln) / self.lscale, 2
                    d = -lam[r0 + 1:r0 + 3] / lt
            else:
                if ln < -TOL * self.lscale:
                    viol, to = -ln / self.lscale, 0
                elif self.mu[i] > 0:
                    along = self.slide[i] @ u[r0 + 1:r0 + 3]
                    if along < -TOL * self.vscale or along <= 0.0:
                        viol, to = -along / self.vscale, 1
            if to < 0:
                continue
            nviol += 1
            if not one_only:
                self.branch[i] = to
                if to == 2:
                    self.slide[i] = d
            elif worst < 0 or viol > worst_v:
                worst, worst_v, worst_to, worst_dir = i, viol, to, d
        if one_only and worst >= 0:
            self.branch[worst] = worst_to
            if worst_to == 2:
                self.slide[worst] = worst_dir
        return nviol


def solve_forward(A, um, e, mu, reg):
    """lambda, the solver (its branches and eps) or None (no verified solution)."""
    R = A.shape[0]
    tr_R = np.trace(A) / R
    eps = reg * tr_R
    s = Solver(A, um, e, mu, eps)
    lam = np.zeros(R)
    for _ in range(SWEEPS):
        if s.pgs_sweep(lam) <= TOL * s.vscale:
            break
    lsave = lam.copy()
    ac = s.ac_newton(lam, 100)
    if not ac:
        lam[:] = 0.0
        ac = s.ac_newton(lam, 200)
    if not ac:
        lam[:] = 0.0
        ek = max(1e-3 * tr_R, eps)
        while True:
            s.set_eps(ek)
            ac = s.ac_newton(lam, 200)
            s.rescale(lam)
            if ek <= eps:
                break
            ek = ek * 1e-2 if ek * 1e-2 > max(eps, 1e-14 * tr_R) else eps
    if ac:
        s.rescale(lam)
    else:
        lam[:] = lsave
        s.identify(lam, s.post(lam))
    keep_branch, keep_slide, lac = list(s.branch), s.slide.copy(), lam.copy()
    n = R // 3
    max_piv, ok = 4 * n + 10, False
    for p in range(max_piv + 1):
        if not s.branch_solve(lam):
            break
        if s.verify_and_flip(lam, s.post(lam), p >= max_piv // 2) == 0:
            ok = True
            break
    if not ok and ac:
        lam[:] = lac
        s.branch, s.slide = keep_branch, keep_slide
        s.ac_function(lam, False)  # its branches
        ok = True
    if not ok:
        lam[:] = 0.0
        ch = 0.0
        for _ in range(50 * 200):
            ch = s.pgs_sweep(lam)
            if ch <= TOL * s.vscale:
                break
        s.identify(lam, s.post(lam))
        if not ch <= 1e3 * TOL * s.vscale:
            return None, None
    return lam, s


def branch_F(s, lam, A, um, e, mu):
    """The branch system F (eq 10) in torch, differentiable in A, u-, e, mu
    (eps = reg tr(A)/rows too); lam is a constant."""
    R = A.shape[0]
    eps = s.reg * torch.trace(A) / R
    u = um + A @ lam + eps * lam
    parts = []
    for i in range(s.n):
        r0, b = 3 * i, s.branch[i]
        if b == 0:
            parts.append(lam[r0:r0 + 3])
            continue
        beta = e[i] * torch.clamp(-um[r0], min=0.0)
        Fn = (u[r0] - beta).reshape(1)
        if b == 1:
            parts.append(torch.cat([Fn, u[r0 + 1:r0 + 3]]))
            continue
        ut = u[r0 + 1:r0 + 3]
        sdir = ut / torch.linalg.norm(ut)
        parts.append(torch.cat([Fn, lam[r0 + 1:r0 + 3] + mu * lam[r0] * sdir]))
    return torch.cat(parts)


def contact_impulse(A, um, e_list, mu):
    """lambda with the implicit-differentiation graph (eqs 12-15)."""
    A_np, um_np = A.detach().numpy(), um.detach().numpy()
    e_np = np.array([float(x) for x in e_list])
    mu_np = np.full(len(e_list), float(mu))
    reg = REG
    for tries in range(4):
        lam_np, s = solve_forward(A_np, um_np, e_np, mu_np, reg)
        if lam_np is not None:
            break
        reg *= 1e3
    if lam_np is None:
        raise RuntimeError("contact solve: no verified solution")
    s.reg = reg
    _, JF = s.branch_system(lam_np, True)
    lam = torch.tensor(lam_np, dtype=DT)
    e_t = torch.stack([x if torch.is_tensor(x) else torch.tensor(x, dtype=DT) for x in e_list])
    F = branch_F(s, lam, A, um, e_t, mu)
    return lam - torch.linalg.solve(torch.tensor(JF, dtype=DT), F)


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
        lam = contact_impulse(A, torch.cat(ums), es, mu)
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
