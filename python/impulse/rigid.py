"""One free rigid body (the tossed cube, docs/cube.md): trajectory files, the
full-toss metrics and splits, the rigid-body time step with its reverse
pass, the box-toss simulator, rigid-identified and the end-to-end network
(include/impulse/rigid_traj.h, rigid_model.h, rigid_models.h).

States are rows of 13 numbers: quaternion w x y z (body to world), position
of the centre (world, z up), angular velocity (body frame), linear velocity
(world). Arrays go to the library by pointer: C-contiguous float64 arrays
are not copied (anything else is converted once).

    tosses = impulse.box_toss(tosses=4, seed=1)            # RigidTrajectories
    m = impulse.RigidModel.box(tosses.body, e=0.3, mu=0.25)
    pred = m.rollout(tosses.episode(0)[0], len(tosses.episode(0)), tosses.dt, substeps=64)
    impulse.rigid_metrics(pred, tosses.episode(0), tosses.body)  # position %, rotation deg, penetration %
"""
from __future__ import annotations

import ctypes
import os
from typing import Callable, Sequence

import numpy as np

from . import _rigid_lib as R
from ._lib import Error, Result, check, f64, fspath, lib, ptr

__all__ = ["RigidBody", "RigidTrajectories", "RigidModel", "RigidE2E", "box_toss", "box_toss_initial",
           "rigid_metrics", "rigid_quat_angle", "rigid_lowest_corner", "rigid_ballistic", "rigid_split",
           "rigid_identify"]

STATE = R.RIGID_STATE


def _states(a, name: str, rows: int | None = None) -> np.ndarray:
    """A C-contiguous float64 (n, 13) array (no copy when it already is one)."""
    a = f64(a, name)
    if a.ndim != 2 or a.shape[1] != STATE or (rows is not None and a.shape[0] != rows):
        want = f"({rows if rows is not None else 'n'}, 13)"
        raise Error(f"{name}: shape {a.shape}, want {want} (quaternion w x y z, position, body angular velocity, "
                    "linear velocity)")
    return a


def _state(a, name: str) -> np.ndarray:
    a = f64(a, name)
    if a.shape != (STATE,):
        raise Error(f"{name}: shape {a.shape}, want (13,)")
    return a


def _view(owner, pointer, shape: tuple, ctype=ctypes.c_double) -> np.ndarray:
    """A numpy view of library memory that keeps `owner` (which frees it) alive."""
    n = int(np.prod(shape))
    buf = (ctype * n).from_address(ctypes.addressof(pointer.contents))
    buf._owner = owner
    return np.ctypeslib.as_array(buf).reshape(shape)


def _int_array(a, name: str) -> tuple[np.ndarray | None, object, int]:
    if a is None:
        return None, None, 0
    a = np.ascontiguousarray(a, dtype=np.intc)
    if a.ndim != 1:
        raise Error(f"{name}: shape {a.shape}, want a 1-D list of episode numbers")
    return a, a.ctypes.data_as(ctypes.POINTER(ctypes.c_int)), int(a.size)


class RigidBody:
    """A box: side lengths `size` (m), `mass` (kg), principal `inertia` (kg m^2).
    RigidBody() is the nominal ContactNets cube."""

    def __init__(self, size=None, mass: float | None = None, inertia=None):
        t = R.RigidTraj()
        lib.imp_rigid_traj_default(ctypes.byref(t))
        self._c = R.RigidBody.from_buffer_copy(t.body)
        if size is not None:
            s = np.broadcast_to(np.asarray(size, dtype=float), (3,))
            self._c.size[:] = list(s)
        if mass is not None:
            self._c.mass = float(mass)
        if inertia is not None:
            self._c.inertia[:] = list(np.broadcast_to(np.asarray(inertia, dtype=float), (3,)))

    @classmethod
    def _from_c(cls, c: R.RigidBody) -> "RigidBody":
        b = cls.__new__(cls)
        b._c = R.RigidBody.from_buffer_copy(c)
        return b

    size = property(lambda self: np.array(self._c.size[:]))
    mass = property(lambda self: self._c.mass)
    inertia = property(lambda self: np.array(self._c.inertia[:]))

    def __repr__(self) -> str:
        return f"RigidBody(size={list(self._c.size)}, mass={self._c.mass}, inertia={list(self._c.inertia)})"


