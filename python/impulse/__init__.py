"""impulse: learn the dynamics of mechanical systems with contact and
constraints, and model planar impacts (Python interface to libimpulse).

Three strands, all on numpy arrays:

    import impulse                       # import before numpy (sets up OpenBLAS)
    ball = impulse.simulate("bouncing-ball", noise=0.05, restitution=0.8, steps=200)
    m = impulse.train("cdl", ball, epochs=100, callback=lambda e, loss: print(e, loss["total"]))
    m.evaluate(ball)                     # {'rmse': ..., 'rmse_code': ..., 'energy_drift': ...}
    states, contact = m.rollout(ball.initial_states())

    pend = impulse.simulate("pendulum-chain:2", trajectories=50, seed=0)
    c = impulse.train("chnn", pend, epochs=20)
    c.evaluate(impulse.simulate("pendulum-chain:2", trajectories=10, seed=2, rollout_start=4))

    P = impulse.impact_predict("mirtich", W, u, mu=0.2, eps=0.5)   # W (n, 2, 2), u (n, 2)

Datasets (`Dataset`) hold named numpy arrays plus a `meta` dict and read and
write the same .npz files as the `impulse` command. Models are saved and
loaded as the same checkpoints. For the same seed and options, results are
bit-identical to the command line's.

The library is found through $IMPULSE_LIBRARY, then the copy installed with
this package, then a build folder of the source tree, then the system's
loader path. Errors raise impulse.Error with the library's one-line message.
"""
from __future__ import annotations

import ctypes
import json
import os
import signal
import tempfile
import threading
from typing import Callable, Mapping, Sequence

from . import _lib
from ._lib import Error, check, f64, lib, libc_free, ptr

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["Error", "Dataset", "Model", "ConstrainedModel", "simulate", "train", "load_model", "library_path",
           "blas_core", "CONTACT_SYSTEMS", "CONTACT_MODELS", "CONSTRAINED_MODELS", "IMPACT_LAWS",
           "impact_predict", "impact_irb", "impact_identify", "impact_table1", "GaussianProcess", "version",
           "REPRODUCTIONS", "sweep_plan", "sweep_run", "sweep_report", "reproduce"]
__version__ = "0.1.0"
version = __version__

CONTACT_SYSTEMS = ("pendulum", "bouncing-ball", "newtons-cradle", "compliant-ball", "compliant-cradle",
                   "bouncing-disk")
CONTACT_MODELS = ("cdl", "vin", "resnet", "resnet-contact")
CONSTRAINED_MODELS = ("chnn", "clnn", "hnn", "delan", "node")
IMPACT_LAWS = ("drumshell", "ap-poisson", "ap-newton", "mirtich", "wang-mason", "whittaker")
library_path: str = _lib.path


def blas_core() -> str:
    """The OpenBLAS kernel family in use (e.g. 'SkylakeX'; 'Prescott' means SSE3 only)."""
    return lib.imp_blas_corename().decode()


# --------------------------------------------------------------------------- datasets

class Dataset:
    """Trajectories in memory: named float64 arrays and a `meta` dict.

    Contact systems (pendulum, bouncing-ball, newtons-cradle): q, qdot
    (trajectories, steps, bodies*dim; observed, possibly noisy), q_clean,
    qdot_clean (truth), contact (trajectories, steps, bodies), and the
    contact geometry (masses, contact_pairs, contact_normals, contact_offsets).
    Constrained systems: z (trajectories, states, 2, points, d) = (x, v),
    t (states), energy (trajectories, states).

    d["q"], d.arrays, d.meta; Dataset.load(path) / d.save(path) use the
    command line's .npz layout ('-' is not accepted: use a path).
    """

    def __init__(self, arrays: Mapping[str, np.ndarray], meta: Mapping | None = None):
        self.arrays = {k: np.asarray(v) for k, v in arrays.items() if k != "meta"}
        self.meta = dict(meta or {})
        if "z" in self.arrays or "x" in self.arrays:
            self.kind = "constrained"
        elif "q" in self.arrays:
            self.kind = "contact"
        else:
            raise Error("dataset: neither q (contact systems) nor z or x (constrained systems)")
        if "system" not in self.meta:
            raise Error("dataset: meta has no 'system'")

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Dataset":
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files if k != "meta"}
            meta = json.loads(str(z["meta"])) if "meta" in z.files else {}
        return cls(arrays, meta)

    def save(self, path: str | os.PathLike) -> None:
        """Write the .npz the command line reads (atomically: temporary file, then rename)."""
        path = os.fspath(path)
        tmp = f"{path}.tmp{os.getpid()}.npz"
        np.savez(tmp, meta=np.array(json.dumps(self.meta)), **self.arrays)
        os.replace(tmp, path)

    def __getitem__(self, key: str) -> np.ndarray:
        return self.arrays[key]

    def __contains__(self, key: str) -> bool:
        return key in self.arrays

    @property
    def system(self) -> str:
        return self.meta["system"]

    @property
    def n_traj(self) -> int:
        return int(self.arrays["q" if self.kind == "contact" else "z"].shape[0])

    def initial_states(self, clean: bool = True) -> np.ndarray:
        """First state of every trajectory: (trajectories, 2D) = (q, qdot) for
        contact systems (noise-free if clean), (trajectories, 2 N) = (x, v) for
        constrained ones."""
        if self.kind == "contact":
            q = self.arrays["q_clean" if clean and "q_clean" in self.arrays else "q"]
            v = self.arrays["qdot_clean" if clean and "qdot_clean" in self.arrays else "qdot"]
            return np.ascontiguousarray(np.concatenate([q[:, 0], v[:, 0]], axis=1))
        z = self._z()
        return np.ascontiguousarray(z[:, 0])

    def _z(self) -> np.ndarray:
        """Constrained data as (trajectories, states, 2 N), rows (x, v)."""
        if "z" in self.arrays:
            z = self.arrays["z"]
            return np.ascontiguousarray(z.reshape(z.shape[0], z.shape[1], -1), dtype=np.float64)
        x, v = self.arrays["x"], self.arrays["v"]
        return np.ascontiguousarray(np.concatenate([x.reshape(*x.shape[:2], -1), v.reshape(*v.shape[:2], -1)], 2),
                                    dtype=np.float64)

    def _dt(self) -> float:
        if "t" in self.arrays and self.arrays["t"].shape[0] > 1:
            return float(self.arrays["t"][1] - self.arrays["t"][0])
        return float(self.meta["dt"])

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}{tuple(v.shape)}" for k, v in self.arrays.items())
        return f"Dataset({self.kind}, system={self.meta.get('system')!r}, {shapes})"


