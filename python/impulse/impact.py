"""Planar impact models (Fazeli et al. 2017): the six analytical laws, the IRB
bound, identification, Gaussian processes.
"""
from __future__ import annotations

import ctypes
import json
import os
import tempfile
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import _lib
from ._lib import Error, check, f64, lib, ptr


IMPACT_LAWS = ("drumshell", "ap-poisson", "ap-newton", "mirtich", "wang-mason", "whittaker")


def _parse(law: str, variant: str = "textbook") -> tuple[int, int]:
    """The library's ids of a law and variant; unknown names are refused with
    the Python names (IMPACT_LAWS), not the CLI's list-models."""
    if law not in IMPACT_LAWS:
        raise Error(_lib.unknown("law", law, IMPACT_LAWS))
    if variant not in ("textbook", "authors"):
        raise Error(_lib.unknown("variant", variant, ("textbook", "authors")))
    m, v = ctypes.c_int(), ctypes.c_int()
    check(lib.imp_impact_model_parse(law.encode(), ctypes.byref(m), b"law"))
    check(lib.imp_impact_variant_parse(variant.encode(), ctypes.byref(v), b"variant"))
    return m.value, v.value


def _law(name: str, mu: float, eps: float, variant: str = "textbook") -> _lib.ImpactLaw:
    law = _lib.ImpactLaw(*_parse(name, variant), mu, eps)
    check(lib.imp_impact_law_check(ctypes.byref(law)))
    return law


def impact_table1(law: str) -> tuple[float, float]:
    """(mu, eps) that Fazeli et al. identified for a law (their Table 1)."""
    mu, eps = ctypes.c_double(), ctypes.c_double()
    lib.imp_impact_table1(_parse(law)[0], ctypes.byref(mu), ctypes.byref(eps))
    return mu.value, eps.value


def impact_predict(law: str, W, u, mu: float | Sequence[float], eps: float | Sequence[float],
                   variant: str = "textbook", return_status: bool = False):
    """Impulses P = (Pt, Pn) of an analytical impact law for many impacts.

    law: drumshell | ap-poisson | ap-newton | mirtich | wang-mason | whittaker.
    W: contact-space compliance J M^-1 J^T, (n, 2, 2) or (2, 2), rows (t, n).
    u: pre-impact contact velocity (ut, un), (n, 2) or (2,).
    mu, eps: friction and restitution, scalars or (n,) arrays.
    variant: 'textbook' or 'authors' (Fazeli et al.'s implementation).
    Returns P (n, 2) (or (2,) for one impact). An impact the law cannot
    predict (not impacting, bad input, no solution) raises impulse.Error
    naming it, unless return_status: then (P, status) with P NaN there and
    status (n,) int32: 0 ok, 1 not impacting, 2 bad input, 3 no solution."""
    W, u = f64(W, "W"), f64(u, "u")
    single = u.ndim == 1
    if u.ndim not in (1, 2) or u.shape[-1] != 2:
        raise Error(f"u: shape {u.shape}, want (n, 2) or (2,): the pre-impact contact velocity (ut, un)")
    n = 1 if single else u.shape[0]
    if W.shape not in ((n, 2, 2), (2, 2)) or (W.ndim == 2 and not single):
        raise Error(f"W: shape {W.shape}, want ({n}, 2, 2) (one 2x2 contact compliance per row of u, "
                    f"shape {u.shape})" + (" or (2, 2)" if single else ""))
    W, u = np.ascontiguousarray(W.reshape(-1, 4)), np.ascontiguousarray(np.atleast_2d(u))
    mu_a, eps_a = np.atleast_1d(f64(mu, "mu")), np.atleast_1d(f64(eps, "eps"))
    if mu_a.size == 1 and eps_a.size == 1:
        n_param = 1
    else:
        n_param = n
        mu_a, eps_a = np.ascontiguousarray(np.broadcast_to(mu_a, (n,))), np.ascontiguousarray(np.broadcast_to(eps_a, (n,)))
    proto = _law(law, float(mu_a[0]), float(eps_a[0]), variant) if np.all(np.isfinite(mu_a[:1])) else None
    P = np.empty((n, 2))
    status = np.zeros(n, dtype=np.int32)
    if hasattr(lib, "imp_impact_predict_batch"):
        m, v = _parse(law, variant)
        n_failed = ctypes.c_size_t()
        check(lib.imp_impact_predict_batch(m, v, n, ptr(W), ptr(u), ptr(mu_a), ptr(eps_a), n_param,
                                           ptr(P), status.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
                                           ctypes.byref(n_failed)))
        if n_failed.value and not return_status:
            raise Error(lib.imp_last_error().decode("utf-8", "replace"))
    else:  # a library without the batch entry point: one call per impact
        for i in range(n):
            law_i = proto if n_param == 1 and proto is not None else _law(law, float(mu_a[i]), float(eps_a[i]), variant)
            if lib.imp_impact_predict(ctypes.byref(law_i), ptr(W[i]), ptr(u[i]), ptr(P[i])) != 0:
                if not return_status:
                    raise Error(f"impact {i}: " + lib.imp_last_error().decode("utf-8", "replace"))
                P[i], status[i] = np.nan, 2 if u[i, 1] < 0 else 1
    if return_status:
        return (P[0], status[0]) if single else (P, status)
    return P[0] if single else P