def _body(b, name: str = "body") -> R.RigidBody:
    if b is None:
        return RigidBody()._c
    if isinstance(b, RigidBody):
        return b._c
    raise Error(f"{name}: expected an impulse.RigidBody, got {type(b).__name__}")


class RigidTrajectories:
    """Ragged episodes (tosses) of 13-column states with their meta (dt, body,
    ground_height, gravity, source): impulse's rigid-body trajectory file
    (docs/data-format.md). `states` (n_rows, 13) and `lengths` (episodes,) are
    numpy views of the library's arrays."""

    def __init__(self, states=None, lengths=None, *, ids=None, dt: float | None = None, body: RigidBody | None = None,
                 ground_height: float | None = None, gravity: float | None = None, source: str | None = None,
                 quat_tol: float = R.RIGID_QUAT_TOL):
        self._c = R.RigidTraj()
        lib.imp_rigid_traj_default(ctypes.byref(self._c))
        if dt is not None:
            self._c.dt = float(dt)
        if body is not None:
            self._c.body = _body(body)
        if ground_height is not None:
            self._c.ground_height = float(ground_height)
        if gravity is not None:
            self._c.gravity = float(gravity)
        if source is not None:
            self._c.source = source.encode()[:255]
        if states is None:
            return
        s = _states(states, "states")
        if lengths is None:
            lengths = [s.shape[0]]
        ln = np.ascontiguousarray(lengths, dtype=np.int64)
        if ln.ndim != 1:
            raise Error(f"lengths: shape {ln.shape}, want (episodes,)")
        idp = None
        if ids is not None:
            ida = np.ascontiguousarray(ids, dtype=np.int64)
            if ida.shape != ln.shape:
                raise Error(f"ids: shape {ida.shape}, want {ln.shape} (one per episode)")
            idp = ida.ctypes.data_as(ctypes.POINTER(ctypes.c_int64))
        check(lib.imp_rigid_traj_set(ctypes.byref(self._c), ptr(s), s.shape[0],
                                     ln.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), idp, ln.size, quat_tol))

    @classmethod
    def load(cls, path: str | os.PathLike, *, any_format: bool = True) -> "RigidTrajectories":
        """Read impulse's rigid-body file; with any_format also the ContactNets
        file (arrays states, lengths, toss; the nominal cube). `.nominal`
        says which."""
        t = cls()
        p = os.fsencode(fspath(path, "path"))
        nominal = ctypes.c_int(0)
        if any_format:
            check(lib.imp_rigid_traj_load_any(ctypes.byref(t._c), p, ctypes.byref(nominal)))
        else:
            check(lib.imp_rigid_traj_load(ctypes.byref(t._c), p))
        t.nominal = bool(nominal.value)
        return t

    @classmethod
    def read_arrays(cls, path, states_name: str = "states", lengths_name: str = "lengths", ids_name: str | None = None,
                    *, quat_tol: float = R.RIGID_QUAT_TOL, **meta) -> "RigidTrajectories":
        """The arrays of any .npz (as `impulse import` reads the ContactNets
        file), with the meta given as keywords (dt, body, ground_height, ...)."""
        t = cls(**meta)
        check(lib.imp_rigid_traj_read_arrays(ctypes.byref(t._c), os.fsencode(fspath(path, "path")),
                                             states_name.encode(), lengths_name.encode(),
                                             None if ids_name is None else ids_name.encode(), quat_tol))
        return t

    def save(self, path: str | os.PathLike) -> None:
        check(lib.imp_rigid_traj_save(ctypes.byref(self._c), os.fsencode(fspath(path, "path"))))

    def check(self, quat_tol: float = R.RIGID_QUAT_TOL) -> None:
        check(lib.imp_rigid_traj_check(ctypes.byref(self._c), quat_tol))

    def __del__(self):
        c = getattr(self, "_c", None)
        if c is not None and lib is not None:
            lib.imp_rigid_traj_free(ctypes.byref(c))

    # -- the data, as numpy views of the library's arrays (kept alive by self)
    @property
    def states(self) -> np.ndarray:
        if not self._c.n_rows:
            return np.empty((0, STATE))
        return _view(self, self._c.states, (self._c.n_rows, STATE))

    @property
    def lengths(self) -> np.ndarray:
        if not self._c.n_episodes:
            return np.empty(0, dtype=np.int64)
        return _view(self, self._c.lengths, (self._c.n_episodes,), ctypes.c_int64)

    @property
    def ids(self) -> np.ndarray | None:
        if not self._c.ids or not self._c.n_episodes:
            return None
        return _view(self, self._c.ids, (self._c.n_episodes,), ctypes.c_int64)

    n_episodes = property(lambda self: self._c.n_episodes)
    n_rows = property(lambda self: self._c.n_rows)
    dt = property(lambda self: self._c.dt)
    ground_height = property(lambda self: self._c.ground_height)
    gravity = property(lambda self: self._c.gravity)
    source = property(lambda self: self._c.source.decode("utf-8", "replace"))
    body = property(lambda self: RigidBody._from_c(self._c.body))

    def __len__(self) -> int:
        return self._c.n_episodes

    def offset(self, k: int) -> int:
        if not 0 <= k <= self._c.n_episodes:
            raise Error(f"k: {k} is not an episode (0..{self._c.n_episodes})")
        return int(lib.imp_rigid_traj_offset(ctypes.byref(self._c), k))

    def episode(self, k: int) -> np.ndarray:
        """Episode k's states (a view, (length, 13))."""
        if not 0 <= k < self._c.n_episodes:
            raise Error(f"k: {k} is not an episode (0..{self._c.n_episodes - 1})")
        return self.states[self.offset(k):self.offset(k + 1)]

    def stats(self) -> Result:
        """What `impulse import` prints: lengths, quaternion norms, finite-difference consistency."""
        s = R.RigidStats()
        check(lib.imp_rigid_traj_stats(ctypes.byref(self._c), ctypes.byref(s)))
        return Result(s.as_dict())

    def penetration(self, ground_height: float | None = None) -> Result:
        """The measured poses' own penetration of the ground: mean and max, % of the width."""
        mean, mx = ctypes.c_double(), ctypes.c_double()
        g = self._c.ground_height if ground_height is None else float(ground_height)
        check(lib.imp_rigid_traj_penetration(ctypes.byref(self._c), g, ctypes.byref(mean), ctypes.byref(mx)))
        return Result(mean_pct=mean.value, max_pct=mx.value)

    def evaluate(self, rollout: Callable[[np.ndarray, int], np.ndarray] | "RigidModel" | "RigidE2E" | str,
                 episodes: Sequence[int] | None = None, *, substeps: int = 4,
                 ground_height: float | None = None) -> Result:
        """Full-toss metrics averaged over episodes (all when None) of a model
        rolled out from each episode's first state: a RigidModel (substeps per
        sample), a RigidE2E, "ballistic", or a function (x0 (13,), n) -> (n, 13)."""
        ep, ep_p, n_ep = _int_array(episodes, "episodes")
        m = R.RigidMetrics()
        if isinstance(rollout, str):
            if rollout != "ballistic":
                raise Error(f"rollout: unknown '{rollout}' (known: ballistic, a RigidModel, a RigidE2E, a function)")
            check(lib.imp_rigid_eval_ballistic(ctypes.byref(self._c), ep_p, n_ep, ctypes.byref(m)))
            return Result(m.as_dict())
        g = self._c.ground_height if ground_height is None else float(ground_height)
        if isinstance(rollout, RigidModel):
            ctx = R.RigidModelCtx(ctypes.pointer(rollout._c), self._c.dt, int(substeps))
            fn = ctypes.cast(lib.imp_rigid_model_rollout_fn, R.ROLLOUT_FN)
            if ground_height is None:
                g = rollout._c.ground
            check(lib.imp_rigid_eval_rollouts(ctypes.byref(self._c), ep_p, n_ep, fn, ctypes.cast(ctypes.byref(ctx), ctypes.c_void_p),
                                              g, ctypes.byref(m)))
            return Result(m.as_dict())
        if isinstance(rollout, RigidE2E):
            fn = ctypes.cast(lib.imp_rigid_e2e_rollout, R.ROLLOUT_FN)
            check(lib.imp_rigid_eval_rollouts(ctypes.byref(self._c), ep_p, n_ep, fn,
                                              ctypes.cast(ctypes.byref(rollout._c), ctypes.c_void_p), g,
                                              ctypes.byref(m)))
            return Result(m.as_dict())
        if not callable(rollout):
            raise Error(f"rollout: expected a RigidModel, RigidE2E, 'ballistic' or a function, got "
                        f"{type(rollout).__name__}")
        failure = []

        def cb(x0, n, _ctx, out):
            try:
                x = np.ctypeslib.as_array(x0, shape=(STATE,)).copy()
                y = _states(rollout(x, int(n)), "rollout(x0, n)", int(n))
                np.ctypeslib.as_array(out, shape=(int(n), STATE))[:] = y
                return 0
            except BaseException as e:  # noqa: BLE001 - reported after the call
                failure.append(e)
                return -1
        fn = R.ROLLOUT_FN(cb)
        st = lib.imp_rigid_eval_rollouts(ctypes.byref(self._c), ep_p, n_ep, fn, None, g, ctypes.byref(m))
        if failure:
            raise failure[0]
        check(st)
        return Result(m.as_dict())

    def __repr__(self) -> str:
        return (f"RigidTrajectories({self._c.n_episodes} episodes, {self._c.n_rows} rows, dt={self._c.dt:g}, "
                f"ground_height={self._c.ground_height:g}, body={self.body!r})")


