"""The contact module's solver (src/contact/solve.c) for the PyTorch peers in
bench/: the active contacts' impulses together, Newton restitution and
Coulomb friction per contact (2-D or 3-D), solved the way the C code does
it (projected Gauss-Seidel warm start, generalized Newton on the
Alart-Curnier function with a line search, continuation in the
regularization where that fails, the identified branches solved exactly and
verified, the violated ones flipped; the projected Gauss-Seidel solution as
the last fallback), and the reverse pass by implicit differentiation on the
branches (eqs 12-15 of docs/derivations/contact.md) expressed for autograd.
The numerics (no gradient) run in NumPy, faster than torch on 2..24-row
problems; the gradient is torch.

Used by box_toss_epoch_torch.py and chnn_contact_epoch_torch.py.
"""
import math

import numpy as np
import torch

TOL = 1e-10

class Solver:
    def __init__(self, A, um, e, mu, eps, d):
        self.A, self.um, self.e, self.mu, self.d = A, um, e, mu, d
        self.R = A.shape[0]
        self.n = self.R // d
        self.set_eps(eps)
        self.beta = e * np.maximum(-um[0::d], 0.0)
        self.vscale = max(self.beta.max(initial=0.0), np.abs(um).max(initial=0.0), 1e-300)
        self.tr_R = np.trace(A) / self.R
        self.lscale = self.vscale / self.tr_R
        self.branch = [0] * self.n  # 0 separate, 1 stick, 2 slide
        self.slide = np.zeros((self.n, 2))
        self.reg = 0.0

    def set_eps(self, eps):
        self.eps = eps
        self.Ar = self.A + eps * np.eye(self.R)

    def post(self, lam):
        return self.um + self.Ar @ lam

    def pgs_sweep(self, lam):
        Ar, change, d = self.Ar, 0.0, self.d
        for i in range(self.n):
            r0 = d * i
            un = self.um[r0] + Ar[r0] @ lam
            Ann, ln = Ar[r0, r0], lam[r0]
            ln_new = max(0.0, ln - (un - self.beta[i]) / Ann)
            change = max(change, abs(ln_new - ln) * Ann)
            lam[r0] = ln_new
            lt = np.zeros(2)
            for a in range(1, d):
                r = r0 + a
                ut = self.um[r] + Ar[r] @ lam
                lt[a - 1] = lam[r] - ut / Ar[r, r]
            nrm = math.hypot(lt[0], lt[1])
            cap = self.mu[i] * ln_new
            fac = (cap / nrm if nrm > 0 else 0.0) if nrm > cap else 1.0
            for a in range(1, d):
                r = r0 + a
                v = fac * lt[a - 1]
                change = max(change, abs(v - lam[r]) * Ar[r, r])
                lam[r] = v
        return change

    def ac_function(self, lam, jac):
        R, Ar, d = self.R, self.Ar, self.d
        u = self.post(lam)
        F = np.empty(R)
        J = np.zeros((R, R)) if jac else None
        for i in range(self.n):
            r0 = d * i
            rho, mu = 1.0 / Ar[r0, r0], self.mu[i]
            yn = lam[r0] - rho * (u[r0] - self.beta[i])
            if yn <= 0.0:
                self.branch[i] = 0
                F[r0:r0 + d] = lam[r0:r0 + d]
                if jac:
                    J[r0:r0 + d, r0:r0 + d] = np.eye(d)
                continue
            F[r0] = rho * (u[r0] - self.beta[i])
            if jac:
                J[r0] = rho * Ar[r0]
            yt = lam[r0 + 1:r0 + d] - rho * u[r0 + 1:r0 + d]
            ny, cap = float(np.sqrt(yt @ yt)), mu * yn
            if ny <= cap:
                self.branch[i] = 1
                F[r0 + 1:r0 + d] = rho * u[r0 + 1:r0 + d]
                if jac:
                    J[r0 + 1:r0 + d] = rho * Ar[r0 + 1:r0 + d]
            else:
                self.branch[i] = 2
                yh = yt / ny
                self.slide[i, :d - 1] = -yh
                F[r0 + 1:r0 + d] = lam[r0 + 1:r0 + d] - cap * yh
                if jac:
                    for a in range(1, d):
                        r = r0 + a
                        row = J[r]
                        row[r] += 1.0
                        cn = mu * yh[a - 1]
                        row[r0] -= cn
                        row += cn * rho * Ar[r0]
                        for c in range(1, d):
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
        d = self.d
        for i in range(self.n):
            r0 = d * i
            ln = lam[r0]
            lt = float(np.sqrt(lam[r0 + 1:r0 + d] @ lam[r0 + 1:r0 + d]))
            ut = float(np.sqrt(u[r0 + 1:r0 + d] @ u[r0 + 1:r0 + d]))
            self.slide[i] = 0.0
            if ln <= 1e-7 * self.lscale:
                self.branch[i] = 0
            elif self.mu[i] > 0.0 and lt < self.mu[i] * ln * (1.0 - 1e-7):
                self.branch[i] = 1
            else:
                self.branch[i] = 2
                if ut > 1e-9 * self.vscale:
                    self.slide[i, :d - 1] = u[r0 + 1:r0 + d] / ut
                elif lt > 0:
                    self.slide[i, :d - 1] = -lam[r0 + 1:r0 + d] / lt

    def branch_system(self, lam, jac):
        """F(lambda) = 0 on the branches (eq 10) and dF/dlambda."""
        R, Ar, d = self.R, self.Ar, self.d
        u = self.post(lam)
        F = np.empty(R)
        J = np.zeros((R, R)) if jac else None
        for i in range(self.n):
            r0, b = d * i, self.branch[i]
            if b == 0:
                F[r0:r0 + d] = lam[r0:r0 + d]
                if jac:
                    J[r0:r0 + d, r0:r0 + d] = np.eye(d)
                continue
            F[r0] = u[r0] - self.beta[i]
            if jac:
                J[r0] = Ar[r0]
            if b == 1:
                F[r0 + 1:r0 + d] = u[r0 + 1:r0 + d]
                if jac:
                    J[r0 + 1:r0 + d] = Ar[r0 + 1:r0 + d]
                continue
            ln, mu = lam[r0], self.mu[i]
            K = np.zeros((2, 2))
            if d == 3:
                ut = u[r0 + 1:r0 + 3]
                rho = math.hypot(ut[0], ut[1])
                if rho > 0.0:
                    self.slide[i] = ut / rho
                    K = mu * ln * (np.eye(2) - np.outer(self.slide[i], self.slide[i])) / rho
            F[r0 + 1:r0 + d] = lam[r0 + 1:r0 + d] + mu * ln * self.slide[i, :d - 1]
            if jac:
                for a in range(1, d):
                    r = r0 + a
                    J[r, r] += 1.0
                    J[r, r0] += mu * self.slide[i][a - 1]
                    for c in range(d - 1):
                        if K[a - 1, c] != 0.0:
                            J[r] += K[a - 1, c] * Ar[r0 + 1 + c]
        return F, J

    def branch_solve(self, lam):
        for it in range(30):
            F, J = self.branch_system(lam, True)
            r = 0.0
            for i in range(self.n):
                for a in range(self.d):
                    sc = self.lscale if (self.branch[i] == 0 or (a > 0 and self.branch[i] == 2)) else self.vscale
                    r = max(r, abs(F[self.d * i + a]) / sc)
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
        dd = self.d
        for i in range(self.n):
            r0, to, viol, d = dd * i, -1, 0.0, np.zeros(2)
            ln = lam[r0]
            lt = float(np.sqrt(lam[r0 + 1:r0 + dd] @ lam[r0 + 1:r0 + dd]))
            b = self.branch[i]
            if b == 0:
                if u[r0] - self.beta[i] < -TOL * self.vscale:
                    viol, to = (self.beta[i] - u[r0]) / self.vscale, (1 if self.mu[i] > 0 else 2)
            elif b == 1:
                if ln < -TOL * self.lscale:
                    viol, to = -ln / self.lscale, 0
                elif lt > self.mu[i] * ln + TOL * self.lscale:
                    viol, to = (lt - self.mu[i] * ln) / self.lscale, 2
                    d[:dd - 1] = -lam[r0 + 1:r0 + dd] / lt
            else:
                if ln < -TOL * self.lscale:
                    viol, to = -ln / self.lscale, 0
                elif self.mu[i] > 0:
                    along = self.slide[i, :dd - 1] @ u[r0 + 1:r0 + dd]
                    if along < -TOL * self.vscale or (dd == 3 and along <= 0.0):
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