def _rows3(k: int | None, **arrays: ArrayLike) -> tuple[int, list[np.ndarray]]:
    """(k, 3) C-contiguous float64 arrays of the named inputs: views when the
    caller's arrays already are (no copy), a (3,) row broadcast to k rows."""
    given = [f64(a, name) for name, a in arrays.items()]
    out = [np.atleast_2d(a) for a in given]
    if k is None:
        k = max(a.shape[0] for a in out)
    for i, (name, a) in enumerate(zip(arrays, out)):
        if a.shape[1:] != (3,) or a.shape[0] not in (1, k) or given[i].ndim > 2:
            raise Error(f"{name}: shape {given[i].shape}, want ({k}, 3) or (3,)")
        if a.shape[0] != k:
            out[i] = np.ascontiguousarray(np.broadcast_to(a, (k, 3)))
    return k, out


def _int32_ptr(a: np.ndarray):
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))


def _batch_done(n_failed: ctypes.c_size_t, return_status: bool) -> None:
    if n_failed.value and not return_status:
        raise Error(lib.imp_last_error().decode("utf-8", "replace"))


def impact_irb(d: ArrayLike, n: ArrayLike, v_pre: ArrayLike, v_post: ArrayLike, mass: float, inertia: float,
               kg: float | None = None, metric: str = "velocity", return_status: bool = False
               ) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The IRB bound (Fazeli et al. 2017, [ISRR] eq 7) of many impacts: for
    each impact the admissible rigid impulse closest to the measured one.

    d, n: tangent and normal Jacobian rows, (k, 3) or (3,) shared by all.
    v_pre, v_post: (vx, vy, omega) before and after, (k, 3).
    mass, inertia: the body's; kg the radius of gyration of the error metric
    (default sqrt(inertia / mass)); metric 'velocity' or 'momentum'.
    One C call (imp_impact_irb_batch) for all impacts; C-contiguous float64
    inputs are passed without copies.
    Returns (P (k, 2), error (k,)), error the metric's distance in m/s. An
    impact without a bound (not impacting, bad input) raises impulse.Error
    naming it, unless return_status: then (P, error, status) with NaN there
    and status (k,) int32: 0 ok, 1 not impacting, 2 bad input, 3 no solution."""
    kg = float(np.sqrt(inertia / mass)) if kg is None else kg
    if metric not in ("velocity", "momentum"):
        raise Error(f"metric: '{metric}' is not velocity or momentum")
    k, (v_post_, ) = _rows3(None, v_post=v_post)
    k, (d, n, v_pre) = _rows3(k, d=d, n=n, v_pre=v_pre)
    P, err, status = np.empty((k, 2)), np.empty(k), np.empty(k, dtype=np.int32)
    n_failed = ctypes.c_size_t()
    check(lib.imp_impact_irb_batch(0 if metric == "velocity" else 1, k, ptr(d), ptr(n), ptr(v_pre), ptr(v_post_),
                                   float(mass), float(inertia), float(kg), ptr(P), ptr(err), None, _int32_ptr(status),
                                   ctypes.byref(n_failed)))
    _batch_done(n_failed, return_status)
    return (P, err, status) if return_status else (P, err)


def impact_identify(law: str, d: ArrayLike, n: ArrayLike, v_pre: ArrayLike, v_post: ArrayLike | None,
                    P_target: ArrayLike, mass: float, inertia: float, variant: str = "textbook",
                    mu_cap: float = 1.0, grid: int = 21, tol: float = 1e-6, return_status: bool = False
                    ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Per-impact identification of (mu, eps) of a law (Fazeli et al. [ISRR]
    eqs 8-9) for many impacts: for each, the (mu*, eps*) with 0 <= mu <=
    mu_s(eps) <= mu_cap, 0 <= eps <= 1 whose impulse is closest to the target.

    law: drumshell | ap-poisson | ap-newton | mirtich | wang-mason | whittaker.
    d, n: Jacobian rows (k, 3) or (3,); v_pre (k, 3); v_post is not used by
    the identification (None is accepted); P_target (k, 2) target impulses.
    grid: start-search points per axis; tol: final compass-search step.
    One C call (imp_impact_identify_batch); C-contiguous float64 inputs are
    passed without copies.
    Returns (k, 3) = (mu*, eps*, residual); an impact that cannot be
    identified raises impulse.Error naming it, unless return_status: then
    (out, status) with NaN rows there (status codes as impact_irb's)."""
    k, (v_pre, ) = _rows3(None, v_pre=v_pre)
    k, (d, n) = _rows3(k, d=d, n=n)
    Pt = np.atleast_2d(f64(P_target, "P_target"))
    if Pt.shape != (k, 2):
        raise Error(f"P_target: shape {Pt.shape}, want ({k}, 2)")
    m, v = _parse(law, variant)
    opt = lib.imp_ident_options_default()
    opt.mu_cap, opt.grid, opt.tol = mu_cap, grid, tol
    out, status = np.empty((k, 3)), np.empty(k, dtype=np.int32)
    n_failed = ctypes.c_size_t()
    check(lib.imp_impact_identify_batch(m, v, k, ptr(d), ptr(n), ptr(v_pre), float(mass), float(inertia),
                                        ptr(Pt), ctypes.byref(opt), ptr(out), _int32_ptr(status),
                                        ctypes.byref(n_failed)))
    _batch_done(n_failed, return_status)
    return (out, status) if return_status else out


