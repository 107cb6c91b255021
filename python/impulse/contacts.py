"""The contact module (include/impulse/contact.h, docs/derivations/contact.md):
bodies with shape and contact candidates (ContactModel), detection (gaps,
frames, Jacobian rows and their reverse pass), assembly (active set, label
attribution, the compliance A = J M^-1 J^T) and the multi-contact impulse
solve (Newton restitution, Coulomb friction) with its reverse pass.

Arrays are C-contiguous float64 and go to the library by pointer (no copy
when they already are). M^-1 is the model's free bodies (minv=None) or a
dense symmetric (nv, nv) array.

    m = impulse.ContactModel(2, bodies=[{"kind": "point", "mass": 1.0}],
                             candidates=[{"kind": "plane", "body_b": 0, "normal": [0, 1], "e": 0.5}])
    q, v = np.array([0.0, 0.0]), np.array([0.3, -2.0])
    J = m.jacobian(q)[0]                       # (dim, nv): normal row then tangent
    v_plus, sol = m.impulse(v, J[None], e=[0.5], mu=[0.0])   # v_plus = (0.3, 1.0)
"""
from __future__ import annotations

import ctypes
import os
from typing import Mapping, Sequence

import numpy as np

from . import _rigid_lib as R
from ._lib import MAX_BODIES, MAX_CONTACTS, Error, Result, check, f64, lib, ptr, unknown

__all__ = ["ContactModel", "ContactSystem", "contact_solve", "contact_solve_backward", "BODY_KINDS", "CANDIDATE_KINDS"]

BODY_KINDS = {"point": 0, "planar": 1, "spatial": 2}
CANDIDATE_KINDS = {"plane": 0, "spheres": 1}
BRANCHES = ("separate", "stick", "slide")
LABEL_NONE = -1
_ip = ctypes.POINTER(ctypes.c_int)
_CSYS_MAX_CONTACTS = 16  # IMP_CSYS_MAX_CONTACTS, include/impulse/constrained.h


def _vec(v, n: int, name: str) -> list:
    a = np.asarray(v, dtype=float).ravel()
    if a.size > n:
        raise Error(f"{name}: {a.size} numbers, want at most {n}")
    return list(a) + [0.0] * (n - a.size)


def _kind(v, kinds: dict, name: str) -> int:
    if isinstance(v, str):
        if v not in kinds:
            raise Error(unknown(name, v, kinds))
        return kinds[v]
    return int(v)


def _opts(regularization, tol, max_sweeps, max_pivots) -> R.ContactSolveOpts:
    o = R.ContactSolveOpts()
    lib.imp_contact_solve_opts_default(ctypes.byref(o))
    if regularization is not None:
        o.regularization = float(regularization)
    if tol is not None:
        o.tol = float(tol)
    if max_sweeps is not None:
        o.max_sweeps = int(max_sweeps)
    if max_pivots is not None:
        o.max_pivots = int(max_pivots)
    return o


def _solution(sol: R.ContactSolution) -> Result:
    rows = sol.n * sol.dim
    return Result(lambda_=np.array(sol.lambda_[:rows]).reshape(sol.n, sol.dim),
                  u_plus=np.array(sol.u_plus[:rows]).reshape(sol.n, sol.dim),
                  branch=[BRANCHES[b] for b in sol.branch[:sol.n]],
                  slide=np.array([sol.slide[k][:] for k in range(sol.n)]).reshape(sol.n, 2),
                  eps=sol.eps, sweeps=sol.sweeps, pivots=sol.pivots, residual=sol.residual,
                  fallback=bool(sol.fallback))


def _law(e, mu, n: int) -> tuple[np.ndarray, np.ndarray]:
    e = f64(np.broadcast_to(np.asarray(e, dtype=float), (n,)), "e")
    mu = f64(np.broadcast_to(np.asarray(mu, dtype=float), (n,)), "mu")
    return e, mu