class _TempFile:
    """A dataset written to a temporary .npz for the library's validating loader."""

    def __init__(self, data):
        self.owned = isinstance(data, Dataset)
        if self.owned:
            fd, self.path = tempfile.mkstemp(suffix=".npz", prefix="impulse-")
            os.close(fd)
            data.save(self.path)
        else:
            self.path = os.fspath(data)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        if self.owned:
            os.unlink(self.path)


def _as_dataset(data) -> Dataset:
    return data if isinstance(data, Dataset) else Dataset.load(data)


def _load_trajset(data) -> _lib.Trajset:
    ts = _lib.Trajset()
    with _TempFile(data) as p:
        check(lib.imp_trajset_load(ctypes.byref(ts), os.fsencode(p)))
    return ts


def simulate(system: str | None = None, *, trajectories: int = 1, steps: int | None = None,
             dt: float | None = None, noise: float = 0.0, seed: int = 0, restitution: float | None = None,
             gravity: float | None = None, length: float | None = None, q0: float | None = None,
             v0: float | None = None, randomize: bool | None = None, friction: float | None = None,
             spin: float | None = None, stiffness: float | None = None, system_file: str | None = None,
             spread: float = 0.0, rollout_start: int = 0, rtol: float = 1e-10, atol: float = 1e-12) -> Dataset:
    """Simulate a system into a Dataset (as `impulse simulate`, same seed, same numbers).

    system: a contact system (pendulum, bouncing-ball, newtons-cradle,
        compliant-ball, compliant-cradle, bouncing-disk) or a constrained benchmark (pendulum-chain:N, coupled-pendulums:N,
        magnet-pendulum, gyroscope, rotor); or pass system_file (a system
        description, docs/chnn-systems.md) instead.
    trajectories, steps, dt, noise (Gaussian std on the observed states), seed.
    Contact systems: restitution, gravity, length (pendulum), q0, v0 (first
        trajectory's initial state), randomize (later trajectories random),
        friction and spin (bouncing-disk), stiffness (compliant systems).
        `steps` counts samples; defaults are the paper's experiments.
    Constrained systems: spread (system files: random starts, the file's
        state plus spread N(0, 1), projected onto the constraints; 0, the
        default, simulates the file's state itself: one trajectory), rollout_start (L > 0: start at a random (L+1)-state window of a
        reference trajectory, as the reference's test sets), rtol, atol.
        `steps` counts steps (states = steps + 1).
    """
    o = _lib.SimOpts()
    if system_file is None and system is not None and lib.imp_sim_defaults(system.encode(), ctypes.byref(o)) == 0:
        o.n_traj = trajectories
        for k, v in (("n_steps", steps), ("dt", dt), ("restitution", restitution), ("gravity", gravity),
                     ("length", length), ("q0", q0), ("v0", v0), ("friction", friction), ("spin", spin),
                     ("stiffness", stiffness)):
            if v is not None:
                setattr(o, k, v)
        if randomize is not None:
            o.randomize = int(randomize)
        o.noise, o.seed = noise, seed
        ts = _lib.Trajset()
        check(lib.imp_simulate(system.encode(), ctypes.byref(o), ctypes.byref(ts)))
        fd, p = tempfile.mkstemp(suffix=".npz", prefix="impulse-")
        os.close(fd)
        try:
            check(lib.imp_trajset_save(ctypes.byref(ts), os.fsencode(p)))
            return Dataset.load(p)
        finally:
            lib.imp_trajset_free(ctypes.byref(ts))
            os.unlink(p)
    contact_err = lib.imp_last_error().decode("utf-8", "replace") if system_file is None else ""
    lib.imp_clear_error()
    if system is None and system_file is None:
        raise Error("simulate: give a system name or system_file")
    if system_file is not None and trajectories > 1 and not spread > 0:
        raise Error(f"simulate: trajectories={trajectories}: without spread every trajectory starts at the state "
                    f"written in {system_file} (give spread > 0 for random starts around it)")
    sysb = system.encode() if system_file is None else None
    filb = os.fsencode(system_file) if system_file is not None else None
    ints = [ctypes.c_int() for _ in range(4)]
    dt_out, name = ctypes.c_double(), ctypes.create_string_buffer(64)
    st = -1 if steps is None else steps
    args = (sysb, filb, trajectories, st, dt or 0.0, seed, spread, noise, rtol, atol, rollout_start)
    try:
        check(lib.imp_flat_chnn_simulate(*args, None, None, None, None, *[ctypes.byref(i) for i in ints],
                                         ctypes.byref(dt_out), name))
    except Error as e:
        raise Error(f"{contact_err}; {e}" if contact_err else str(e)) from None
    n_points, d, n_gen, T = (i.value for i in ints)
    traj = np.empty((trajectories, T, 2, n_points, d))
    energy = np.empty((trajectories, T))
    offsets = np.zeros(trajectories, dtype=np.int32)
    q = np.empty((trajectories, T, 2, n_gen)) if n_gen > 0 else None
    check(lib.imp_flat_chnn_simulate(*args, ptr(traj), ptr(energy), ptr(q),
                                     offsets.ctypes.data_as(ctypes.POINTER(ctypes.c_int)),
                                     *[ctypes.byref(i) for i in ints], ctypes.byref(dt_out), name))
    h = dt_out.value
    meta = {"format": "impulse-chnn-trajectories", "tool": "impulse-python", "system": name.value.decode(), "dt": h, "steps": T - 1, "trajectories": trajectories, "seed": seed,
            "noise": noise, "spread": spread, "rtol": rtol, "atol": atol, "version": __version__}
    if system_file:
        meta["system_file"] = os.fspath(system_file)
    arrays = {"t": np.arange(T) * h, "z": traj, "energy": energy}
    if q is not None:
        arrays["q"] = q
    if rollout_start > 0:
        meta["rollout_start"] = rollout_start
        arrays["rollout_offset"] = offsets.astype(np.int64)
    return Dataset(arrays, meta)


