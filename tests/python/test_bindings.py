"""The Python bindings end to end (run by ctest with /usr/bin/python3)."""
import os, sys, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import impulse  # before numpy: it sets OPENBLAS_CORETYPE before OpenBLAS is loaded
import numpy as np

failed = passed = 0
def check(cond, what):
    global failed, passed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAILED:", what)

with open("/proc/cpuinfo") as f:
    has_avx2 = " avx2" in f.read()
check(impulse.blas_core() and (impulse.blas_core() != "Prescott" or not has_avx2),
      "OpenBLAS kernels match the CPU (%s)" % impulse.blas_core())

d = tempfile.mkdtemp()
data = impulse.simulate("bouncing-ball", os.path.join(d, "b.npz"), steps=80, noise=0.05, restitution=0.8, seed=2)
check(data["q"].shape == (1, 80, 1), "simulated shape")
impulse.train("cdl", os.path.join(d, "b.npz"), os.path.join(d, "m.npz"), epochs=2)
m = impulse.Model(os.path.join(d, "m.npz"))
states, contact = m.rollout(data["q_clean"][0, 0].tolist() + data["qdot_clean"][0, 0].tolist(), 80)
check(states.shape == (80, 2) and np.all(np.isfinite(states)), "rollout")
check(np.allclose(states[0], [data["q_clean"][0, 0, 0], data["qdot_clean"][0, 0, 0]]), "rollout starts at x0")
g = m.potential_grad(np.linspace(0, 10, 5)[:, None])
check(g.shape == (5, 1), "potential gradient")
r = m.evaluate(os.path.join(d, "b.npz"))
check(r["rmse"] >= 0 and r["rmse_code"] >= r["rmse"] * 0, "evaluate")
try:
    impulse.simulate("no-such-system", os.path.join(d, "x.npz"))
    check(False, "unknown system raises")
except impulse.Error as e:
    check("no-such-system" in str(e), "error message names the system")
try:
    m.rollout([1.0], 5)
    check(False, "wrong x0 shape raises")
except impulse.Error:
    check(True, "")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