class GaussianProcess:
    """A Gaussian-process regression (squared-exponential ARD kernel,
    hyperparameters by maximum marginal likelihood, as the impact strand's GP
    models): GaussianProcess(x (n, d), y (n,)); .predict(xs) -> (mean, var)."""

    def __init__(self, x, y, max_iter: int = 60, restarts: int = 2, seed: int = 1, standardize: bool = True):
        x = np.atleast_2d(f64(x, "x"))
        y = f64(y, "y", (x.shape[0],))
        opt = _lib.GpOptions()
        lib.imp_gp_options_default(ctypes.byref(opt))
        opt.max_iter, opt.restarts, opt.seed, opt.standardize = max_iter, restarts, seed, int(standardize)
        self._h = ctypes.c_void_p()
        self.n, self.d = x.shape
        check(lib.imp_gp_fit(ctypes.byref(self._h), ptr(x), ptr(y), x.shape[0], x.shape[1], ctypes.byref(opt)))

    def __repr__(self) -> str:
        return f"GaussianProcess({self.n} points of {self.d} features, noise variance {self.noise_var:.3g})" \
            if getattr(self, "_h", None) else "GaussianProcess(closed)"

    def predict(self, xs) -> tuple[np.ndarray, np.ndarray]:
        xs = np.atleast_2d(f64(xs, "xs", (-1, self.d)))
        mean, var = np.empty(xs.shape[0]), np.empty(xs.shape[0])
        check(lib.imp_gp_predict(self._h, ptr(xs), xs.shape[0], ptr(mean), ptr(var)))
        return mean, var

    @property
    def noise_var(self) -> float:
        return lib.imp_gp_noise_var(self._h)

    def close(self) -> None:
        if getattr(self, "_h", None):
            lib.imp_gp_free(self._h)
            self._h = ctypes.c_void_p()

    __del__ = close


# --------------------------------------------------------------------------- the MIT planar impact data