def solve_forward(A, um, e, mu, reg, d, sweeps):
    """lambda, the solver (its branches and eps) or None (no verified solution)."""
    R = A.shape[0]
    tr_R = np.trace(A) / R
    eps = reg * tr_R
    s = Solver(A, um, e, mu, eps, d)
    s.reg = reg
    lam = np.zeros(R)
    for _ in range(sweeps):
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
    n = R // d
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
        for _ in range(50 * sweeps):
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
    R, d = A.shape[0], s.d
    eps = s.reg * torch.trace(A) / R
    u = um + A @ lam + eps * lam
    parts = []
    for i in range(s.n):
        r0, b = d * i, s.branch[i]
        if b == 0:
            parts.append(lam[r0:r0 + d])
            continue
        beta = e[i] * torch.clamp(-um[r0], min=0.0)
        Fn = (u[r0] - beta).reshape(1)
        if b == 1:
            parts.append(torch.cat([Fn, u[r0 + 1:r0 + d]]))
            continue
        if d == 3:
            ut = u[r0 + 1:r0 + 3]
            sdir = ut / torch.linalg.norm(ut)
        else:
            sdir = torch.tensor(s.slide[i, :1], dtype=A.dtype)
        parts.append(torch.cat([Fn, lam[r0 + 1:r0 + d] + mu[i] * lam[r0] * sdir]))
    return torch.cat(parts)