def rigid_quat_angle(a, b) -> float:
    """Geodesic angle (rad, [0, pi]) between two orientations w x y z (q and -q are one)."""
    a, b = f64(a, "a", (4,)), f64(b, "b", (4,))
    return float(lib.imp_rigid_quat_angle(ptr(a), ptr(b)))


def rigid_lowest_corner(state, body: RigidBody | None = None, ground_height: float = 0.0) -> float:
    """Height of the box's lowest corner over the plane z = ground_height."""
    s = _state(state, "state")
    return float(lib.imp_rigid_lowest_corner(ptr(s), ctypes.byref(_body(body)), float(ground_height)))


def rigid_metrics(pred, meas, body: RigidBody | None = None, ground_height: float = 0.0) -> Result:
    """Full-toss metrics of one episode: position_error_pct (of the width),
    rotation_error_deg, penetration_pct of pred (docs/cube.md)."""
    m = _states(meas, "meas")
    p = _states(pred, "pred", m.shape[0])
    out = R.RigidMetrics()
    check(lib.imp_rigid_metrics_episode(ptr(p), ptr(m), m.shape[0], ctypes.byref(_body(body)), float(ground_height),
                                        ctypes.byref(out)))
    return Result(out.as_dict())


def rigid_ballistic(x0, n: int, dt: float, body: RigidBody | None = None, gravity: float = 9.81,
                    substeps: int = 4) -> np.ndarray:
    """n rows of free flight (no contact) from x0: the sanity floor."""
    x = _state(x0, "x0")
    out = np.empty((int(n), STATE))
    check(lib.imp_rigid_ballistic(ptr(x), int(n), float(dt), ctypes.byref(_body(body)), float(gravity), int(substeps),
                                  ptr(out)))
    return out