def _work(n: int, dim: int, nv: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    nd = (lib.imp_contact_impulse_work_doubles(n, dim, nv) if nv is not None
          else lib.imp_contact_solve_work_doubles(n, dim))
    return np.empty(max(int(nd), 1)), np.empty(max(int(lib.imp_contact_solve_work_ints(n, dim)), 1), dtype=np.intc)


LAWS = {"newton": 0, "paper": 1, "halfstep": 2}  # IMP_CONTACT_LAW_*


def contact_solve(A, u_minus, e, mu, *, dim: int | None = None, law: str = "newton", u_ref=None,
                  regularization: float | None = None, tol: float | None = None, max_sweeps: int | None = None,
                  max_pivots: int | None = None) -> Result:
    """Impulses of n contacts solved together (eqs 7-10): A (rows, rows) the
    contact-space compliance, u_minus (n, dim) the pre-impact contact
    velocities (normal first), e and mu (n,) or scalars. law: "newton"
    (eq 8), "paper" (u+_n = -e u_ref_n) or "halfstep" (u+_n = max(u-_n -
    (1 + e) u_ref_n, 0)), the CD-Lagrange laws (docs/derivations/contact.md
    sec 11); u_ref (n, dim): the restitution reference velocities (None:
    u_minus). Returns {lambda_ (n, dim), u_plus (n, dim), branch, slide, eps,
    sweeps, pivots, residual, fallback}."""
    u = f64(u_minus, "u_minus")
    if u.ndim == 1 and dim is not None:
        u = u.reshape(-1, dim)
    if u.ndim != 2 or not 1 <= u.shape[1] <= 3:
        raise Error(f"u_minus: shape {u.shape}, want (contacts, dim) with dim 1..3 (or pass dim=)")
    n, d = u.shape
    if not 1 <= n <= MAX_CONTACTS:
        raise Error(f"u_minus: {n} contacts, want 1..{MAX_CONTACTS}")
    A = f64(A, "A", (n * d, n * d))
    e, mu = _law(e, mu, n)
    if law not in LAWS:
        raise Error(f"law: {law!r} is not one of {', '.join(LAWS)}")
    ur = None if u_ref is None else f64(u_ref, "u_ref", (n, d))
    sol = R.ContactSolution()
    o = _opts(regularization, tol, max_sweeps, max_pivots)
    w, iw = _work(n, d)
    check(lib.imp_contact_solve_law_forward(ctypes.byref(sol), ptr(A), ptr(u), None if ur is None else ptr(ur),
                                            ptr(e), ptr(mu), n, d, LAWS[law], ctypes.byref(o), ptr(w),
                                            iw.ctypes.data_as(_ip)))
    r = _solution(sol)
    r._c, r._inputs, r._u_ref = sol, (A, u, e, mu), ur
    return r


def contact_solve_backward(solution: Result, lambda_bar) -> Result:
    """Reverse pass of contact_solve by implicit differentiation on its
    branches (eqs 12-15, 21): given dL/dlambda (n, dim), returns {A, u_minus,
    e, mu} gradients, and u_ref where contact_solve was given one."""
    if len(getattr(solution, "_inputs", ())) != 4:
        raise Error("solution: expected the result of impulse.contact_solve")
    A, u, e, mu = solution._inputs
    sol = solution._c
    n, d = u.shape
    lb = f64(lambda_bar, "lambda_bar").reshape(-1)
    if lb.size != n * d:
        raise Error(f"lambda_bar: {lb.size} numbers, want {n * d} (contacts x dim)")
    A_bar, u_bar, e_bar, mu_bar = np.zeros_like(A), np.zeros_like(u), np.zeros(n), np.zeros(n)
    ur = getattr(solution, "_u_ref", None)
    ur_bar = None if ur is None else np.zeros_like(ur)
    w, iw = _work(n, d)
    check(lib.imp_contact_solve_law_backward(ptr(A_bar), ptr(u_bar), None if ur is None else ptr(ur_bar), ptr(e_bar),
                                             ptr(mu_bar), ptr(lb), ctypes.byref(sol), ptr(A), ptr(u),
                                             None if ur is None else ptr(ur), ptr(e), ptr(mu), ptr(w),
                                             iw.ctypes.data_as(_ip)))
    r = Result(A=A_bar, u_minus=u_bar, e=e_bar, mu=mu_bar)
    if ur is not None:
        r["u_ref"] = ur_bar
    return r


class ContactModel:
    """Bodies and contact candidates of the contact module (imp_contact_model).

    dim: 2 or 3. bodies: dicts {kind: "point" | "planar" | "spatial", mass,
    inertia (planar: a number; spatial: 3x3 or its 9 numbers)}. candidates:
    dicts {kind: "plane" | "spheres", body_a (spheres; a plane's is the wall),
    body_b, point_a, point_b (body frame), radius_a, radius_b, normal and
    offset (plane n . x = offset), e, mu}. gap_tol: a contact is active when
    phi <= gap_tol and closing. Coordinates: a point q = v = x; a planar body
    q = (x, y, theta), v = (vx, vy, omega); a spatial body q = (x, y, z, qw,
    qx, qy, qz), v = (world linear, body angular)."""

    def __init__(self, dim: int, bodies: Sequence[Mapping], candidates: Sequence[Mapping], gap_tol: float = 0.0):
        m = R.ContactModel()
        m.dim, m.gap_tol = int(dim), float(gap_tol)
        if not 1 <= len(bodies) <= MAX_BODIES:
            raise Error(f"bodies: {len(bodies)}, want 1..{MAX_BODIES}")
        if not 1 <= len(candidates) <= MAX_CONTACTS:
            raise Error(f"candidates: {len(candidates)}, want 1..{MAX_CONTACTS}")
        m.n_bodies, m.n_candidates = len(bodies), len(candidates)
        for i, b in enumerate(bodies):
            extra = set(b) - {"kind", "mass", "inertia"}
            if extra:
                raise Error(f"bodies[{i}]: unknown key '{sorted(extra)[0]}' (known: kind, mass, inertia)")
            c = m.bodies[i]
            c.kind = _kind(b.get("kind", "point"), BODY_KINDS, f"bodies[{i}].kind")
            c.mass = float(b.get("mass", 1.0))
            c.inertia[:] = _vec(b.get("inertia", 0.0), 9, f"bodies[{i}].inertia")
        keys = {"kind", "body_a", "body_b", "point_a", "point_b", "radius_a", "radius_b", "normal", "offset", "e",
                "mu"}
        for i, k in enumerate(candidates):
            extra = set(k) - keys
            if extra:
                raise Error(f"candidates[{i}]: unknown key '{sorted(extra)[0]}' (known: {', '.join(sorted(keys))})")
            c = m.cand[i]
            c.kind = _kind(k.get("kind", "plane"), CANDIDATE_KINDS, f"candidates[{i}].kind")
            c.body_a = int(k.get("body_a", R.WALL if c.kind == 0 else 0))
            c.body_b = int(k.get("body_b", 0))
            for f in ("point_a", "point_b", "normal"):
                getattr(c, f)[:] = _vec(k.get(f, 0.0), 3, f"candidates[{i}].{f}")
            for f in ("radius_a", "radius_b", "offset", "e", "mu"):
                setattr(c, f, float(k.get(f, 0.0)))
        check(lib.imp_contact_model_init(ctypes.byref(m)))
        self._c = m

    dim = property(lambda self: self._c.dim)
    nq = property(lambda self: self._c.nq)
    nv = property(lambda self: self._c.nv)
    n_candidates = property(lambda self: self._c.n_candidates)
    q_offset = property(lambda self: np.array(self._c.q_offset[:self._c.n_bodies]))
    v_offset = property(lambda self: np.array(self._c.v_offset[:self._c.n_bodies]))

    def __repr__(self) -> str:
        return (f"ContactModel(dim={self._c.dim}, {self._c.n_bodies} bodies, {self._c.n_candidates} candidates, "
                f"nq={self._c.nq}, nv={self._c.nv})")

    def _q(self, q, name: str = "q") -> np.ndarray:
        return f64(q, name, (self._c.nq,))

    def _v(self, v, name: str = "v") -> np.ndarray:
        return f64(v, name, (self._c.nv,))

    def check_state(self, q) -> None:
        """Raise impulse.Error on a non-finite state or a non-unit quaternion."""
        check(lib.imp_contact_state_check(ctypes.byref(self._c), ptr(self._q(q))))

    def advance(self, q, v, h: float) -> np.ndarray:
        """q moved with constant generalized velocity v for a time h."""
        out = np.empty(self._c.nq)
        lib.imp_contact_advance(ctypes.byref(self._c), ptr(self._q(q)), ptr(self._v(v)), float(h), ptr(out))
        return out

    def kinetic_energy(self, v) -> float:
        return float(lib.imp_contact_kinetic_energy(ctypes.byref(self._c), ptr(self._v(v))))

    def _frames(self, q: np.ndarray):
        fr = (R.ContactFrame * self._c.n_candidates)()
        check(lib.imp_contact_detect(ctypes.byref(self._c), ptr(q), fr))
        return fr

    def detect(self, q) -> Result:
        """Every candidate's gap phi (n,), normal n (n, 3), tangents t (n, 2, 3)
        and world contact points pa, pb (n, 3) at q."""
        fr = self._frames(self._q(q))
        arr = np.ctypeslib.as_array(fr).view(np.float64).reshape(self._c.n_candidates, -1)  # 16 doubles a frame
        return Result(phi=arr[:, 0].copy(), n=arr[:, 1:4].copy(), t=arr[:, 4:10].reshape(-1, 2, 3).copy(),
                      pa=arr[:, 10:13].copy(), pb=arr[:, 13:16].copy())

    def jacobian(self, q, c: int | None = None) -> np.ndarray:
        """Jacobian rows (dim, nv) of candidate c at q (normal then tangents),
        or all candidates' (n_candidates, dim, nv)."""
        q = self._q(q)
        fr = self._frames(q)
        d, nv = self._c.dim, self._c.nv
        cs = range(self._c.n_candidates) if c is None else [self._cand(c)]
        J = np.empty((len(cs), d, nv))
        for i, k in enumerate(cs):
            lib.imp_contact_jacobian(ctypes.byref(self._c), ptr(q), ctypes.byref(fr[k]), k, ptr(J[i]))
        return J if c is None else J[0]

    def _cand(self, c: int) -> int:
        if not 0 <= int(c) < self._c.n_candidates:
            raise Error(f"c: {c} is not a candidate (0..{self._c.n_candidates - 1})")
        return int(c)

    def jacobian_backward(self, q, c: int, phi_bar: float = 0.0, J_bar=None) -> Result:
        """Reverse of detect + jacobian for candidate c: {q (nq,), point_a,
        point_b, radius_a, radius_b, offset} gradients from dL/dphi and dL/dJ."""
        q = self._q(q)
        c = self._cand(c)
        fr = self._frames(q)
        Jb = None if J_bar is None else f64(J_bar, "J_bar", (self._c.dim, self._c.nv))
        q_bar = np.zeros(self._c.nq)
        g = R.ContactGeomGrad()
        lib.imp_contact_jacobian_backward(ptr(q_bar), ctypes.byref(g), float(phi_bar), ptr(Jb), ctypes.byref(self._c),
                                          ptr(q), ctypes.byref(fr[c]), c)
        return Result(q=q_bar, point_a=np.array(g.point_a[:]), point_b=np.array(g.point_b[:]), radius_a=g.radius_a,
                      radius_b=g.radius_b, offset=g.offset)

    def gap_rate(self, q, v, c: int) -> float:
        """d phi/dt = J_n v of candidate c (< 0: closing)."""
        q = self._q(q)
        c = self._cand(c)
        fr = self._frames(q)
        return float(lib.imp_contact_gap_rate(ctypes.byref(self._c), ptr(q), ctypes.byref(fr[c]), c,
                                              ptr(self._v(v))))

    def active_set(self, q, v, labels=None) -> np.ndarray:
        """Ids of the active candidates: labelled 1, or (label None/-1) phi <=
        gap_tol and closing. labels: (n_candidates,) of -1, 0, 1 or None."""
        q = self._q(q)
        fr = self._frames(q)
        lab = None
        if labels is not None:
            lab = np.ascontiguousarray(labels, dtype=np.int8)
            if lab.shape != (self._c.n_candidates,):
                raise Error(f"labels: shape {lab.shape}, want ({self._c.n_candidates},)")
        act = np.empty(self._c.n_candidates, dtype=np.intc)
        n = lib.imp_contact_active_set(ctypes.byref(self._c), ptr(q), fr, ptr(self._v(v)),
                                       None if lab is None else lab.ctypes.data_as(ctypes.POINTER(ctypes.c_byte)),
                                       act.ctypes.data_as(_ip))
        return act[:n].copy()

    def attribute_labels(self, q, touch, max_gap: float = float("inf")) -> np.ndarray:
        """Per-body touch labels (n_bodies,) to per-candidate labels (0/1)."""
        q = self._q(q)
        fr = self._frames(q)
        t = np.ascontiguousarray(np.asarray(touch) != 0, dtype=np.uint8)
        if t.shape != (self._c.n_bodies,):
            raise Error(f"touch: shape {t.shape}, want ({self._c.n_bodies},)")
        lab = np.empty(self._c.n_candidates, dtype=np.int8)
        check(lib.imp_contact_attribute_labels(ctypes.byref(self._c), fr,
                                               t.ctypes.data_as(ctypes.POINTER(ctypes.c_ubyte)), float(max_gap),
                                               lab.ctypes.data_as(ctypes.POINTER(ctypes.c_byte))))
        return lab

    def assemble_jacobian(self, q, active) -> np.ndarray:
        """The active candidates' rows stacked: (len(active) dim, nv)."""
        q = self._q(q)
        fr = self._frames(q)
        act = np.ascontiguousarray(active, dtype=np.intc)
        for a in act:
            self._cand(a)
        J = np.empty((act.size * self._c.dim, self._c.nv))
        lib.imp_contact_assemble_jacobian(ctypes.byref(self._c), ptr(q), fr, act.ctypes.data_as(_ip), act.size, ptr(J))
        return J

    def _minv(self, minv):
        if minv is None:
            return ctypes.cast(lib.imp_contact_minv_bodies, R.MINV_FN), ctypes.cast(ctypes.byref(self._c),
                                                                                  ctypes.c_void_p), None
        M = f64(minv, "minv", (self._c.nv, self._c.nv))
        return ctypes.cast(lib.imp_contact_minv_dense, R.MINV_FN), M.ctypes.data_as(ctypes.c_void_p), M

    def minv(self, x, minv=None) -> np.ndarray:
        """M^-1 applied to the columns of x ((nv,) or (k, nv): rows are vectors)."""
        X = f64(x, "x")
        X2 = X.reshape(-1, self._c.nv) if X.size % max(self._c.nv, 1) == 0 else None
        if X2 is None or X.shape[-1] != self._c.nv:
            raise Error(f"x: shape {X.shape}, want (nv,) or (k, nv) with nv {self._c.nv}")
        fn, data, keep = self._minv(minv)
        out = np.empty_like(X2)
        check(fn(ptr(out), ptr(X2), self._c.nv, X2.shape[0], data))
        return out.reshape(X.shape)

    def minv_bodies_backward(self, Minv_bar) -> Result:
        """Gradients of the body masses (n_bodies,) and inertias (n_bodies, 9) from dL/dM^-1."""
        Mb = f64(Minv_bar, "Minv_bar", (self._c.nv, self._c.nv))
        mb, ib = np.zeros(self._c.n_bodies), np.zeros((self._c.n_bodies, 9))
        lib.imp_contact_minv_bodies_backward(ptr(mb), ptr(ib), ptr(Mb), ctypes.byref(self._c))
        return Result(mass=mb, inertia=ib)

    def compliance(self, J, minv=None) -> tuple[np.ndarray, np.ndarray]:
        """(A = J M^-1 J^T (rows, rows), BT = J M^-1 (rows, nv)) of stacked rows J (rows, nv)."""
        J = f64(J, "J")
        J = J.reshape(-1, self._c.nv) if J.ndim == 3 else J
        J = f64(J, "J", (-1, self._c.nv))
        rows = J.shape[0]
        A, BT = np.empty((rows, rows)), np.empty((rows, self._c.nv))
        fn, data, keep = self._minv(minv)
        check(lib.imp_contact_compliance(ptr(A), ptr(BT), ptr(J), rows, self._c.nv, fn, data))
        return A, BT

    def compliance_backward(self, J, A_bar, BT_bar=None, minv=None) -> Result:
        """{J (rows, nv), minv (nv, nv)} gradients of the compliance."""
        J = f64(J, "J", (-1, self._c.nv))
        rows, nv = J.shape[0], self._c.nv
        Ab = f64(A_bar, "A_bar", (rows, rows))
        Bb = None if BT_bar is None else f64(BT_bar, "BT_bar", (rows, nv))
        A, BT = self.compliance(J, minv)
        fn, data, keep = self._minv(minv)
        Jb, Mb, tmp = np.zeros((rows, nv)), np.zeros((nv, nv)), np.empty(max(2 * rows * nv, 1))
        check(lib.imp_contact_compliance_backward(ptr(Jb), ptr(Mb), ptr(Ab), ptr(Bb), ptr(J), ptr(BT), rows, nv, fn,
                                                  data, ptr(tmp)))
        return Result(J=Jb, minv=Mb)

    def impulse(self, v_minus, J, e, mu, minv=None, *, regularization: float | None = None, tol: float | None = None,
                max_sweeps: int | None = None, max_pivots: int | None = None) -> tuple[np.ndarray, Result]:
        """The impulse step (eqs 5, 6, 11): J (n, dim, nv) or (n dim, nv) the
        active contacts' rows; returns (v_plus (nv,), solution as contact_solve's)."""
        v = self._v(v_minus, "v_minus")
        d, nv = self._c.dim, self._c.nv
        J = f64(J, "J").reshape(-1, nv) if np.ndim(J) == 3 else f64(J, "J", (-1, nv))
        if J.shape[0] % d or J.shape[0] == 0:
            raise Error(f"J: {J.shape[0]} rows, want a positive multiple of dim {d}")
        n = J.shape[0] // d
        e, mu = _law(e, mu, n)
        fn, data, keep = self._minv(minv)
        sol = R.ContactSolution()
        o = _opts(regularization, tol, max_sweeps, max_pivots)
        w, iw = _work(n, d, nv)
        vp = np.empty(nv)
        check(lib.imp_contact_impulse_forward(ptr(vp), ctypes.byref(sol), ptr(v), ptr(J), n, d, nv, fn, data, ptr(e),
                                              ptr(mu), ctypes.byref(o), ptr(w), iw.ctypes.data_as(_ip)))
        r = _solution(sol)
        r._c, r._inputs = sol, (v, J, e, mu, minv)
        return vp, r

    def impulse_backward(self, solution: Result, v_plus_bar, lambda_bar=None) -> Result:
        """Reverse of impulse(): {v_minus, J, minv (dense), e, mu} gradients."""
        if len(getattr(solution, "_inputs", ())) != 5:
            raise Error("solution: expected the second result of ContactModel.impulse")
        v, J, e, mu, minv = solution._inputs
        sol = solution._c
        d, nv, n = self._c.dim, self._c.nv, sol.n
        vb = self._v(v_plus_bar, "v_plus_bar")
        lb = None if lambda_bar is None else f64(lambda_bar, "lambda_bar").reshape(-1)
        if lb is not None and lb.size != n * d:
            raise Error(f"lambda_bar: {lb.size} numbers, want {n * d}")
        fn, data, keep = self._minv(minv)
        out = Result(v_minus=np.zeros(nv), J=np.zeros_like(J), minv=np.zeros((nv, nv)), e=np.zeros(n), mu=np.zeros(n))
        w, iw = _work(n, d, nv)
        check(lib.imp_contact_impulse_backward(ptr(out["v_minus"]), ptr(out["J"]), ptr(out["minv"]), ptr(out["e"]),
                                               ptr(out["mu"]), ptr(vb), ptr(lb), ctypes.byref(sol), ptr(v), ptr(J), nv,
                                               fn, data, ptr(e), ptr(mu), ptr(w), iw.ctypes.data_as(_ip)))
        return out


class ContactSystem:
    """A constrained system with contacts in Cartesian coordinates
    (include/impulse/constrained_contact.h, docs/derivations/contact.md
    "Contacts with joint constraints"): a built-in system by name
    ("chain-ground:3", "chain-ground-elastic:3", "gyroscope-wall", ...) or a
    system file (path=). States x (N,), v (N,) with N = n_points d; contact
    impulses go through the constrained inverse mass, so they keep the joints."""

    def __init__(self, name: str | None = None, *, path=None):
        from . import _lib
        if (name is None) == (path is None):
            raise Error("ContactSystem: give a system name or path=, not both")
        self._s = _lib.opaque("imp_csys")
        if path is not None:
            check(lib.imp_csys_load(self._s, os.fsencode(_lib.fspath(path, "path"))))
        else:
            check(lib.imp_chnn_system(self._s, str(name).encode()))
        n_points, dd = ctypes.c_int(), ctypes.c_int()
        check(lib.imp_flat_chnn_simulate(None if path is not None else str(name).encode(),
                                         os.fsencode(_lib.fspath(path, "path")) if path is not None else None,
                                         1, 0, 0.0, 0, 0.0, 0.0, 0.0, 0.0, 0, None, None, None, None,
                                         ctypes.byref(n_points), ctypes.byref(dd), None, None, None, None))
        self.d, self.n_points = dd.value, n_points.value
        self.N = self.d * self.n_points
        self.name = self._s.raw[:64].split(b"\0", 1)[0].decode()
        self._w = lib.imp_csys_work_new(self._s)
        if not self._w:
            raise Error("ContactSystem: out of memory (work space)")
        x, v = self.sample_state(0)
        self.n_contacts = self._count(x)

    def _count(self, x: np.ndarray) -> int:
        act = np.empty(_CSYS_MAX_CONTACTS, dtype=np.intc)
        return int(lib.imp_csys_contact_active(self._s, ptr(x), ptr(np.zeros(self.N)), float("inf"), float("-inf"),
                                               act.ctypes.data_as(_ip)))

    def __del__(self):
        w = getattr(self, "_w", None)
        if w and lib is not None:
            lib.imp_csys_work_free(w)

    def __repr__(self) -> str:
        return f"ContactSystem('{self.name}', d={self.d}, N={self.N}, {self.n_contacts} contacts)"

    def _x(self, x, name: str) -> np.ndarray:
        return f64(x, name, (self.N,))

    def _c(self, c: int) -> int:
        if not 0 <= int(c) < self.n_contacts:
            raise Error(f"c: {c} is not a contact (0..{self.n_contacts - 1})")
        return int(c)

    def sample_state(self, seed: int = 0, spread: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """A random initial state (x, v) as the simulator draws them."""
        from . import _lib
        rng = _lib.Rng()
        lib.imp_rng_seed(ctypes.byref(rng), int(seed))
        xv = np.empty(2 * self.N)
        check(lib.imp_chnn_sample_state(self._s, ctypes.byref(rng), float(spread), ptr(xv), self._w))
        return xv[:self.N].copy(), xv[self.N:].copy()

    def energy(self, x, v) -> float:
        return float(lib.imp_csys_energy(self._s, ptr(self._x(x, "x")), ptr(self._x(v, "v"))))

    def frame(self, x, c: int) -> Result:
        """Contact c at x (eq 16): gap phi, world contact point pc (d,), directions
        dirs (d, d) (normal first, then tangents) and Jacobian rows J (d, N)."""
        x = self._x(x, "x")
        c = self._c(c)
        pc, dirs, J = np.zeros(3), ((ctypes.c_double * 3) * 3)(), np.empty((self.d, self.N))
        phi = lib.imp_csys_contact_frame(self._s, ptr(x), c, ptr(pc), dirs, ptr(J))
        D = np.array([dirs[k][:] for k in range(3)])
        return Result(phi=float(phi), pc=pc[:self.d], dirs=D[:self.d, :self.d], J=J)

    def active(self, x, v, tol: float = 0.0, vtol: float = 0.0) -> np.ndarray:
        """Contacts to act on at (x, v): gap <= tol and closing (J_n v < -vtol)."""
        act = np.empty(_CSYS_MAX_CONTACTS, dtype=np.intc)
        n = lib.imp_csys_contact_active(self._s, ptr(self._x(x, "x")), ptr(self._x(v, "v")), float(tol), float(vtol),
                                        act.ctypes.data_as(_ip))
        return act[:n].copy()

    def minv(self, x, y) -> np.ndarray:
        """The constrained inverse mass P(x) (eq 17) applied to y ((N,) or (k, N))."""
        x = self._x(x, "x")
        Y = f64(y, "y")
        if Y.shape[-1] != self.N or Y.ndim > 2:
            raise Error(f"y: shape {Y.shape}, want ({self.N},) or (k, {self.N})")
        Y2 = Y.reshape(-1, self.N)
        ctx = R.CsysMinvCtx(ctypes.cast(self._s, ctypes.c_void_p), ptr(x), self._w)
        out = np.empty_like(Y2)
        check(lib.imp_csys_contact_minv(ptr(out), ptr(Y2), self.N, Y2.shape[0], ctypes.byref(ctx)))
        return out.reshape(Y.shape)

    def impulse(self, x, v, active=None) -> tuple[np.ndarray, Result]:
        """The impulse of the contacts in `active` (default: self.active(x, v))
        at x on v (eqs 5, 6, 11, 17): (v_plus (N,), solution)."""
        x = self._x(x, "x")
        vp = self._x(v, "v").copy()
        act = self.active(x, vp) if active is None else np.ascontiguousarray(active, dtype=np.intc)
        for a in act:
            self._c(a)
        sol = R.ContactSolution()
        check(lib.imp_csys_contact_impulse(self._s, ptr(x), ptr(vp), act.ctypes.data_as(_ip), act.size,
                                           ctypes.byref(sol), self._w))
        return vp, _solution(sol) if act.size else Result(lambda_=np.empty((0, self.d)))

    def simulate(self, x0, v0, dt: float, steps: int, *, rtol: float = 1e-10, atol: float = 1e-12
                 ) -> tuple[np.ndarray, Result]:
        """Event-accurate ground truth: states (steps + 1, 2N) of (x, v) at
        t = k dt, and {impacts, resting, max_penetration, impact_energy,
        projection_energy, ode, max_joint_velocity (largest |DPhi v+| after an impulse)}."""
        xv = np.concatenate([self._x(x0, "x0"), self._x(v0, "v0")])
        out = np.empty((int(steps) + 1, 2 * self.N))
        o = R.ChnnSimOpts(float(rtol), float(atol))
        st = R.ChnnContactStats()
        check(lib.imp_chnn_simulate_contact(self._s, ptr(xv), float(dt), int(steps), ctypes.byref(o), ptr(out),
                                            ctypes.byref(st)))
        r = Result(st.as_dict())
        r["ode"] = Result(st.ode.as_dict())
        return out, r

    def impact_energy(self, truth, model, *, one_step: bool = False, window: int = 0,
                      threshold: float = 1e-4) -> Result:
        """Energy lost at the truth's impacts, the truth's against a model's
        (imp_csys_impact_energy; issue #25's "within 5 %"): truth and model
        are trajectories (n, T, 2N) (or (T, 2N), or simulate's z (n, T, 2,
        points, d)), both measured with this system's true energy. model is a
        rollout (window: states each side of an impact) or, with one_step, row
        k + 1 predicted from the truth's row k. Returns impacts, truth_lost,
        model_lost, rel_error, mean_rel_error, max_rel_error, within_5pct and
        per impact truth_loss, model_loss."""
        def traj(a, name):
            a = np.asarray(a, dtype=np.float64)
            if a.ndim == 2:
                a = a[None]
            if a.ndim < 3:
                raise Error(f"{name}: want trajectories (n, T, 2N), got shape {a.shape}")
            a = np.ascontiguousarray(a.reshape(a.shape[0], a.shape[1], -1))
            if a.shape[2] != 2 * self.N:
                raise Error(f"{name}: states of {a.shape[2]} numbers, the system's are 2N = {2 * self.N}")
            return a
        t, m = traj(truth, "truth"), traj(model, "model")
        if t.shape != m.shape:
            raise Error(f"model: shape {m.shape} is not the truth's {t.shape}")
        o = R.ImpactEnergyOpts(float(threshold), int(window), int(bool(one_step)))
        r = R.ImpactEnergy()
        cap = t.shape[0] * t.shape[1]
        lt, lm = np.zeros(cap), np.zeros(cap)
        check(lib.imp_csys_impact_energy(self._s, ptr(t), ptr(m), t.shape[0], t.shape[1], ctypes.byref(o),
                                         ctypes.byref(r), ptr(lt), ptr(lm), cap))
        out = Result(r.as_dict())
        out["truth_loss"], out["model_loss"] = lt[:r.impacts].copy(), lm[:r.impacts].copy()
        return out
