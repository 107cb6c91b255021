"""The contact family (CD-Lagrange networks and their baselines, Hochlehnert
et al. 2021): training and the Model class.
"""
from __future__ import annotations

import ctypes
import json
import os

import numpy as np

from . import _lib
from ._lib import Error, check, f64, lib, ptr
from ._run import _Hooks, _Interrupt
from .data import Dataset, _load_trajset


CONTACT_MODELS = ("cdl", "vin", "resnet", "resnet-contact")


def _precision(name: str, v: str) -> int:
    if v not in ("single", "double"):
        raise Error(f"{name}: '{v}' is not single or double")
    return int(v == "single")


def _train_contact(model, data, output, epochs, seed, lr, callback, run, settings="code", horizon=None, batch=None,
                   l2=None, activation=None, hidden=None, layers=None, touch=True, projection=False,
                   damping=False, learn_mass=False, contact_precision="single", potential_precision="single",
                   restitution=None, restitution_init=None, friction=False, friction_init="data",
                   impact_law="auto", contact_labels="auto", lr_schedule="auto", contact_tol=None,
                   impact_timing="step", law_refit=False, law_refit_e=False, law_refit_all=False,
                   law_refit_grid=None, law_refit_mu_max=None, law_refit_min_steps=None, law_identify=False):
    kind = ctypes.c_int()
    check(lib.imp_model_kind_from_name(model.encode(), ctypes.byref(kind)))
    for name, v, known in (("activation", activation, (None, "tanh", "softplus", "relu")),
                           ("contact_labels", contact_labels, ("auto", "as-given", "onset", "geometry")),
                           ("lr_schedule", lr_schedule, ("auto", "constant", "cosine"))):
        if v not in known:
            raise Error(_lib.unknown(name, v, [k for k in known if k]))
    if contact_labels == "geometry" and not touch:
        raise Error("contact_labels='geometry' derives the labels to train with: not with touch=False")
    if settings not in ("code", "paper"):
        raise Error(f"settings: '{settings}' is not paper or code")
    code = int(settings == "code")
    cfg = _lib.CdlConfig()
    lib.imp_cdl_config_default(ctypes.byref(cfg), kind.value)
    to = _lib.TrainOpts()
    lib.imp_train_opts_default(ctypes.byref(to), code)
    to.epochs = 2000
    act = ctypes.c_int()
    check(lib.imp_activation_from_name(b"softplus" if code else b"tanh", ctypes.byref(act)))
    cfg.act = act.value
    if activation is not None:
        check(lib.imp_activation_from_name(activation.encode(), ctypes.byref(act)))
        cfg.act = act.value
    for field, v in (("epochs", epochs), ("horizon", horizon), ("batch", batch), ("lr", lr), ("l2", l2)):
        if v is not None:
            setattr(to, field, v)
    if hidden is not None:
        cfg.hidden = hidden
    if layers is not None:
        cfg.hidden_layers = layers
    cfg.touch, cfg.projection, cfg.learn_damping, cfg.learn_mass = int(touch), int(projection), int(damping), \
        int(learn_mass)
    to.seed = seed
    to.single_contact = _precision("contact_precision", contact_precision)
    to.single_potential = _precision("potential_precision", potential_precision)
    if model == "resnet-contact" and not touch:
        raise Error("resnet-contact is fed the contact signal: it needs touch=True")
    if restitution not in (None, "learn", "fixed"):
        raise Error(f"restitution: '{restitution}' is not learn or fixed")
    if model != "cdl" and (restitution == "learn" or restitution_init is not None or friction):
        raise Error("restitution='learn', restitution_init and friction apply to cdl only")
    cfg.learn_restitution = int(model == "cdl" and restitution != "fixed")
    cfg.friction = int(bool(friction))
    if impact_law not in ("auto", "paper", "newton"):
        raise Error(f"impact_law: '{impact_law}' is not auto, paper or newton")
    if model != "cdl" and impact_law != "auto":
        raise Error("impact_law applies to cdl only")
    cfg.impact_law = int(impact_law == "newton")
    if impact_timing not in ("step", "event"):
        raise Error(f"impact_timing: '{impact_timing}' is not step or event")
    if model != "cdl" and impact_timing != "step":
        raise Error("impact_timing applies to cdl only")
    if impact_timing == "event" and impact_law != "auto":
        raise Error("impact_law applies to impact_timing='step' (event applies Newton's law at the contact time)")
    cfg.impact_timing = int(impact_timing == "event")
    refit_given = [k for k, v in (("law_refit_e", law_refit_e), ("law_refit_all", law_refit_all),
                                  ("law_refit_grid", law_refit_grid),
                                  ("law_refit_mu_max", law_refit_mu_max),
                                  ("law_refit_min_steps", law_refit_min_steps)) if v is not None and v is not False]
    if law_identify and law_refit:
        raise Error("law_refit and law_identify: give one (the identification searches every pair)")
    if law_identify and (law_refit_e or law_refit_all):
        raise Error("law_refit_all, law_refit_e: law_identify searches every pair's e and mu already")
    if refit_given and not law_refit and not law_identify:
        raise Error(f"{refit_given[0]}: applies to law_refit=True or law_identify=True (neither given)")
    if (law_refit or law_identify) and model != "cdl":
        raise Error(f"{'law_identify' if law_identify else 'law_refit'} applies to cdl only (it refits the learned "
                    "e and mu per contact pair)")
    to.law_refit = int(bool(law_refit or law_identify))
    if law_identify:  # what, all, horizon, robust; grid, mu_max, min_steps as given below
        lib.imp_law_refit_opts_identify(ctypes.byref(to.refit))
    report = _lib.LawRefitReport()
    to.refit_report = ctypes.pointer(report)
    if law_refit_e:
        to.refit.what |= _lib.LAW_REFIT_E
    if law_refit_all:
        to.refit.all = 1
    for field, v in (("grid", law_refit_grid), ("mu_max", law_refit_mu_max), ("min_steps", law_refit_min_steps)):
        if v is not None:  # the library checks the value (law_refit.FIELD in its message)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or (field != "mu_max" and v != int(v)):
                raise Error(f"law_refit_{field}: {v!r} is not a number" if field == "mu_max"
                            else f"law_refit_{field}: {v!r} is not an integer")
            setattr(to.refit, field, v if field == "mu_max" else int(v))
    if contact_tol is not None:  # None: 3 x the data's noise (impulse train --contact-tol)
        if model != "cdl" or not contact_tol >= 0:
            raise Error(f"contact_tol: {contact_tol!r}: a gap >= 0, for cdl only")
        cfg.contact_tol = float(contact_tol)
    if not cfg.learn_restitution and restitution_init is not None:
        raise Error("restitution_init: e is fixed (restitution='fixed')")
    e_from, e_value = 0, float("nan")  # imp_law_init: DEFAULT, DATA, META, VALUE
    if restitution_init in ("data", "meta"):
        e_from = 1 if restitution_init == "data" else 2
    elif restitution_init is not None:
        e_from, e_value = 3, float(restitution_init)
    mu_from, mu_value = (1, float("nan")) if friction_init == "data" else (3, float(friction_init))
    schedule = ctypes.c_int()
    check(lib.imp_lr_schedule_from_name(str(lr_schedule).encode(), ctypes.byref(schedule)))
    label_mode = ctypes.c_int()
    check(lib.imp_label_mode_from_name(contact_labels.encode(), ctypes.byref(label_mode)))
    ts = _load_trajset(data)
    h = ctypes.c_void_p()
    try:
        if not ts.has_contact and cfg.touch and contact_labels != "geometry":  # geometry: derived below
            if model == "resnet-contact":
                raise Error("the data have no contact labels: resnet-contact needs them")
            cfg.touch = 0  # as the CLI: no labels, no touch feedback
        if model == "cdl" and impact_law == "auto":  # from the data, before the labels are handled
            cfg.impact_law = lib.imp_cdl_default_impact_law(ctypes.byref(ts))
        # auto resolved as the CLI does (the library's rule, on the data before the labels are handled)
        to.lr_schedule = lib.imp_train_default_lr_schedule(ctypes.byref(ts)) if schedule.value == 0 else schedule.value
        if cfg.touch:
            check(lib.imp_contact_labels_apply(ctypes.byref(ts), label_mode.value, None))
        check(lib.imp_model_create(ctypes.byref(h), ctypes.byref(cfg), ctypes.byref(ts.geom), ts.dt, seed))
        m = Model(_handle=h)
        check(lib.imp_model_init_contact_law(h, ctypes.byref(ts), e_from, e_value, mu_from, mu_value, None))
        with _Interrupt() as intr:
            hk = _Hooks(to.hooks, to.epochs, callback, intr, **run)
            final = _lib.LossParts()
            st = lib.imp_model_train(h, ctypes.byref(ts), ctypes.byref(to), ctypes.byref(final))
            hk.finish(m)
            check(st)
        if to.law_refit and m.report.get("end") == "finished":
            m.report["law_refit"] = {
                "mode": lib.imp_law_refit_mode_name(ctypes.byref(to.refit)).decode(),
                "horizon": to.refit.horizon if to.refit.horizon > 0 else to.horizon, "robust": bool(to.refit.robust),
                "loss_before": report.loss_before, "loss_after": report.loss_after, "seconds": report.seconds,
                "pairs": [{"pair": p, "steps": q.steps, "windows": q.windows, "searched": bool(q.searched),
                           "plateau": None if q.plateau < 0 else bool(q.plateau),
                           "mu_grad": None if q.mu_grad != q.mu_grad else q.mu_grad,
                           "e_grad": None if q.e_grad != q.e_grad else q.e_grad,
                           "e_before": q.e_before, "e_after": q.e_after,
                           "mu_before": None if q.mu_before != q.mu_before else q.mu_before,
                           "mu_after": None if q.mu_after != q.mu_after else q.mu_after}
                          for p, q in enumerate(report.pairs[:report.n_pairs])]}
        if output is not None:
            extra = {"data": data if not isinstance(data, Dataset) else "<memory>", "epochs": to.epochs,
                     "horizon": to.horizon, "batch": to.batch, "lr": to.lr, "l2": to.l2, "seed": to.seed,
                     **({"lr_schedule": "cosine"} if to.lr_schedule == 2 else {}),
                     "contact_precision": contact_precision, "potential_precision": potential_precision,
                     "end": m.report["end"], "epochs_done": m.report["epochs_done"],
                     "best_epoch": m.report["best_epoch"], "final_loss": m.report["final_loss"]}
            m.save(output, extra)
        return m
    finally:
        lib.imp_trajset_free(ctypes.byref(ts))