def rigid_split(n_episodes: int, n_draw: int | None = None, seed: int = 0, train: float = 0.5,
                valid: float = 0.25) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train/validation/test episode numbers: n_draw of n_episodes drawn at
    random (seed), shuffled and cut at the fractions (test gets the rest)."""
    n_draw = int(n_episodes if n_draw is None else n_draw)
    bufs = [np.zeros(max(n_draw, 1), dtype=np.intc) for _ in range(3)]
    counts = [ctypes.c_int() for _ in range(3)]
    ip = [b.ctypes.data_as(ctypes.POINTER(ctypes.c_int)) for b in bufs]
    check(lib.imp_rigid_split(int(n_episodes), n_draw, int(seed), float(train), float(valid), ip[0],
                              ctypes.byref(counts[0]), ip[1], ctypes.byref(counts[1]), ip[2], ctypes.byref(counts[2])))
    return tuple(b[:c.value].copy() for b, c in zip(bufs, counts))


class RigidModel:
    """The rigid-body time step (include/impulse/rigid_model.h): a body with
    up to 8 body-fixed contact points over the ground z = ground, Newton
    restitution e and Coulomb friction mu, with its reverse pass."""

    def __init__(self, mass: float, inertia, points, *, e: float = 0.3, mu: float = 0.25, ground: float = 0.0,
                 gravity: float = 9.81, e_threshold: float = 0.1):
        pts = f64(points, "points", (-1, 3))
        if not 1 <= pts.shape[0] <= R.RIGID_MAX_POINTS:
            raise Error(f"points: {pts.shape[0]} contact points, want 1..{R.RIGID_MAX_POINTS}")
        c = R.RigidModel()
        c.mass, c.n_points, c.e, c.mu, c.ground, c.gravity, c.e_threshold = (float(mass), pts.shape[0], float(e),
                                                                            float(mu), float(ground), float(gravity),
                                                                            float(e_threshold))
        c.inertia[:] = list(np.broadcast_to(np.asarray(inertia, dtype=float), (3,)))
        for k in range(pts.shape[0]):
            c.points[k][:] = list(pts[k])
        check(lib.imp_rigid_model_check(ctypes.byref(c)))
        self._c = c

    @classmethod
    def box(cls, body: RigidBody | None = None, e: float = 0.3, mu: float = 0.25, ground: float = 0.0,
            gravity: float = 9.81) -> "RigidModel":
        """A box of the body's size with its 8 corners as the contact points."""
        m = cls.__new__(cls)
        m._c = R.RigidModel()
        lib.imp_rigid_model_box(ctypes.byref(m._c), ctypes.byref(_body(body)), float(e), float(mu), float(ground),
                                float(gravity))
        check(lib.imp_rigid_model_check(ctypes.byref(m._c)))
        return m

    @classmethod
    def _from_c(cls, c: R.RigidModel) -> "RigidModel":
        m = cls.__new__(cls)
        m._c = c
        return m

    def __getattr__(self, k):
        if k in ("mass", "e", "mu", "ground", "gravity", "e_threshold", "n_points", "warm_start"):
            return getattr(self._c, k)
        if k == "inertia":
            return np.array(self._c.inertia[:])
        if k == "dv0":
            return np.array(self._c.dv0[:])
        if k == "points":
            return np.array([self._c.points[i][:] for i in range(self._c.n_points)])
        raise AttributeError(k)

    def __repr__(self) -> str:
        c = self._c
        return (f"RigidModel(mass={c.mass:g}, inertia={list(c.inertia)}, {c.n_points} points, e={c.e:g}, "
                f"mu={c.mu:g}, ground={c.ground:g}, gravity={c.gravity:g})")

    def step(self, s, h: float, *, trace: bool = False):
        """The state after one step of length h; with trace=True also the
        trace that step_backward takes."""
        x = _state(s, "s")
        out = np.empty(STATE)
        tr = R.RigidStepTrace() if trace else None
        check(lib.imp_rigid_step_forward(ctypes.byref(self._c), float(h), ptr(x), ptr(out),
                                         ctypes.byref(tr) if tr is not None else None))
        return (out, tr) if trace else out

    def step_backward(self, trace: R.RigidStepTrace, s_out_bar) -> tuple[np.ndarray, Result]:
        """Reverse pass of a step: (ds_bar (13,), gradients of e, mu, ground and points)."""
        if not isinstance(trace, R.RigidStepTrace):
            raise Error("trace: expected the trace returned by step(..., trace=True)")
        gb = _state(s_out_bar, "s_out_bar")
        s_bar = np.zeros(STATE)
        g = R.RigidModelGrad()
        check(lib.imp_rigid_step_backward(ctypes.byref(self._c), ctypes.byref(trace), ptr(gb), ptr(s_bar),
                                          ctypes.byref(g)))
        return s_bar, self._grad(g)

    def _grad(self, g: R.RigidModelGrad) -> Result:
        return Result(e=g.e, mu=g.mu, ground=g.ground,
                      points=np.array([g.points[i][:] for i in range(self._c.n_points)]))

    def rollout(self, x0, n: int, dt: float, substeps: int = 4) -> np.ndarray:
        """n rows from x0 (row 0 = x0), `substeps` steps of dt/substeps per row."""
        x = _state(x0, "x0")
        out = np.empty((int(n), STATE))
        check(lib.imp_rigid_model_rollout(ctypes.byref(self._c), float(dt), int(substeps), ptr(x), int(n), ptr(out)))
        return out

    def energy(self, s) -> float:
        """Kinetic plus potential energy (m g z) of a state, J."""
        return float(lib.imp_rigid_model_energy(ctypes.byref(self._c), ptr(_state(s, "s"))))

    def window_loss(self, meas, dt: float, substeps: int = 4, width: float | None = None) -> tuple[float, Result]:
        """Loss of the rollout from meas[0] against meas (n, 13) and its
        gradients: (loss, {e, mu, ground, points, x0})."""
        m = _states(meas, "meas")
        if width is None:
            width = float(np.max(np.abs(self.points))) * 2
        loss = ctypes.c_double()
        g = R.RigidModelGrad()
        x0_bar = np.zeros(STATE)
        check(lib.imp_rigid_window_loss(ctypes.byref(self._c), float(dt), int(substeps), ptr(m), m.shape[0],
                                        float(width), ctypes.byref(loss), ctypes.byref(g), ptr(x0_bar)))
        r = self._grad(g)
        r["x0"] = x0_bar
        return loss.value, r