class ImpactData:
    """Measured planar impacts as the arrays the impact functions take
    (impact_data() returns one). Rows are the usable impacts (pre-impact
    normal contact velocity < 0, not flagged invalid), in file order.

    d, n: tangent and normal Jacobian rows (k, 3); v_pre, v_post: (vx, vy,
    omega) before and after (k, 3); mass (kg), inertia (kg m^2), kg (radius
    of gyration, m); W: contact compliance J M^-1 J^T (k, 2, 2), rows (t, n);
    u: pre-impact contact velocity (ut, un) (k, 2); P: measured impulse
    (Pt, Pn) = W^-1 (J v_post - u) (k, 2); index: each row's row in the file;
    rows: rows in the file; convention: 'stored' or 'corrected' (d3 -> -d3);
    path: the file read."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __len__(self) -> int:
        return int(self.d.shape[0])

    def __repr__(self) -> str:
        return (f"ImpactData({len(self)} impacts of {self.rows} rows, convention={self.convention!r}, "
                f"mass={self.mass:g}, inertia={self.inertia:.4g}; d, n, v_pre, v_post (k, 3), W (k, 2, 2), "
                f"u, P (k, 2); path={self.path!r})")


def _impact_data_candidates() -> list[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.join(here, "..", "..")                      # the source tree: python/impulse -> repo root
    library = os.path.join(os.path.dirname(os.path.realpath(_lib.path or ".")), "..")  # build/ -> repo root
    out = [os.environ.get("IMPULSE_IMPACT_DATA", "")]
    out += ["../shared/data/planar-impact", "../../shared/data/planar-impact"]   # as the CLI, from the working folder
    out += [os.path.join(root, "..", "shared", "data", "planar-impact") for root in (tree, library)]
    return [os.path.normpath(p) for p in out if p]


def impact_data(path: str | os.PathLike | None = None, convention: str = "stored") -> ImpactData:
    """The MIT planar impact data (Fazeli et al. 2017: an ellipse dropped
    2000 times, 1718 usable impacts) as the arrays impact_predict, impact_irb
    and impact_identify take:

        mit = impulse.impact_data()
        P = impulse.impact_predict("mirtich", mit.W, mit.u, mu=0.2, eps=0.5)
        P_irb, err = impulse.impact_irb(mit.d, mit.n, mit.v_pre, mit.v_post, mit.mass, mit.inertia)

    path: data_ellipse.mat (or a folder holding it), the raw 2000-drop .mat,
    an impact-set .npz of `impulse impact export` or drops of `impulse impact
    drop`; by default data_ellipse.mat found as the CLI finds it:
    $IMPULSE_IMPACT_DATA, then ../shared/data/planar-impact from the working
    folder or beside the source tree. convention: 'stored' (d as in the
    files) or 'corrected' (d3 -> -d3, consistent with theta and omega).
    Returns an ImpactData (see its help for every array)."""
    if convention not in ("stored", "corrected"):
        raise Error(_lib.unknown("convention", convention, ("stored", "corrected")))
    if path is None:
        tried = _impact_data_candidates()
        found = [p for p in tried if os.path.exists(os.path.join(p, "data_ellipse.mat"))]
        if not found:
            raise Error("impact_data: data_ellipse.mat not found (looked in " + ", ".join(tried) + "): pass "
                        "path=... or set IMPULSE_IMPACT_DATA to the folder holding it")
        path = found[0]
    path = _lib.fspath(path, "path")
    if os.path.isdir(path):
        path = os.path.join(path, "data_ellipse.mat")
    s = ctypes.create_string_buffer(256)  # an imp_impact_set (include/impulse/impact.h, 88 bytes on LP64)
    check(lib.imp_impact_load_any(s, os.fsencode(path)))
    fd, tmp = tempfile.mkstemp(suffix=".npz", prefix="impulse-")
    os.close(fd)
    try:
        lib.imp_impact_set_convention(s, int(convention == "corrected"))
        check(lib.imp_impact_save_npz(s, os.fsencode(tmp)))
        with np.load(tmp, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    finally:
        lib.imp_impact_set_free(s)
        os.unlink(tmp)
    meta = json.loads(str(arrays.pop("meta")))
    mass, kg = float(meta["mass"]), float(meta["kg"])
    inertia = mass * kg * kg
    rows = arrays["pre"].shape[0]
    pre, post, d, n = (np.ascontiguousarray(arrays[k], dtype=np.float64) for k in ("pre", "post", "d", "n"))
    v_pre, v_post = np.ascontiguousarray(pre[:, 3:]), np.ascontiguousarray(post[:, 3:])
    un = np.einsum("ij,ij->i", n, v_pre)
    index = np.flatnonzero((arrays["valid"] != 0) & (un < 0))
    k = index.size
    W, u, P = np.empty((k, 2, 2)), np.empty((k, 2)), np.empty((k, 2))
    c = _lib.Contact()
    for r, i in enumerate(index):
        check(lib.imp_contact_make(ctypes.byref(c), ptr(d[i]), ptr(n[i]), mass, inertia, ptr(v_pre[i]),
                                   ptr(v_post[i])))
        W[r] = np.reshape(c.W, (2, 2))
        u[r] = c.u
        P[r] = np.reshape(c.Mc, (2, 2)) @ (np.asarray(c.u_post) - np.asarray(c.u))
    return ImpactData(d=d[index], n=n[index], v_pre=v_pre[index], v_post=v_post[index], mass=mass,
                      inertia=inertia, kg=kg, W=W, u=u, P=P, index=index, rows=rows, convention=convention,
                      path=os.path.abspath(path))
