"""The constrained family (CHNN, CLNN and baselines, Finzi et al. 2020):
training and the ConstrainedModel class.
"""
from __future__ import annotations

import ctypes
import os

import numpy as np

from . import _lib
from ._lib import Error, check, f64, lib, ptr
from ._run import _Hooks, _Interrupt
from .contact import _precision
from .data import _as_dataset


# resnet is also a contact-family name: on a constrained system's data (train)
# or a constrained checkpoint (load_model, by its format) it is this family's
CONSTRAINED_MODELS = ("chnn", "clnn", "hnn", "delan", "node", "resnet")


def _is_constrained_checkpoint(path) -> bool:
    """A checkpoint whose meta says format impulse-cmodel (the constrained family's)."""
    try:
        with np.load(path) as z:
            meta = z["meta"]
            text = meta.tobytes().decode() if meta.dtype.kind in "uiS" and meta.dtype.itemsize == 1 else str(meta)
        return '"format":"impulse-cmodel"' in text
    except Exception:  # not an npz with a meta: the loaders say what is wrong
        return False


def _ctraj_of(z: np.ndarray, dt: float) -> _lib.CTraj:
    t = _lib.CTraj()
    t.n_traj, t.T, t.dim, t.dt, t.z = z.shape[0], z.shape[1], z.shape[2], dt, ptr(z)
    return t


def _train_constrained(model, data, output, epochs, seed, lr, callback, run, wd=None, batch=None, chunks=None,
                       hidden=256, threads=2, precision="auto", max_substeps=None, skip_factor=None,
                       contact=None, contact_substeps=None):
    d = _as_dataset(data)
    if d.kind != "constrained":
        raise Error(f"{model}: needs a constrained system's trajectories (z or x, v), got {d.kind} data")
    kind = ctypes.c_int()
    check(lib.imp_cmodel_kind_from_name(model.encode(), ctypes.byref(kind)))
    o = _lib.CTrainOpts()
    lib.imp_ctrain_opts_default(ctypes.byref(o))
    o.threads = threads
    for field, v in (("epochs", epochs), ("lr", lr), ("weight_decay", wd), ("batch", batch), ("n_chunks", chunks),
                     ("max_substeps", max_substeps), ("skip_factor", skip_factor),
                     ("contact_substeps", contact_substeps)):
        if v is not None:
            setattr(o, field, v)
    o.seed = seed
    o.single_products = -1 if precision == "auto" else _precision("precision", precision)
    m = ConstrainedModel(_new=True)
    ctypes.memmove(m._cs, d._csystem("data"), ctypes.sizeof(m._cs))
    check(lib.imp_cmodel_init(m._m, kind.value, m._cs, hidden, 3))
    # contact: e and mu learned per contact (chnn, clnn; by default when the system declares contacts)
    n_contacts = lib.imp_flat_csystem_contacts(m._cs)
    if contact and (model not in ("chnn", "clnn") or n_contacts == 0):
        raise Error(f"contact: {model} on this system cannot learn contacts (chnn, clnn on a system with contacts)")
    if contact is not False and model in ("chnn", "clnn") and n_contacts > 0:
        check(lib.imp_cmodel_enable_contact(m._m))
    m._info()
    z = d._z("data")
    cart = _lib.CTraj()
    cart = _ctraj_of(z, d._dt())
    gen = _lib.CTraj()
    if not m.cartesian:
        check(lib.imp_ctraj_to_generalised(m._cs, ctypes.byref(cart), ctypes.byref(gen)))
    rng = _lib.Rng()
    lib.imp_rng_seed(ctypes.byref(rng), seed ^ 0x5eed)
    lib.imp_cmodel_init_params(m._m, ptr(m.params), ctypes.byref(rng))
    lib.imp_cmodel_init_contact_params(m._m, ptr(m.params))
    try:
        with _Interrupt() as intr:
            hk = _Hooks(o.hooks, o.epochs, callback, intr, **run)
            res = _lib.CTrainResult()
            st = lib.imp_ctrain(m._m, ptr(m.params), ctypes.byref(gen if not m.cartesian else cart),
                                ctypes.byref(o), ctypes.byref(res))
            hk.finish(m)
            m.report.update(substepped_windows=res.substepped_windows, max_substeps=res.max_substeps,
                            skipped_batches=res.skipped_batches)
            if lib.imp_flat_cmodel_contacts(m._m) > 0:
                m.report.update(contact_substeps=lib.imp_ctrain_contact_substeps(m._m, ctypes.byref(o)),
                                contact_windows=res.contact_windows)
            check(st)
    finally:
        if not m.cartesian:
            lib.imp_ctraj_free(ctypes.byref(gen))
    m._opts, m._res = o, res
    if output is not None:
        m.save(output)
    return m