def contact_impulse(A, um, e, mu, d, reg=1e-9, sweeps=200, retries=0):
    """The contact impulses lambda (rows d per contact: normal, tangents)
    of A = J M^-1 J^T (torch, R x R), u- (R), e and mu per contact (torch
    vectors or floats), solved as src/contact/solve.c (regularization reg,
    at most `sweeps` projected Gauss-Seidel sweeps; `retries` times with a
    1e3 times larger regularization where no solution is verified, as
    rigid_step.c), with the implicit-differentiation graph (eqs 12-15):
    lambda = lambda* - J_F^-1 F(lambda*; A, u-, e, mu), lambda* and J_F
    constant."""
    dt = A.dtype
    e_t = torch.stack([x if torch.is_tensor(x) else torch.tensor(float(x), dtype=dt) for x in e])
    mu_t = torch.stack([x if torch.is_tensor(x) else torch.tensor(float(x), dtype=dt) for x in mu])
    A_np, um_np = A.detach().numpy().astype(np.float64), um.detach().numpy().astype(np.float64)
    e_np, mu_np = e_t.detach().numpy().astype(np.float64), mu_t.detach().numpy().astype(np.float64)
    for _ in range(retries + 1):
        lam_np, s = solve_forward(A_np, um_np, e_np, mu_np, reg, d, sweeps)
        if lam_np is not None:
            break
        reg *= 1e3
    if lam_np is None:
        raise RuntimeError("contact solve: no verified solution")
    _, JF = s.branch_system(lam_np, True)
    lam = torch.tensor(lam_np, dtype=dt)
    F = branch_F(s, lam, A, um, e_t, mu_t)
    return lam - torch.linalg.solve(torch.tensor(JF, dtype=dt), F)


if __name__ == "__main__":
    # self-check: the implicit-differentiation gradient of a random 2-D and
    # 3-D multi-contact solve against central differences of the forward
    rng = np.random.default_rng(0)
    worst = 0.0
    for d in (2, 3):
        for trial in range(20):
            n, nv = 2, 3 * d
            Jm = torch.tensor(rng.normal(size=(n * d, nv)))
            Mi = torch.tensor(np.abs(rng.normal(size=nv)) + 0.5)
            A = (Jm * Mi) @ Jm.T
            um = torch.tensor(rng.normal(size=n * d))
            um[0::d] = -np.abs(um[0::d]) - 0.2
            e = torch.tensor(rng.uniform(0, 1, size=n), requires_grad=True)
            mu = torch.tensor(rng.uniform(0.05, 1.0, size=n), requires_grad=True)
            A.requires_grad_(True)
            um.requires_grad_(True)
            w = torch.tensor(rng.normal(size=n * d))
            lam = contact_impulse(A, um, list(e), list(mu), d)
            (w @ lam).backward()
            for name, t in (("A", A), ("um", um), ("e", e), ("mu", mu)):
                g = t.grad if t.grad is not None else torch.zeros_like(t)
                for k in range(t.numel()):
                    h = 1e-6
                    vals = []
                    for sgn in (1, -1):
                        with torch.no_grad():
                            tt = t.detach().clone()
                            tt.view(-1)[k] += sgn * h
                            args = {"A": A.detach(), "um": um.detach(), "e": e.detach(), "mu": mu.detach()}
                            args[name] = tt
                            lam2 = contact_impulse(args["A"], args["um"], list(args["e"]), list(args["mu"]), d)
                            vals.append(float(w @ lam2))
                    fd = (vals[0] - vals[1]) / (2 * h)
                    worst = max(worst, abs(fd - float(g.view(-1)[k])) / max(1.0, abs(fd)))
    print("contact_solve_torch self-check: worst relative gradient error %.2e" % worst)
    raise SystemExit(0 if worst < 1e-5 else 1)
