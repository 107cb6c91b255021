"""Datasets: trajectories as named numpy arrays plus a meta dict, and simulation
(`impulse simulate`).
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import tempfile
from typing import Mapping

import numpy as np

from . import _lib
from ._lib import Error, check, lib, notice, ptr
from ._lib import VERSION as __version__


CONSTRAINED_SYSTEMS = ("pendulum-chain:N", "coupled-pendulums:N", "magnet-pendulum", "gyroscope", "rotor",
                       "chain-ground:3", "chain-ground-elastic:3", "gyroscope-wall",
                       "colliding-pendulums")
CONTACT_SYSTEMS = ("pendulum", "bouncing-ball", "newtons-cradle", "compliant-ball", "compliant-cradle",
                   "bouncing-disk", "ball-box", "compliant-ball-box")


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

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Dataset":
        with np.load(_lib.fspath(path, "path"), allow_pickle=False) as z:
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
    def system(self) -> str | None:
        """meta 'system' (optional for contact data; None without one)."""
        return self.meta.get("system")

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

    def _z(self, what: str | None = None) -> np.ndarray:
        """Constrained data as (trajectories, states, 2 N), rows (x, v);
        float32 arrays converted, said in a Notice naming `what`."""
        narrow = [k for k in ("z", "x", "v", "t") if k in self.arrays and self.arrays[k].dtype == np.float32]
        if what and narrow:
            notice(f"{what}: float32 {', '.join(narrow)} converted to float64")
        if "z" in self.arrays:
            z = self.arrays["z"]
            return np.ascontiguousarray(z.reshape(z.shape[0], z.shape[1], -1), dtype=np.float64)
        x, v = self.arrays["x"], self.arrays["v"]
        return np.ascontiguousarray(np.concatenate([x.reshape(*x.shape[:2], -1), v.reshape(*v.shape[:2], -1)], 2),
                                    dtype=np.float64)

    def _csystem(self, what: str):
        """The constrained system the data are of (imp_csystem): meta 'system'
        (a built-in benchmark) or 'system_text' (a system file's text, whose
        `name` line; a different meta 'system' is refused by the library, as
        by the command line, naming both)."""
        text = self.meta.get("system_text")
        if not isinstance(text, str) and "system" not in self.meta:
            raise Error(f"{what}: constrained data need meta 'system' (a built-in system: pendulum-chain:N, "
                        "coupled-pendulums:N, magnet-pendulum, gyroscope, rotor) or 'system_text' (a system file's "
                        "text, see docs/chnn-systems.md)")
        cs = _lib.opaque("imp_csystem")
        check(lib.imp_csystem_from_meta(cs, json.dumps(self.meta).encode(), what.encode()))
        return cs

    def _dt(self) -> float:
        if "t" in self.arrays and self.arrays["t"].shape[0] > 1:
            return float(self.arrays["t"][1] - self.arrays["t"][0])
        return float(self.meta["dt"])

    def __repr__(self) -> str:
        shapes = ", ".join(f"{k}{tuple(v.shape)}" for k, v in self.arrays.items())
        return f"Dataset({self.kind}, system={self.meta.get('system')!r}, {shapes})"


def _data_path(data, what: str) -> str:
    if isinstance(data, Mapping):
        raise Error(f"{what}: a {type(data).__name__} of arrays; pass impulse.Dataset(arrays, meta) "
                    "(meta: dt, dim, ...: docs/data-format.md) or a .npz path")
    if not isinstance(data, (str, bytes, os.PathLike)):
        raise Error(f"{what}: expected an impulse.Dataset or a .npz path, got {type(data).__name__}")
    return os.fsdecode(os.fspath(data))


class _TempFile:
    """A dataset written to a temporary .npz for the library's validating
    loader; its messages name the argument (`what`), not the temporary file."""

    def __init__(self, data, what: str = "data"):
        self.owned = isinstance(data, Dataset)
        self.what = what
        if self.owned:
            fd, self.path = tempfile.mkstemp(suffix=".npz", prefix="impulse-")
            os.close(fd)
            data.save(self.path)
        else:
            self.path = _data_path(data, what)

    def check(self, status: int, data=None) -> None:
        """check(status) in Python's terms: the temporary file's name replaced
        by the argument's, a flat index by the array index, no CLI hints."""
        if status != 0 and self.owned:
            msg = lib.imp_last_error().decode("utf-8", "replace").replace(self.path, self.what)
            msg = msg.replace(f"{self.what}: {self.what}:", f"{self.what}:")
            msg = re.sub(r"; impulse import [^(]*?(?= \(see|$)", "", msg)
            m = re.search(r"(\w+): non-finite value (\S+) at flat index (\d+)", msg)
            if m and data is not None and m.group(1) in data.arrays:
                a = data.arrays[m.group(1)]
                if int(m.group(3)) < a.size:
                    idx = ", ".join(map(str, np.unravel_index(int(m.group(3)), a.shape)))
                    msg = msg.replace(m.group(0), f"{m.group(1)}[{idx}]: non-finite value {m.group(2)}")
            raise Error(msg)
        check(status)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        if self.owned:
            os.unlink(self.path)


def _as_dataset(data, what: str = "data") -> Dataset:
    return data if isinstance(data, Dataset) else Dataset.load(_data_path(data, what))


def _load_trajset(data, what: str = "data") -> _lib.Trajset:
    ts = _lib.Trajset()
    tf = _TempFile(data, what)
    with tf as p:
        tf.check(lib.imp_trajset_load(ctypes.byref(ts), os.fsencode(p)), data if tf.owned else None)
    if ts.widened_f32:
        narrow = [k for k, v in data.arrays.items() if v.dtype == np.float32] if tf.owned else []
        notice(f"{what}: " + (f"float32 {', '.join(narrow)}" if narrow else f"{ts.widened_f32} float32 arrays")
               + " converted to float64")
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
    st = lib.imp_flat_chnn_simulate(*args, None, None, None, None, *[ctypes.byref(i) for i in ints],
                                    ctypes.byref(dt_out), name)
    if st == _lib.ERR_NOT_FOUND and system_file is None:
        lib.imp_clear_error()
        raise Error(_lib.unknown("system", system, CONTACT_SYSTEMS + CONSTRAINED_SYSTEMS)
                    + "; or system_file=PATH, a system described in a file (docs/chnn-systems.md)")
    check(st)
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
        with open(system_file, encoding="utf-8") as f:
            meta["system_text"] = f.read()  # as the CLI: train, eval and rollout rebuild the system from it
    arrays = {"t": np.arange(T) * h, "z": traj, "energy": energy}
    if q is not None:
        arrays["q"] = q
    if rollout_start > 0:
        meta["rollout_start"] = rollout_start
        arrays["rollout_offset"] = offsets.astype(np.int64)
    return Dataset(arrays, meta)