# --------------------------------------------------------------------------- training

class _Interrupt:
    """SIGINT during training sets a flag that the per-epoch callback reads."""

    def __init__(self):
        self.hit = False
        self.old = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            def handler(signum, frame):
                self.hit = True
            self.old = signal.signal(signal.SIGINT, handler)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)


EpochCallback = Callable[[int, dict], "bool | None"]
STOP_NAMES = ("finished", "stopped", "diverged", "failed")
TRAIN_FAR_ABOVE_BEST = 10.0  # include/impulse/train.h IMP_TRAIN_FAR_ABOVE_BEST


class _Hooks:
    """imp_train_hooks for one run: the Python callback (and Ctrl-C) through
    on_epoch, the loss history, the report, the JSON-lines log, resumable state."""

    def __init__(self, hooks, epochs, callback, intr, log=None, resume=None, state=None, checkpoint_every=0,
                 checkpoint_seconds=0.0, diverge_factor=None, keep="best"):
        self.callback, self.intr, self.history = callback, intr, []
        if log and resume:  # the log's lines of epochs after the state's would repeat
            epoch = ctypes.c_int(0)
            if lib.imp_train_state_epoch(os.fsencode(resume), ctypes.byref(epoch)) == 0:
                check(lib.imp_train_log_truncate(os.fsencode(log), epoch.value))
        self.log = open(log, "a" if resume else "w") if log else None
        self.report = _lib.TrainReport()
        self.losses = np.full(max(epochs, 1), np.nan)
        self.fn = _lib.EPOCH_FN(self._on_epoch)
        self._keep = [os.fsencode(p) if p else None for p in (state, resume)]
        hooks.on_epoch, hooks.user_data = self.fn, None
        hooks.loss_history, hooks.report = ptr(self.losses), ctypes.pointer(self.report)
        if diverge_factor is not None:
            hooks.diverge_factor = diverge_factor
        if keep not in ("best", "last"):
            raise Error(f"keep: '{keep}' is neither 'best' nor 'last'")
        hooks.keep = 1 if keep == "last" else 0
        hooks.state_path, hooks.resume_path = self._keep
        hooks.state_every, hooks.state_seconds = checkpoint_every, checkpoint_seconds
        if (checkpoint_every or checkpoint_seconds) and not state:
            raise Error("checkpoint_every/checkpoint_seconds: give state=PATH for the training state")

    def _on_epoch(self, info_p, user):
        info = info_p[0]
        loss = {"total": info.loss}
        for i in range(1, info.n_parts):
            loss[info.parts[i].name.decode()] = info.parts[i].value
        entry = dict(epoch=info.epoch, **loss, lr=info.lr, seconds=info.seconds, best_epoch=info.best_epoch)
        self.history.append(entry)
        if self.log:
            self.log.write(json.dumps({"epoch": info.epoch, "epochs": info.epochs, "loss": info.loss,
                                       **{k: v for k, v in loss.items() if k != "total"}, "lr": info.lr,
                                       "seconds": info.seconds, "best_epoch": info.best_epoch}) + "\n")
            self.log.flush()
        stop = False
        if self.callback is not None:
            try:
                stop = bool(self.callback(info.epoch, dict(loss, lr=info.lr, seconds=info.seconds)))
            except BaseException as e:  # never unwind through C: report it and stop
                print(f"impulse: the training callback raised {e!r}; stopping")
                stop = True
        return 1 if stop or self.intr.hit else 0

    def finish(self, model):
        if self.log:
            self.log.close()
        r = self.report
        model.history = self.history
        model.loss_history = self.losses[:r.epochs_done].copy() if r.epochs_done > 0 else np.empty(0)
        model.report = {"end": STOP_NAMES[r.stop] if 0 <= r.stop < 4 else str(r.stop), "epochs_done": r.epochs_done,
                        "resumed_at": r.resumed_at, "best_epoch": r.best_epoch, "best_loss": r.best_loss,
                        "final_loss": r.final_loss, "seconds": r.seconds, "kept_epoch": r.kept_epoch,
                        "far_above_best": bool(r.far_above_best)}
        model.stopped_early = r.stop == 1
        model.interrupted = self.intr.hit