def _opts_from(o, options: dict, what: str) -> None:
    known = {k for k, _ in o._fields_}
    for k, v in options.items():
        if k not in known or k == "body":
            raise Error(f"{what}: unknown option '{k}' (known: {', '.join(sorted(known - {'body'}))})")
        setattr(o, k, v)


def _box_toss_opts(tosses, samples, body, seed, options) -> R.BoxTossOpts:
    o = R.BoxTossOpts()
    lib.imp_box_toss_defaults(ctypes.byref(o))
    o.n_tosses = int(tosses)
    if samples is not None:
        o.n_samples = int(samples)
    if body is not None:
        o.body = _body(body)
    o.seed = int(seed)
    _opts_from(o, options, "box_toss")
    return o


def box_toss(tosses: int = 1, samples: int | None = None, *, seed: int = 0, body: RigidBody | None = None,
             path: str | os.PathLike | None = None, **options) -> RigidTrajectories:
    """Random tosses of a box onto the ground (`impulse simulate box-toss`):
    options dt, substeps, e, mu, ground, gravity. Saved to `path` if given."""
    o = _box_toss_opts(tosses, samples, body, seed, options)
    t = RigidTrajectories()
    check(lib.imp_box_toss_simulate(ctypes.byref(o), ctypes.byref(t._c)))
    if path is not None:
        t.save(path)
    return t