class Model:
    """A model of the contact family (cdl, vin, resnet, resnet-contact):
    Model(path) loads a checkpoint of `impulse train`."""

    def __init__(self, path: str | os.PathLike | None = None, *, _handle=None):
        self._h = ctypes.c_void_p()
        self.history: list[dict] = []
        self.stopped_early = False
        if _handle is not None:
            self._h = _handle
        else:
            check(lib.imp_model_load(ctypes.byref(self._h), os.fsencode(_lib.fspath(path, "path"))))
        D, K = ctypes.c_int(), ctypes.c_int()
        check(lib.imp_model_sizes(self._h, ctypes.byref(D), ctypes.byref(K)))
        self.D, self.K = D.value, K.value

    def __repr__(self) -> str:
        if not getattr(self, "_h", None):
            return "Model(closed)"
        trained = ""
        if getattr(self, "report", None):
            r = self.report
            trained = f", {r['end']} after {r['epochs_done']} epochs, final loss {r['final_loss']:.4g}"
        return f"Model({self.kind}, {self.D} coordinates, {self.K} contacts{trained})"

    @property
    def kind(self) -> str:
        """cdl, vin, resnet or resnet-contact."""
        return lib.imp_model_kind_name(ctypes.c_int.from_address(self._h.value).value).decode()

    def close(self) -> None:
        if getattr(self, "_h", None):
            lib.imp_model_free(self._h)
            self._h = ctypes.c_void_p()

    __del__ = close

    def save(self, path: str | os.PathLike, extra_meta: dict | None = None) -> None:
        """Write the checkpoint (the command line's format)."""
        check(lib.imp_model_save(self._h, os.fsencode(path),
                                 json.dumps(extra_meta).encode() if extra_meta else None))

    def rollout(self, x0, steps: int | None = None, gates=None, single_contact: bool = False,
                single_potential: bool = False):
        """Predict from initial states x0 = (q, qdot): one state (2D,) or a batch (n, 2D).

        steps: samples to produce (row 0 = x0); default 100. gates (steps, K)
        or (n, steps, K): the observed contact signal gates the impulses
        instead of the contact network. The default runs both networks in
        double. single_contact: the contact network in single precision, as
        training runs it (about as fast as the double default; the states
        differ only where a contact probability is within float rounding of
        0.5). single_potential: the potential's force in single precision, as
        training runs it (faster; the states drift from the double rollout's
        by accumulated float rounding). Returns (states, contact) with shapes
        (steps, 2D), (steps, K), or (n, steps, 2D), (n, steps, K)."""
        x = f64(x0, "x0")
        single = x.ndim == 1
        x = np.atleast_2d(x)
        if x.shape[1] != 2 * self.D:
            raise Error(f"x0: {x.shape[1]} numbers per state, the model expects {2 * self.D}")
        steps = 100 if steps is None else steps
        n = x.shape[0]
        states, contact = np.empty((n, steps, 2 * self.D)), np.empty((n, steps, self.K))
        g = None
        if gates is not None:
            g = f64(gates, "gates")
            g = g.reshape(1, *g.shape) if g.ndim == 2 else g
            if g.shape != (n, steps, self.K):
                raise Error(f"gates: shape {g.shape}, want ({n}, {steps}, {self.K})")
        for i in range(n):
            check(lib.imp_model_rollout_single(self._h, ptr(x[i]), steps, ptr(g[i]) if g is not None else None,
                                               int(bool(single_contact)) | 2 * int(bool(single_potential)),
                                               ptr(states[i]), ptr(contact[i])))
        return (states[0], contact[0]) if single else (states, contact)

    def _projection_on(self) -> bool:
        """cfg.projection of the model (imp_model's first field is its config)."""
        return bool(_lib.CdlConfig.from_address(self._h.value).projection)

    def contact_law(self) -> dict:
        """The contact law of a cdl model per contact pair: {'restitution': [...],
        'restitution_source': 'learned' | 'fixed', 'friction': [...] (if learned)};
        empty without contact pairs."""
        n, learned, fric = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        e, mu = np.empty(_lib.MAX_CONTACTS), np.empty(_lib.MAX_CONTACTS)
        check(lib.imp_flat_model_contact_law(self._h, ctypes.byref(n), ctypes.byref(learned), ctypes.byref(fric),
                                             ptr(e), ptr(mu)))
        if n.value == 0:
            return {}
        out = {"restitution": e[:n.value].tolist(), "restitution_source": "learned" if learned.value else "fixed"}
        if fric.value:
            out["friction"] = mu[:n.value].tolist()
        return out

    def potential_grad(self, q) -> np.ndarray:
        """dU/dq of a cdl/vin model at configurations q (n, D)."""
        q = f64(np.atleast_2d(q), "q", (-1, self.D))
        out = np.empty_like(q)
        check(lib.imp_model_potential_grad(self._h, ptr(q), q.shape[0], ptr(out)))
        return out

    def evaluate(self, data, touch_rollout: bool = False, predictions: bool = False,
                 projection: bool = False) -> dict:
        """Roll out from each trajectory's noise-free first state and compare
        with the truth: the metrics of `impulse eval --json` (same keys). With
        predictions=True also 'states', 'contact', 'energy' arrays.
        projection=True: impacts projected onto the walls in the rollouts, as
        `impulse eval --projection` (cdl with a contact network); the model
        keeps it for later rollouts."""
        if projection:
            check(lib.imp_model_set_projection(self._h, 1))
        ts = _load_trajset(data)
        try:
            N = ts.n_traj * ts.n_steps
            states, contact, energy = np.empty((N, 2 * self.D)), np.empty((N, self.K)), np.empty(N)
            r = _lib.EvalResult()
            check(lib.imp_model_evaluate(self._h, ctypes.byref(ts), int(touch_rollout), ctypes.byref(r),
                                         ptr(states), ptr(contact), ptr(energy)))
            e_err, e_drift = ctypes.c_double(float("nan")), ctypes.c_double(float("nan"))
            if np.isfinite(r.energy_drift):  # as impulse eval: the error against the data's energy curve
                check(lib.imp_eval_energy_error(ctypes.byref(ts), ptr(energy), ctypes.byref(e_err),
                                                ctypes.byref(e_drift)))
            out = _lib.Result({"verb": "eval", "model": self.kind, "system": ts.system.decode(), "rmse": r.rmse,
                   "rmse_code": r.rmse_code, "energy_drift": r.energy_drift, "energy_drift_data": e_drift.value,
                   "energy_error": e_err.value,
                   "contact_timing_s": r.contact_timing, "contacts_true": r.contacts_true,
                   "contacts_predicted": r.contacts_pred, "contacts_missed": r.contacts_missed,
                   "trajectories": r.n_traj, "steps": r.n_steps, "touch_rollout": int(touch_rollout),
                   "projection": int(self._projection_on())})
            law = self.contact_law() if self.kind == "cdl" else None
            if law is not None:
                out.update(law)
            out["pairs"] = _pair_report(ts.geom, law, states)
            if predictions:
                out["states"] = states.reshape(ts.n_traj, ts.n_steps, -1)
                out["contact"] = contact.reshape(ts.n_traj, ts.n_steps, -1)
                out["energy"] = energy.reshape(ts.n_traj, ts.n_steps)
            return out
        finally:
            lib.imp_trajset_free(ctypes.byref(ts))


