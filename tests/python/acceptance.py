"""Acceptance of the installed Python package (scripts/test-python.sh runs it
from outside the source tree): one model of each strand simulated, trained
with a callback and evaluated from numpy arrays."""
import os, sys, time
import impulse
import numpy as np

assert "site-packages" in impulse.__file__, f"not the installed package: {impulse.__file__}"
print(f"impulse {impulse.version} from {os.path.dirname(impulse.__file__)}, library {impulse.library_path}")

# CD-Lagrange strand: a bouncing ball built from numpy arrays
sim = impulse.simulate("bouncing-ball", restitution=0.8, noise=0.05, steps=200, seed=1)
arrays = {k: np.array(v) for k, v in sim.arrays.items()}          # plain numpy arrays
ball = impulse.Dataset(arrays, sim.meta)
losses = []
m = impulse.train("cdl", ball, epochs=30, seed=0, callback=lambda e, loss: losses.append(loss["loss"]))
assert len(losses) == 30 and losses[-1] < losses[0], losses
r = m.evaluate(ball)
print(f"cdl on the ball: loss {losses[0]:.3g} -> {losses[-1]:.3g}, rollout rmse {r['rmse']:.3g}")

# constrained strand
pend = impulse.simulate("pendulum-chain:1", trajectories=40, seed=0)
test = impulse.simulate("pendulum-chain:1", trajectories=5, seed=2, rollout_start=4)
closs = []
c = impulse.train("chnn", pend, epochs=5, chunks=40, batch=20, callback=lambda e, loss: closs.append(loss["loss"]))
ev = c.evaluate(test)
assert len(closs) == 5 and np.isfinite(ev["mean_geo_rel_err"])
print(f"chnn on pendulum-chain:1: loss {closs[0]:.3g} -> {closs[-1]:.3g}, "
      f"geometric-mean relative error {ev['mean_geo_rel_err']:.3g}")

# planar impact strand: identify (mu, eps) of a law from its own impulses
rng = np.random.default_rng(0)
n = 20
v_pre = np.column_stack([rng.uniform(-0.3, 0.3, n), rng.uniform(-1.0, -0.2, n), rng.uniform(-2, 2, n)])
mass, inertia = 0.0364, 0.0364 * 0.019209 ** 2
d, nrow = [1.0, 0.0, 0.015], [0.0, 1.0, 0.01]
minv = np.array([1 / mass, 1 / mass, 1 / inertia])
J = np.array([d, nrow])
W = np.broadcast_to(J @ np.diag(minv) @ J.T, (n, 2, 2))
u = v_pre @ J.T
P = impulse.impact_predict("ap-poisson", W, u, mu=0.3, eps=0.6)
v_post = v_pre + (P @ J) * minv
ident = impulse.impact_identify("ap-poisson", d, nrow, v_pre, v_post, P, mass, inertia)
assert np.all(ident[:, 2] < 1e-6 * np.linalg.norm(P, axis=1) + 1e-9), ident
irbP, err = impulse.impact_irb(d, nrow, v_pre, v_post, mass, inertia)
print(f"impact: {n} impulses of AP Poisson (mu 0.3, eps 0.6) re-identified, eps* median "
      f"{np.median(ident[:, 1]):.4f}; IRB error median {np.median(err):.3g} m/s")

# Ctrl-C: SIGINT from another thread during a long training; the run stops within one epoch and
# returns the best model so far
import signal, threading
seen, sent_at = [], []
def on_epoch(e, loss):
    seen.append((e, loss["loss"]))
    if e == 5:
        threading.Timer(0.05, lambda: (sent_at.append(len(seen)), os.kill(os.getpid(), signal.SIGINT))).start()
t0 = time.time()
m = impulse.train("cdl", ball, epochs=100000, seed=0, callback=on_epoch)
rep = m.report
assert m.interrupted and rep["end"] == "stopped", rep
assert rep["epochs_done"] <= sent_at[0] + 1, (sent_at, rep)
best = min(range(len(seen)), key=lambda i: seen[i][1]) + 1
assert rep["best_epoch"] == best and abs(rep["best_loss"] - seen[best - 1][1]) < 1e-12, (rep, seen)
r = m.evaluate(ball)
print(f"SIGINT after epoch {sent_at[0]}: stopped after epoch {rep['epochs_done']} ({time.time() - t0:.2f} s), "
      f"best model of epoch {rep['best_epoch']} (loss {rep['best_loss']:.4g}) returned, rollout rmse {r['rmse']:.3g}")
print("acceptance: ok")