def box_toss_initial(k: int, *, seed: int = 0, body: RigidBody | None = None, **options) -> np.ndarray:
    """Toss k's initial state (as box_toss draws it)."""
    o = _box_toss_opts(max(k + 1, 1), None, body, seed, options)
    s = np.empty(STATE)
    lib.imp_box_toss_initial(ctypes.byref(o), int(k), ptr(s))
    return s


def rigid_identify(data: RigidTrajectories, episodes: Sequence[int] | None = None, **options) -> tuple[RigidModel, Result]:
    """rigid-identified: e, mu and the ground fitted on the episodes (all when
    None) of data, the body's geometry kept. Options substeps, max_evals,
    window, e0, mu0, ground0. Returns (model, {loss, train metrics, evals})."""
    if not isinstance(data, RigidTrajectories):
        raise Error(f"data: expected an impulse.RigidTrajectories, got {type(data).__name__}")
    if episodes is None:
        episodes = range(data.n_episodes)
    ep, ep_p, n_ep = _int_array(list(episodes), "episodes")
    o = R.RigidIdentOpts()
    lib.imp_rigid_ident_defaults(ctypes.byref(o), ctypes.byref(data._c))
    _opts_from(o, options, "rigid_identify")
    m = R.RigidModel()
    res = R.RigidIdentResult()
    check(lib.imp_rigid_identify(ctypes.byref(data._c), ep_p, n_ep, ctypes.byref(o), ctypes.byref(m), ctypes.byref(res)))
    return RigidModel._from_c(m), Result(loss=res.loss, train=Result(res.train.as_dict()), evals=res.evals)