def train(model: str, data, *, output: str | os.PathLike | None = None, epochs: int | None = None,
          seed: int = 0, lr: float | None = None, callback: EpochCallback | None = None, **options):
    """Train a model on a Dataset (or a .npz path), as `impulse train`.

    model: cdl | vin | resnet | resnet-contact (contact systems) or
        chnn | clnn | hnn | delan | node (constrained systems).
    output: also write the checkpoint there (the command line's format).
    callback(epoch, loss) is called after every epoch with loss a dict of
        floats: total, its terms (contact family: state, contact, l2),
        lr and seconds; return True to stop training after
        this epoch. Ctrl-C stops training at the end of the current epoch. A
        run returns its best model (lowest epoch loss), whether it finished,
        was stopped or diverged; keep='last' returns a finished run's last
        epoch instead. report['kept_epoch'] says which epoch was returned, and
        report['far_above_best'] is True when a finished run's final loss is
        more than 10 times its best (impulse.TRAIN_FAR_ABOVE_BEST; the CLI's
        exit status 3).
    Run options (both families, as the CLI's): log (path of a JSON-lines
        per-epoch log, the CLI's format; `impulse plot-log` draws it), state
        (path of a resumable training state, written every checkpoint_every
        epochs and/or checkpoint_seconds seconds and at the end), resume
        (continue from such a state: bit-identical to an uninterrupted run),
        diverge_factor (stop when an epoch's loss exceeds this many times the
        best, keeping the best model; default 1e3), keep ('best', the
        default, or 'last').
    Options of the contact family (defaults: the reference code's settings):
        settings ('code' or 'paper'), epochs (2000), horizon (10), batch (32),
        lr, l2, activation ('tanh', 'softplus', 'relu'), hidden (500),
        layers (1), touch (True), projection, damping, learn_mass (False),
        contact_precision, potential_precision ('single' or 'double');
        cdl only: restitution ('learn', the default, or 'fixed': the data's
        meta value), restitution_init ('data', 'meta' or a number; default:
        the meta value if the data has one, else the data estimate),
        friction (False; True: Coulomb friction with learned mu at pairs
        with a tangent), friction_init ('data' or a number), impact_law
        ('auto', the default: 'paper' for impulse's event-driven simulators,
        'newton' for other data; as the CLI's --impact-law);
        contact_labels ('auto', 'as-given', 'onset': how touch labels are
        turned into impulses, as the CLI's --contact-labels); lr_schedule
        ('auto', the default: 'constant' for impulse's event-driven
        simulators, 'cosine' for other data; 'constant' or 'cosine', the rate
        annealed to 0 over the epochs; as the CLI's --lr-schedule).
    Options of the constrained family: epochs (2000), lr (3e-3), wd (1e-4),
        batch (200), chunks (800), hidden (256), threads (2, as the CLI),
        precision ('auto', the default: 'single' for chnn, 'double' for the
        others; 'single' runs the network's hidden-to-hidden products in float),
        max_substeps (64; 1: no RK4 substeps for fast windows, as the CLI's
        --max-substeps), skip_factor (0: off; as the CLI's --skip-factor).
    Returns a Model or ConstrainedModel with .history (one dict per epoch),
    .loss_history (numpy array, epoch loss), .report (end: finished, stopped
    or diverged; epochs_done, best_epoch, best_loss, final_loss, seconds,
    kept_epoch, far_above_best;
    constrained models also substepped_windows, max_substeps, skipped_batches),
    .stopped_early and .interrupted (Ctrl-C). A diverged run raises
    impulse.Error.
    """
    run = {k: options.pop(k) for k in ("log", "resume", "state", "checkpoint_every", "checkpoint_seconds",
                                        "diverge_factor", "keep") if k in options}
    if model in CONTACT_MODELS:
        return _train_contact(model, data, output, epochs, seed, lr, callback, run, **options)
    if model in CONSTRAINED_MODELS:
        return _train_constrained(model, data, output, epochs, seed, lr, callback, run, **options)
    raise Error(f"model: unknown '{model}' ({', '.join(CONTACT_MODELS + CONSTRAINED_MODELS)})")