_PAIR_SPHERE = 1  # imp_contact_pair.kind: IMP_PAIR_SPHERE (contact_systems.h)


def _pair_report(g, law: dict | None, states: np.ndarray) -> list:
    """`impulse eval --json`'s "pairs": per contact pair its bodies, its kind
    and geometry, e (and mu) of a CD-Lagrange model (law; None for the
    ResNets), when CD-Lagrange gives it an impulse, and the lowest gap the
    rollouts (states (n, 2D), positions first) reached (imp_contact_min_gaps)."""
    count = [0] * g.n_bodies
    for p in range(g.n_pairs):
        count[g.pairs[p].body_j] += 1
        if g.pairs[p].body_i >= 0:
            count[g.pairs[p].body_i] += 1
    states = np.ascontiguousarray(states, dtype=np.float64)
    min_gap = np.empty(max(g.n_pairs, 1))
    lib.imp_contact_min_gaps(ctypes.byref(g), ptr(states), states.shape[0], states.shape[1], ptr(min_gap))
    rows = []
    for p in range(g.n_pairs):
        c, d = g.pairs[p], g.dim
        row = {"pair": p, "body_i": None if c.body_i < 0 else c.body_i, "body_j": c.body_j}
        if c.kind == _PAIR_SPHERE:
            row.update({"kind": "sphere", "radii_sum": g.radius[c.body_i] + g.radius[c.body_j]})
        else:
            row.update({"kind": "plane", "normal": [float(v) for v in c.normal[:d]], "offset": c.offset})
        shared = count[c.body_j] > 1 or (c.body_i >= 0 and count[c.body_i] > 1)
        if law is not None:
            row["restitution"] = law["restitution"][p]
        if law is not None and "friction" in law and any(c.tangent[:d]):
            row["friction"] = law["friction"][p]
        row["impulse_when"] = "gated and in reach" if shared else "gated"
        row["min_gap"] = float(min_gap[p])
        rows.append(row)
    return rows