def rigid_learn(data: RigidTrajectories, start: RigidModel, train: Sequence[int], valid: Sequence[int] = (),
                **options) -> tuple[RigidModel, Result]:
    """impulse's learned cube (imp_rigid_learn): from the model `start` (e.g.
    rigid_identify's), its contact points, e, mu and the ground learned by
    Adam on rollout windows of the `train` episodes, the parameters scoring
    best on full rollouts of the `valid` episodes kept; before Adam, with
    fit_evals > 0, a derivative-free full-toss fit of e, mu, the ground, the
    first state's vertical velocity offset and (learn_inertia 1 or 3) the
    inertia (select_inertia 1: that fit and the one with the start's
    inertia, the validation tosses choosing; default 0). Options substeps,
    window, batch, steps, lr, eval_every, learn_points, point_scale,
    ground_scale, seed, fit_evals, learn_inertia, learn_dv0, select_inertia,
    rot_weight (the window loss's rotation weight), prior_ground_sd,
    prior_inertia_sd (the full-toss fit's MAP priors), prior_point_sd
    (Adam's prior on the contact points; 0: none).
    Returns (model, {best_step, valid_score, train_loss, skipped_windows,
    seconds, fit_evals, fit_loss, fit_valid_nominal, fit_valid_inertia,
    inertia_kept, valid_position_pct, valid_rotation_deg})."""
    if not isinstance(data, RigidTrajectories):
        raise Error(f"data: expected an impulse.RigidTrajectories, got {type(data).__name__}")
    if not isinstance(start, RigidModel):
        raise Error(f"start: expected an impulse.RigidModel, got {type(start).__name__}")
    tr, tr_p, n_tr = _int_array(list(train), "train")
    va, va_p, n_va = _int_array(list(valid), "valid")
    o = R.RigidLearnOpts()
    lib.imp_rigid_learn_defaults(ctypes.byref(o))
    _opts_from(o, options, "rigid_learn")
    m = R.RigidModel.from_buffer_copy(start._c)  # start is left as it was
    rep = R.RigidLearnReport()
    check(lib.imp_rigid_learn(ctypes.byref(data._c), tr_p, n_tr, va_p if n_va else None, n_va, ctypes.byref(o),
                              ctypes.byref(m), ctypes.byref(rep)))
    return RigidModel._from_c(m), Result(best_step=rep.best_step, valid_score=rep.valid_score,
                                         train_loss=rep.train_loss, skipped_windows=rep.skipped_windows,
                                         seconds=rep.seconds, fit_evals=rep.fit_evals, fit_loss=rep.fit_loss,
                                         fit_valid_nominal=rep.fit_valid_nominal,
                                         fit_valid_inertia=rep.fit_valid_inertia, inertia_kept=rep.inertia_kept,
                                         valid_position_pct=rep.valid_position_pct,
                                         valid_rotation_deg=rep.valid_rotation_deg)


