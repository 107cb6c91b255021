"""Python bindings of impulse (ctypes over libimpulse.so; numpy for arrays).

    import impulse
    impulse.simulate("bouncing-ball", "ball.npz", noise=0.2, restitution=0.7)
    impulse.train("cdl", "ball.npz", "cdl.npz", epochs=500)
    m = impulse.Model("cdl.npz")
    states, contact = m.rollout([10.0, 0.0], steps=500)
    m.evaluate("ball.npz")            # {'rmse': ..., 'rmse_code': ...}

The library is found through $IMPULSE_LIBRARY, then next to this package in
the build tree (../../build/libimpulse.so), then the system's loader path.
Errors raise impulse.Error with the library's one-line message.

OpenBLAS picks its kernels from the CPU model when it is loaded, and on
virtual CPUs with a generic model name it can fall back to SSE3 kernels
(2-3x slower). Unless OPENBLAS_CORETYPE is set already, importing this module
sets it from the CPU's flags, as the impulse command does; it takes effect
only if OpenBLAS is not loaded yet (import impulse before numpy to be sure).
impulse.blas_core() tells which kernels are in use.
"""
import ctypes
import ctypes.util
import os


def _suggest_coretype():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return None
    for flag, core in (("avx512f", "SkylakeX"), ("avx2", "Haswell"), ("avx", "Sandybridge")):
        if flag in flags:
            return core
    return None


if "OPENBLAS_CORETYPE" not in os.environ and _suggest_coretype():
    os.environ["OPENBLAS_CORETYPE"] = _suggest_coretype()

import numpy as np  # noqa: E402  (after OPENBLAS_CORETYPE: numpy may load OpenBLAS)

__all__ = ["Error", "Model", "simulate", "train", "library", "blas_core"]


class Error(RuntimeError):
    pass


def _load():
    candidates = []
    if os.environ.get("IMPULSE_LIBRARY"):
        candidates.append(os.environ["IMPULSE_LIBRARY"])
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(here, "..", "..", "build", "libimpulse.so"))
    found = ctypes.util.find_library("impulse")
    if found:
        candidates.append(found)
    for path in candidates:
        if os.path.exists(path) or path == found:
            return ctypes.CDLL(path)
    raise Error("libimpulse.so not found: set IMPULSE_LIBRARY or build with scripts/build.sh")


library = _load()
_dp = np.ctypeslib.ndpointer(np.float64, flags="C_CONTIGUOUS")
library.imp_last_error.restype = ctypes.c_char_p
library.imp_blas_corename.restype = ctypes.c_char_p


def blas_core():
    """The OpenBLAS kernel family in use (e.g. 'SkylakeX'; 'Prescott' means SSE3 only)."""
    return library.imp_blas_corename().decode()
library.imp_flat_simulate.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_double,
                                      ctypes.c_double, ctypes.c_double, ctypes.c_ulonglong, ctypes.c_char_p]
library.imp_flat_train.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_double,
                                   ctypes.c_double, ctypes.c_int, ctypes.c_ulonglong, ctypes.c_char_p]
library.imp_model_load.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
library.imp_model_free.argtypes = [ctypes.c_void_p]
library.imp_model_free.restype = None
library.imp_model_sizes.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
library.imp_model_rollout.argtypes = [ctypes.c_void_p, _dp, ctypes.c_int, ctypes.c_void_p, _dp, _dp]
library.imp_model_potential_grad.argtypes = [ctypes.c_void_p, _dp, ctypes.c_int, _dp]
library.imp_flat_evaluate.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_double),
                                      ctypes.POINTER(ctypes.c_double)]


def _check(status):
    if status != 0:
        raise Error(library.imp_last_error().decode("utf-8", "replace"))


def simulate(system, out_path, trajectories=1, steps=-1, dt=-1.0, noise=0.0, restitution=1.0, seed=0):
    """Simulate a contact system (pendulum, bouncing-ball, newtons-cradle) into
    out_path and return the loaded numpy archive."""
    _check(library.imp_flat_simulate(system.encode(), trajectories, steps, dt, noise, restitution, seed,
                                     os.fsencode(out_path)))
    return np.load(out_path)


def train(model, data_path, out_path, epochs=0, lr=-1.0, l2=-1.0, touch=True, seed=0):
    """Train cdl, vin, resnet or resnet-contact with the reference-code settings."""
    _check(library.imp_flat_train(model.encode(), os.fsencode(data_path), epochs, lr, l2, int(touch), seed,
                                  os.fsencode(out_path)))


class Model:
    """A trained model of the CD-Lagrange strand, loaded from a checkpoint."""

    def __init__(self, path):
        self._h = ctypes.c_void_p()
        _check(library.imp_model_load(ctypes.byref(self._h), os.fsencode(path)))
        D, K = ctypes.c_int(), ctypes.c_int()
        _check(library.imp_model_sizes(self._h, ctypes.byref(D), ctypes.byref(K)))
        self.D, self.K = D.value, K.value

    def close(self):
        if self._h:
            library.imp_model_free(self._h)
            self._h = ctypes.c_void_p()

    __del__ = close

    def rollout(self, x0, steps, gates=None):
        """Predict `steps` samples from x0 = (q, qdot); returns (states (steps, 2D), contact (steps, K))."""
        x0 = np.ascontiguousarray(x0, dtype=np.float64)
        if x0.shape != (2 * self.D,):
            raise Error(f"x0: shape {x0.shape}, the model expects ({2 * self.D},)")
        states = np.empty((steps, 2 * self.D))
        contact = np.empty((steps, self.K))
        g = None
        if gates is not None:
            g = np.ascontiguousarray(gates, dtype=np.float64)
            if g.shape != (steps, self.K):
                raise Error(f"gates: shape {g.shape}, want ({steps}, {self.K})")
            g = g.ctypes.data_as(ctypes.c_void_p)
        _check(library.imp_model_rollout(self._h, x0, steps, g, states, contact))
        return states, contact

    def potential_grad(self, q):
        """dU/dq of a cdl/vin model at configurations q (n, D)."""
        q = np.ascontiguousarray(np.atleast_2d(q), dtype=np.float64)
        out = np.empty_like(q)
        _check(library.imp_model_potential_grad(self._h, q, q.shape[0], out))
        return out

    def evaluate(self, data_path):
        r, rc = ctypes.c_double(), ctypes.c_double()
        _check(library.imp_flat_evaluate(self._h, os.fsencode(data_path), ctypes.byref(r), ctypes.byref(rc)))
        return {"rmse": r.value, "rmse_code": rc.value}