def _precision(name: str, v: str) -> int:
    if v not in ("single", "double"):
        raise Error(f"{name}: '{v}' is not single or double")
    return int(v == "single")


def _train_contact(model, data, output, epochs, seed, lr, callback, run, settings="code", horizon=None, batch=None,
                   l2=None, activation=None, hidden=None, layers=None, touch=True, projection=False,
                   damping=False, learn_mass=False, contact_precision="single", potential_precision="single",
                   restitution=None, restitution_init=None, friction=False, friction_init="data",
                   impact_law="auto", contact_labels="auto", lr_schedule="auto"):
    kind = ctypes.c_int()
    check(lib.imp_model_kind_from_name(model.encode(), ctypes.byref(kind)))
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
        if not ts.has_contact and cfg.touch:
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


def _ctraj_of(z: np.ndarray, dt: float) -> _lib.CTraj:
    t = _lib.CTraj()
    t.n_traj, t.T, t.dim, t.dt, t.z = z.shape[0], z.shape[1], z.shape[2], dt, ptr(z)
    return t


def _train_constrained(model, data, output, epochs, seed, lr, callback, run, wd=None, batch=None, chunks=None,
                       hidden=256, threads=2, precision="auto", max_substeps=None, skip_factor=None):
    d = _as_dataset(data)
    if d.kind != "constrained":
        raise Error(f"{model}: needs a constrained system's trajectories (z or x, v), got {d.kind} data")
    kind = ctypes.c_int()
    check(lib.imp_cmodel_kind_from_name(model.encode(), ctypes.byref(kind)))
    o = _lib.CTrainOpts()
    lib.imp_ctrain_opts_default(ctypes.byref(o))
    o.threads = threads
    for field, v in (("epochs", epochs), ("lr", lr), ("weight_decay", wd), ("batch", batch), ("n_chunks", chunks),
                     ("max_substeps", max_substeps), ("skip_factor", skip_factor)):
        if v is not None:
            setattr(o, field, v)
    o.seed = seed
    o.single_products = -1 if precision == "auto" else _precision("precision", precision)
    m = ConstrainedModel(_new=True)
    check(lib.imp_csystem_from_name(m._cs, d.system.encode()))
    check(lib.imp_cmodel_init(m._m, kind.value, m._cs, hidden, 3))
    m._info()
    z = d._z()
    cart = _lib.CTraj()
    cart = _ctraj_of(z, d._dt())
    gen = _lib.CTraj()
    if not m.cartesian:
        check(lib.imp_ctraj_to_generalised(m._cs, ctypes.byref(cart), ctypes.byref(gen)))
    rng = _lib.Rng()
    lib.imp_rng_seed(ctypes.byref(rng), seed ^ 0x5eed)
    lib.imp_cmodel_init_params(m._m, ptr(m.params), ctypes.byref(rng))
    try:
        with _Interrupt() as intr:
            hk = _Hooks(o.hooks, o.epochs, callback, intr, **run)
            res = _lib.CTrainResult()
            st = lib.imp_ctrain(m._m, ptr(m.params), ctypes.byref(gen if not m.cartesian else cart),
                                ctypes.byref(o), ctypes.byref(res))
            hk.finish(m)
            m.report.update(substepped_windows=res.substepped_windows, max_substeps=res.max_substeps,
                            skipped_batches=res.skipped_batches)
            check(st)
    finally:
        if not m.cartesian:
            lib.imp_ctraj_free(ctypes.byref(gen))
    m._opts, m._res = o, res
    if output is not None:
        m.save(output)
    return m


# --------------------------------------------------------------------------- models

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
            check(lib.imp_model_load(ctypes.byref(self._h), os.fsencode(path)))
        D, K = ctypes.c_int(), ctypes.c_int()
        check(lib.imp_model_sizes(self._h, ctypes.byref(D), ctypes.byref(K)))
        self.D, self.K = D.value, K.value

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

    def evaluate(self, data, touch_rollout: bool = False, predictions: bool = False) -> dict:
        """Roll out from each trajectory's noise-free first state and compare
        with the truth: the metrics of `impulse eval --json` (same keys). With
        predictions=True also 'states', 'contact', 'energy' arrays."""
        ts = _load_trajset(data)
        try:
            N = ts.n_traj * ts.n_steps
            states, contact, energy = np.empty((N, 2 * self.D)), np.empty((N, self.K)), np.empty(N)
            r = _lib.EvalResult()
            check(lib.imp_model_evaluate(self._h, ctypes.byref(ts), int(touch_rollout), ctypes.byref(r),
                                         ptr(states), ptr(contact), ptr(energy)))
            out = {"verb": "eval", "model": self.kind, "system": ts.system.decode(), "rmse": r.rmse, "rmse_code": r.rmse_code, "energy_drift": r.energy_drift,
                   "contact_timing_s": r.contact_timing, "contacts_true": r.contacts_true,
                   "contacts_predicted": r.contacts_pred, "contacts_missed": r.contacts_missed,
                   "trajectories": r.n_traj, "steps": r.n_steps, "touch_rollout": int(touch_rollout)}
            if self.kind == "cdl":
                out.update(self.contact_law())
            if predictions:
                out["states"] = states.reshape(ts.n_traj, ts.n_steps, -1)
                out["contact"] = contact.reshape(ts.n_traj, ts.n_steps, -1)
                out["energy"] = energy.reshape(ts.n_traj, ts.n_steps)
            return out
        finally:
            lib.imp_trajset_free(ctypes.byref(ts))