class RigidE2E:
    """The end-to-end baseline (include/impulse/rigid_models.h): a residual
    MLP predicting the next state, trained with RigidE2E.train."""

    def __init__(self, **options):
        o = R.RigidE2eOpts()
        lib.imp_rigid_e2e_opts_default(ctypes.byref(o))
        if "act" in options and isinstance(options["act"], str):
            a = ctypes.c_int()
            check(lib.imp_activation_from_name(options["act"].encode(), ctypes.byref(a)))
            options["act"] = a.value
        _opts_from(o, options, "RigidE2E")
        self.opts = o
        self._c = R.RigidE2e()
        check(lib.imp_rigid_e2e_init(ctypes.byref(self._c), ctypes.byref(o)))

    def __del__(self):
        c = getattr(self, "_c", None)
        if c is not None and lib is not None:
            lib.imp_rigid_e2e_free(ctypes.byref(c))

    @property
    def params(self) -> np.ndarray:
        """The network's parameters (a view of the library's array)."""
        return _view(self, self._c.params, (self._c.net.n_params,))

    @classmethod
    def train(cls, data: RigidTrajectories, train: Sequence[int], valid: Sequence[int] | None = None,
              **options) -> tuple["RigidE2E", Result]:
        """Scale, initialise and train on episodes `train`, keeping the
        parameters with the best validation rollouts. Options: hidden, layers,
        act, steps, batch, lr, eval_every, window, noise, seed."""
        m = cls(**options)
        tr, tr_p, n_tr = _int_array(list(train), "train")
        va, va_p, n_va = _int_array(None if valid is None else list(valid), "valid")
        rep = R.RigidE2eReport()
        check(lib.imp_rigid_e2e_train(ctypes.byref(m._c), ctypes.byref(data._c), tr_p, n_tr, va_p, n_va,
                                      ctypes.byref(m.opts), ctypes.byref(rep)))
        return m, Result(rep.as_dict())

    def set_scaling(self, data: RigidTrajectories, episodes: Sequence[int]) -> None:
        ep, ep_p, n_ep = _int_array(list(episodes), "episodes")
        check(lib.imp_rigid_e2e_set_scaling(ctypes.byref(self._c), ctypes.byref(data._c), ep_p, n_ep))

    def features(self, x) -> np.ndarray:
        u = np.empty(R.RIGID_E2E_IN)
        lib.imp_rigid_e2e_features(ctypes.byref(self._c), ptr(_state(x, "x")), ptr(u))
        return u

    def step(self, x) -> np.ndarray:
        out = np.empty(STATE)
        check(lib.imp_rigid_e2e_step(ctypes.byref(self._c), ptr(_state(x, "x")), ptr(out)))
        return out

    def window_loss(self, x0, target, params=None, grad: bool = True) -> tuple[float, np.ndarray | None]:
        """Loss of B rollout windows of H steps (x0 (B, 13) first states,
        target (B, H, 13) the measured next states) at params (default the
        network's) and its gradient (n_params,) when grad."""
        x0 = _states(x0, "x0")
        B = x0.shape[0]
        tg = f64(target, "target")
        if tg.ndim != 3 or tg.shape[0] != B or tg.shape[2] != STATE or tg.shape[1] < 1:
            raise Error(f"target: shape {tg.shape}, want ({B}, H, 13)")
        H = tg.shape[1]
        n_p = self._c.net.n_params
        pa = self.params if params is None else f64(params, "params", (n_p,))
        g = np.zeros(n_p) if grad else None
        works = (ctypes.c_void_p * H)()
        try:
            for k in range(H):
                works[k] = lib.imp_mlp_work_new(ctypes.byref(self._c.net), B)
                if not works[k]:
                    raise Error("window_loss: out of memory (network work spaces)")
            lib.imp_clear_error()
            loss = lib.imp_rigid_e2e_window_loss(ctypes.byref(self._c), ptr(pa), ptr(x0), ptr(tg), B, H, ptr(g), works)
        finally:
            for k in range(H):
                if works[k]:
                    lib.imp_mlp_work_free(works[k])
        if not np.isfinite(loss):
            msg = lib.imp_last_error()
            raise Error(msg.decode() if msg else "window_loss: the loss is not finite")
        return float(loss), g

    def rollout(self, x0, n: int) -> np.ndarray:
        out = np.empty((int(n), STATE))
        check(lib.imp_rigid_e2e_rollout(ptr(_state(x0, "x0")), int(n), ctypes.cast(ctypes.byref(self._c), ctypes.c_void_p),
                                        ptr(out)))
        return out