class ConstrainedModel:
    """A model of the constrained family (chnn, clnn, hnn, delan, node, resnet):
    ConstrainedModel(path) loads a checkpoint of `impulse train`.
    .params is the flat parameter vector (a numpy array the library reads in place)."""

    def __init__(self, path: str | os.PathLike | None = None, *, _new: bool = False):
        self._cs = _lib.opaque("imp_csystem")
        self._m = _lib.opaque("imp_cmodel")
        self.history: list[dict] = []
        self.stopped_early = False
        self._opts = self._res = None
        if not _new:
            p = _lib.dptr()
            check(lib.imp_cmodel_load(os.fsencode(_lib.fspath(path, "path")), self._m, ctypes.byref(p)))
            self._info()
            self.params[:] = np.ctypeslib.as_array(p, shape=(self.n_params,))
            _lib.libc_free(ctypes.cast(p, ctypes.c_void_p))

    def _info(self):
        c, d, n = ctypes.c_int(), ctypes.c_int(), ctypes.c_size_t()
        check(lib.imp_flat_cmodel_info(self._m, ctypes.byref(c), ctypes.byref(d), ctypes.byref(n)))
        self.cartesian, self.dim, self.n_params = bool(c.value), d.value, n.value
        self.params = np.zeros(self.n_params)

    def __repr__(self) -> str:
        coords = "Cartesian" if self.cartesian else "generalised"
        trained = ""
        if getattr(self, "report", None):
            r = self.report
            trained = f", {r['end']} after {r['epochs_done']} epochs, final loss {r['final_loss']:.4g}"
        return (f"ConstrainedModel({self.kind}, {coords} state of {self.dim}, {self.n_params} parameters"
                f"{trained})")

    @property
    def contacts(self) -> list[dict]:
        """The learned e and mu per contact (empty without contact), with the
        system's declared values (the truth of a simulated system)."""
        n = lib.imp_flat_cmodel_contacts(self._m)
        if n <= 0:
            return []
        e, mu, e0, mu0 = (np.zeros(n) for _ in range(4))
        check(lib.imp_flat_cmodel_contact_values(self._m, ptr(self.params), ptr(e), ptr(mu), ptr(e0), ptr(mu0)))
        out = []
        for c in range(n):
            bufs = [ctypes.create_string_buffer(80) for _ in range(4)]
            check(lib.imp_flat_cmodel_contact_names(self._m, c, *bufs, 80))
            name, body, plane, other = (b.value.decode() for b in bufs)
            row = {"contact": c, "name": name, "body": body}
            row.update({"other": other} if other else {"plane": plane})
            row.update({"e": float(e[c]), "mu": float(mu[c]), "e_declared": float(e0[c]), "mu_declared": float(mu0[c])})
            out.append(row)
        return out

    @property
    def kind(self) -> str:
        return lib.imp_cmodel_kind_name(ctypes.c_int.from_buffer(self._m, 0).value).decode()

    def save(self, path: str | os.PathLike) -> None:
        o = ctypes.byref(self._opts) if self._opts is not None else None
        r = ctypes.byref(self._res) if self._res is not None else None
        check(lib.imp_cmodel_save(os.fsencode(path), self._m, ptr(self.params), o, r))

    def rhs(self, y) -> np.ndarray:
        """The learned vector field f(y) for states y (dim,) or (n, dim) in the
        model's coordinates (Cartesian (x, v) for chnn/clnn)."""
        y = f64(y, "y")
        single = y.ndim == 1
        y = np.atleast_2d(y)
        if y.shape[1] != self.dim:
            raise Error(f"y: {y.shape[1]} numbers per state, the model expects {self.dim}")
        out = np.empty_like(y)
        w = lib.imp_cmodel_work_new(self._m, y.shape[0])
        if not w:
            raise Error("out of memory")
        try:
            check(lib.imp_cmodel_rhs(self._m, ptr(self.params), ptr(y), y.shape[0], ptr(out), w))
        finally:
            lib.imp_cmodel_work_free(w)
        return out[0] if single else out

    def rollout(self, x0, steps: int, dt: float, rtol: float | None = None,
                contact_rk4: bool = False) -> np.ndarray:
        """Roll out from Cartesian states x0 = (x, v), (2 N,) or a batch (n, 2 N),
        as `impulse rollout` and the evaluation do (DOPRI5, rtol 1e-7, atol
        rtol / 100 by default; a model with contacts integrates each step of dt
        so and applies the contact map after it, or with contact_rk4 takes one
        RK4 step per dt, training's integrator): `steps` steps of dt, returned
        in Cartesian coordinates, (steps + 1, 2 N) or (n, steps + 1, 2 N), row 0 = x0."""
        x = f64(x0, "x0")
        single = x.ndim == 1
        x = np.ascontiguousarray(np.atleast_2d(x))
        eo = _lib.CEvalOpts()
        lib.imp_ceval_opts_default(ctypes.byref(eo))
        if rtol is not None:
            eo.rtol, eo.atol = rtol, rtol * 1e-2
        eo.contact_rk4 = int(bool(contact_rk4))
        out = np.empty((x.shape[0], steps + 1, x.shape[1]))
        for i in range(x.shape[0]):
            check(lib.imp_cmodel_rollout(self._m, ptr(self.params), ptr(x[i]), steps + 1, dt, ctypes.byref(eo),
                                         ptr(out[i])))
        return out[0] if single else out

    def evaluate(self, data, n_test: int = 0, steps: int | None = None, rtol: float | None = None,
                 contact_rk4: bool = False) -> dict:
        """DOPRI5 rollouts from each test trajectory's first state, compared in
        Cartesian space: the metrics of `impulse eval --json` (same keys) plus
        per-trajectory arrays geo_rel_err, rel_err, energy_err, violation.
        With contact: contact_rk4 rolls out with training's one RK4 step per
        sample (the CLI's --contact-rk4); impact_energy, mean_violation_away."""
        d = _as_dataset(data)
        eo = _lib.CEvalOpts()
        lib.imp_ceval_opts_default(ctypes.byref(eo))
        eo.n_test = n_test
        if steps is not None:
            eo.steps = steps
        if rtol is not None:
            eo.rtol, eo.atol = rtol, rtol * 1e-2
        eo.contact_rk4 = int(bool(contact_rk4))
        z = d._z("data")
        test = _ctraj_of(z, d._dt())
        r = _lib.CEvalResult()
        check(lib.imp_ceval(self._m, ptr(self.params), ctypes.byref(test), ctypes.byref(eo), ctypes.byref(r)))
        try:
            n, T = r.n_test, r.T
            arr = lambda p, *shape: np.ctypeslib.as_array(p, shape=shape).copy()  # noqa: E731
            out = _lib.Result({"verb": "eval", "model": self.kind, "system": d.system, "trajectories": n,
                                "steps": T, "samples": T, "intervals": T - 1,
                                "geo_rel_err_time": "trapezoid over the intervals, divided by samples x dt",
                    "mean_geo_rel_err": r.mean_geo, "median_geo_rel_err": r.median_geo,
                    "mean_energy_err": r.mean_energy_err, "mean_violation": r.mean_violation,
                    "seconds": r.seconds, "geo_rel_err": arr(r.geo, n), "rel_err": arr(r.rel_err, n, T),
                    "energy_err": arr(r.energy_err, n, T), "violation": arr(r.violation, n, T)})
            out["sum_rel_err_5"], out["sum_rel_err"] = r.sum_rel_err_5, r.sum_rel_err
            contacts = self.contacts
            out["contact"] = "learned" if contacts else "none"
            if contacts:
                out["contacts"] = contacts
            if r.has_contact:
                out["contact_integrator"] = "rk4" if contact_rk4 else "dopri5"
                out["mean_violation_away"] = r.mean_violation_away
                out["violation_away_states"] = r.violation_away_states
                ie = {"window": 2}  # IMP_CEVAL_IMPACT_WINDOW
                for key, e in (("one_step", r.impact_one_step), ("rollout", r.impact_rollout)):
                    ie[key] = {f: getattr(e, f) for f in ("impacts", "truth_lost", "model_lost", "rel_error",
                                                          "mean_rel_error", "max_rel_error", "within_5pct")}
                ie["at_model_impacts"] = {"steps": r.map_steps, "truth_lost": r.map_truth_lost,
                                          "model_lost": r.map_model_lost, "kinetic": r.map_kinetic}
                # the impact map alone, from the truth's pre-impact states (eval --json's same keys)
                for key, e in (("impact_map", r.impact_map), ("impact_map_true_masses", r.impact_map_true)):
                    ie[key] = {f: getattr(e, f) for f in ("impacts", "truth_lost", "model_lost", "rel_error",
                                                          "mean_rel_error", "max_rel_error", "within_5pct")}
                ie["impact_map_elastic"], ie["impact_map_resting"] = r.map_elastic, r.map_resting
                ie["compliance"] = {"tt_over_nn_model": r.compliance_tt_model,
                                    "tt_over_nn_truth": r.compliance_tt_truth,
                                    "nt_over_nn_model": r.compliance_nt_model,
                                    "nt_over_nn_truth": r.compliance_nt_truth,
                                    "rel_error": r.compliance_rel_error}
                out["impact_energy"] = ie
            return out
        finally:
            lib.imp_ceval_result_free(ctypes.byref(r))