class ConstrainedModel:
    """A model of the constrained family (chnn, clnn, hnn, delan, node):
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
            check(lib.imp_cmodel_load(os.fsencode(path), self._m, ctypes.byref(p)))
            self._info()
            self.params[:] = np.ctypeslib.as_array(p, shape=(self.n_params,))
            _lib.libc_free(ctypes.cast(p, ctypes.c_void_p))

    def _info(self):
        c, d, n = ctypes.c_int(), ctypes.c_int(), ctypes.c_size_t()
        check(lib.imp_flat_cmodel_info(self._m, ctypes.byref(c), ctypes.byref(d), ctypes.byref(n)))
        self.cartesian, self.dim, self.n_params = bool(c.value), d.value, n.value
        self.params = np.zeros(self.n_params)

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

    def rollout(self, x0, steps: int, dt: float, rtol: float | None = None) -> np.ndarray:
        """Roll out from Cartesian states x0 = (x, v), (2 N,) or a batch (n, 2 N),
        as `impulse rollout` and the evaluation do (DOPRI5, rtol 1e-7, atol
        rtol / 100 by default): `steps` steps of dt, returned in Cartesian
        coordinates, (steps + 1, 2 N) or (n, steps + 1, 2 N), row 0 = x0."""
        x = f64(x0, "x0")
        single = x.ndim == 1
        x = np.ascontiguousarray(np.atleast_2d(x))
        eo = _lib.CEvalOpts()
        lib.imp_ceval_opts_default(ctypes.byref(eo))
        if rtol is not None:
            eo.rtol, eo.atol = rtol, rtol * 1e-2
        out = np.empty((x.shape[0], steps + 1, x.shape[1]))
        for i in range(x.shape[0]):
            check(lib.imp_cmodel_rollout(self._m, ptr(self.params), ptr(x[i]), steps + 1, dt, ctypes.byref(eo),
                                         ptr(out[i])))
        return out[0] if single else out

    def evaluate(self, data, n_test: int = 0, steps: int | None = None, rtol: float | None = None) -> dict:
        """DOPRI5 rollouts from each test trajectory's first state, compared in
        Cartesian space: the metrics of `impulse eval --json` (same keys) plus
        per-trajectory arrays geo_rel_err, rel_err, energy_err, violation."""
        d = _as_dataset(data)
        eo = _lib.CEvalOpts()
        lib.imp_ceval_opts_default(ctypes.byref(eo))
        eo.n_test = n_test
        if steps is not None:
            eo.steps = steps
        if rtol is not None:
            eo.rtol, eo.atol = rtol, rtol * 1e-2
        z = d._z()
        test = _ctraj_of(z, d._dt())
        r = _lib.CEvalResult()
        check(lib.imp_ceval(self._m, ptr(self.params), ctypes.byref(test), ctypes.byref(eo), ctypes.byref(r)))
        try:
            n, T = r.n_test, r.T
            arr = lambda p, *shape: np.ctypeslib.as_array(p, shape=shape).copy()  # noqa: E731
            return {"verb": "eval", "model": self.kind, "system": d.system, "trajectories": n, "steps": T,
                    "mean_geo_rel_err": r.mean_geo, "median_geo_rel_err": r.median_geo,
                    "mean_energy_err": r.mean_energy_err, "mean_violation": r.mean_violation,
                    "seconds": r.seconds, "geo_rel_err": arr(r.geo, n), "rel_err": arr(r.rel_err, n, T),
                    "energy_err": arr(r.energy_err, n, T), "violation": arr(r.violation, n, T)}
        finally:
            lib.imp_ceval_result_free(ctypes.byref(r))


def load_model(path: str | os.PathLike):
    """Load any checkpoint of `impulse train` (Model or ConstrainedModel)."""
    buf = ctypes.create_string_buffer(64)
    kind = buf.value.decode() if lib.imp_cmodel_peek_kind(os.fsencode(path), buf, 64) == 0 else ""
    lib.imp_clear_error()
    return ConstrainedModel(path) if kind in CONSTRAINED_MODELS else Model(path)


# --------------------------------------------------------------------------- planar impact

def _law(name: str, mu: float, eps: float, variant: str = "textbook") -> _lib.ImpactLaw:
    m, v = ctypes.c_int(), ctypes.c_int()
    check(lib.imp_impact_model_parse(name.encode(), ctypes.byref(m), b"law"))
    check(lib.imp_impact_variant_parse(variant.encode(), ctypes.byref(v), b"variant"))
    law = _lib.ImpactLaw(m.value, v.value, mu, eps)
    check(lib.imp_impact_law_check(ctypes.byref(law)))
    return law


def impact_table1(law: str) -> tuple[float, float]:
    """(mu, eps) that Fazeli et al. identified for a law (their Table 1)."""
    m = ctypes.c_int()
    check(lib.imp_impact_model_parse(law.encode(), ctypes.byref(m), b"law"))
    mu, eps = ctypes.c_double(), ctypes.c_double()
    lib.imp_impact_table1(m.value, ctypes.byref(mu), ctypes.byref(eps))
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
    W, u = np.ascontiguousarray(W.reshape(-1, 4)), np.ascontiguousarray(np.atleast_2d(u))
    if W.shape[0] != u.shape[0] or u.shape[1] != 2:
        raise Error(f"W {W.shape} and u {u.shape}: want (n, 2, 2) and (n, 2)")
    n = u.shape[0]
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
        m, v = ctypes.c_int(), ctypes.c_int()
        check(lib.imp_impact_model_parse(law.encode(), ctypes.byref(m), b"law"))
        check(lib.imp_impact_variant_parse(variant.encode(), ctypes.byref(v), b"variant"))
        n_failed = ctypes.c_size_t()
        check(lib.imp_impact_predict_batch(m.value, v.value, n, ptr(W), ptr(u), ptr(mu_a), ptr(eps_a), n_param,
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
    out = [np.atleast_2d(f64(a, name)) for name, a in arrays.items()]
    if k is None:
        k = max(a.shape[0] for a in out)
    for i, (name, a) in enumerate(zip(arrays, out)):
        if a.shape[1:] != (3,) or a.shape[0] not in (1, k):
            raise Error(f"{name}: shape {a.shape}, want ({k}, 3) or (3,)")
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
    m, v = ctypes.c_int(), ctypes.c_int()
    check(lib.imp_impact_model_parse(law.encode(), ctypes.byref(m), b"law"))
    check(lib.imp_impact_variant_parse(variant.encode(), ctypes.byref(v), b"variant"))
    opt = lib.imp_ident_options_default()
    opt.mu_cap, opt.grid, opt.tol = mu_cap, grid, tol
    out, status = np.empty((k, 3)), np.empty(k, dtype=np.int32)
    n_failed = ctypes.c_size_t()
    check(lib.imp_impact_identify_batch(m.value, v.value, k, ptr(d), ptr(n), ptr(v_pre), float(mass), float(inertia),
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
        self.d = x.shape[1]
        check(lib.imp_gp_fit(ctypes.byref(self._h), ptr(x), ptr(y), x.shape[0], x.shape[1], ctypes.byref(opt)))

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



# --------------------------------------------------------------------------- reproductions as sweeps

REPRODUCTIONS = ("cdl", "chnn", "impact", "your-data")


def _c_str(v):
    return None if v is None else os.fsencode(v) if isinstance(v, os.PathLike) else str(v).encode()


def sweep_plan(name: str, path: str | os.PathLike | None = None, *, quick: bool = False, **options) -> str:
    """The task list of a paper's reproduction, as `impulse sweep plan NAME` /
    `impulse reproduce NAME --plan PATH`; returns the plan's text and writes it
    to `path` if given.

    name "cdl" (Hochlehnert et al. 2021): seeds, first_seed, epochs,
    settings ("code" or "paper"), only ("pendulum,ball-touch,..."), threads.
    name "chnn" (Finzi et al. 2020): preset ("full", "all", "quick", "tiny"),
    systems, models, n_train_list (comma lists), seeds, first_seed, epochs,
    n_train, n_test, hidden, lr, single (bool: precision=single tasks, ids
    ending .f32).
    name "impact" (Fazeli et al. 2017): data (the data_ellipse.mat path,
    required), variant, target, seed, gp (bool: the GP learning-curve tasks).
    name "your-data" (docs/your-data.md: CD-Lagrange, ResNetContact and
    ResNet on compliant-contact data with a touch sensor): seeds, epochs,
    system, restitution, noise, heldout, impact_law ("auto", "paper",
    "newton"), lr_schedule ("auto", "constant", "cosine"), threads.
    quick=True: the reproduction's --quick settings.
    """
    plan = _lib.SweepPlan()
    keep = []

    def fill(opts, allowed):
        for k, v in options.items():
            if k not in allowed:
                raise Error(f"sweep_plan {name}: unknown option '{k}' (known: {', '.join(sorted(allowed))})")
            if isinstance(v, bool):
                v = int(v)
            if isinstance(getattr(opts, k), bytes) or dict(opts._fields_)[k] is _lib.c_char_p:
                v = _c_str(",".join(map(str, v)) if isinstance(v, (list, tuple)) else v)
                keep.append(v)
            setattr(opts, k, v)

    if name == "cdl":
        o = _lib.SweepCdlOpts()
        lib.imp_sweep_cdl_opts_default(ctypes.byref(o))
        fill(o, {"seeds", "first_seed", "epochs", "settings", "only", "threads"})
        o.quick = int(quick)
        check(lib.imp_sweep_plan_cdl(ctypes.byref(plan), ctypes.byref(o)))
    elif name == "chnn":
        o = _lib.SweepChnnOpts()
        lib.imp_sweep_chnn_opts_default(ctypes.byref(o))
        if quick:
            o.preset = b"quick"
        fill(o, {"preset", "systems", "models", "n_train_list", "seeds", "first_seed", "epochs", "n_train", "n_test",
                 "hidden", "lr", "single"})
        check(lib.imp_sweep_plan_chnn(ctypes.byref(plan), ctypes.byref(o)))
    elif name == "impact":
        o = _lib.SweepImpactOpts()
        lib.imp_sweep_impact_opts_default(ctypes.byref(o))
        if "data" in options:
            options["data"] = os.path.abspath(os.fspath(options["data"]))
        fill(o, {"data", "variant", "target", "seed", "gp"})
        o.quick = int(quick)
        check(lib.imp_sweep_plan_impact(ctypes.byref(plan), ctypes.byref(o)))
    elif name == "your-data":
        o = _lib.SweepYourDataOpts()
        lib.imp_sweep_your_data_opts_default(ctypes.byref(o))
        fill(o, {"seeds", "epochs", "system", "restitution", "noise", "heldout", "impact_law", "lr_schedule",
                 "threads"})
        o.quick = int(quick)
        check(lib.imp_sweep_plan_your_data(ctypes.byref(plan), ctypes.byref(o)))
    else:
        raise Error(f"sweep_plan: '{name}' unknown (known: {', '.join(REPRODUCTIONS)})")
    try:
        buf = ctypes.c_void_p()
        check(lib.imp_sweep_plan_text(ctypes.byref(plan), ctypes.byref(buf)))
        text = ctypes.string_at(buf).decode()
        libc_free(buf)
    finally:
        lib.imp_sweep_plan_free(ctypes.byref(plan))
    if path is not None:
        tmp = os.fspath(path) + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    return text


def sweep_run(plan: str | os.PathLike, out: str | os.PathLike, *, threads: int = 2,
              progress: Callable[[str], None] | None = None) -> dict:
    """Run the tasks of a plan (a plan file, or the text sweep_plan returned)
    not yet done in the folder `out`, longest first, as `impulse sweep run`:
    each task's result and checkpoint are written atomically under
    out/tasks/<id>/, a finished task is never run again, so a run stopped by
    Ctrl-C (after the task being trained reaches the end of an epoch) or
    killed resumes where it stopped. Several processes may share `out`.
    threads: training threads per task (the constrained networks; CD-Lagrange
    tasks name theirs in the plan). progress(line) gets one line of text now
    and then. Returns {"ran", "skipped", "failed", "stopped"}; a failing task
    is counted (its message in out/tasks/<id>/error.txt), not raised.
    """
    plan_c = _lib.SweepPlan()
    text = os.fspath(plan)
    if "\n" in text or text.lstrip().startswith("task "):
        check(lib.imp_sweep_plan_parse(ctypes.byref(plan_c), text.encode(), b"plan"))
    else:
        check(lib.imp_sweep_plan_load(ctypes.byref(plan_c), os.fsencode(text)))
    try:
        d = os.fsencode(out)
        check(lib.imp_sweep_prepare(ctypes.byref(plan_c), d))
        o = _lib.SweepRunOpts()
        lib.imp_sweep_run_opts_default(ctypes.byref(o))
        o.threads = threads
        o.runner = b"python"

        def on_progress(user, line):
            if progress is not None:
                try:
                    progress(line.decode("utf-8", "replace"))
                except BaseException as e:  # never unwind through C
                    print(f"impulse: the progress callback raised {e!r}")
        keep = (_lib.SWEEP_PROGRESS_FN(on_progress), None)
        o.progress = keep[0] if progress is not None else _lib.SWEEP_PROGRESS_FN()
        summary = _lib.SweepSummary()
        with _Interrupt() as intr:
            stop_fn = _lib.SWEEP_STOP_FN(lambda user: 1 if intr.hit else 0)
            o.should_stop = stop_fn
            st = lib.imp_sweep_run_plan(ctypes.byref(plan_c), d, ctypes.byref(o), ctypes.byref(summary))
            if st:
                lib.imp_clear_error()  # failed tasks are in the summary and their error.txt
        return {"ran": summary.ran, "skipped": summary.skipped, "failed": summary.failed, "stopped": intr.hit}
    finally:
        lib.imp_sweep_plan_free(ctypes.byref(plan_c))


def sweep_report(out: str | os.PathLike) -> str:
    """The report of a sweep folder from whatever is finished, as
    `impulse sweep report`: writes out/report.md, out/index.html and each
    reproduction's tables and figures, and returns the Markdown text (which
    lists the tasks not done)."""
    buf = ctypes.c_void_p()
    check(lib.imp_sweep_report(os.fsencode(out), ctypes.byref(buf)))
    text = ctypes.string_at(buf).decode()
    libc_free(buf)
    return text


def reproduce(name: str, out: str | os.PathLike, *, quick: bool = False, threads: int = 2,
              progress: Callable[[str], None] | None = None, **options) -> str:
    """A paper's reproduction, as `impulse reproduce NAME --out OUT`: its plan
    (sweep_plan options), run in `out` (resuming what an earlier call left)
    and reported; returns the report's Markdown."""
    text = sweep_plan(name, quick=quick, **options)
    sweep_run(text, out, threads=threads, progress=progress)
    return sweep_report(out)


Error.__module__ = __name__
