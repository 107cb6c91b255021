"""The Python package end to end (ctest runs it with /usr/bin/python3 and
IMPULSE_LIBRARY set to the build's libimpulse; the package comes from python/)."""
import json, os, sys, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import impulse  # before numpy: it sets OPENBLAS_CORETYPE / OPENBLAS_NUM_THREADS before OpenBLAS is loaded
import numpy as np

from checks import check, done  # noqa: E402

def raises(fn, needle, what):
    try:
        fn()
    except impulse.Error as e:
        check(needle in str(e), f"{what}: message names '{needle}' ({e})")
        return
    check(False, f"{what}: no error raised")

with open("/proc/cpuinfo") as f:
    has_avx2 = " avx2" in f.read()
check(impulse.blas_core() and (impulse.blas_core() != "Prescott" or not has_avx2),
      "OpenBLAS kernels match the CPU (%s)" % impulse.blas_core())
check(os.environ.get("OPENBLAS_NUM_THREADS") == "1", "OpenBLAS single-threaded in the binding")
d = tempfile.mkdtemp()

# --- contact strand, in memory
ball = impulse.simulate("bouncing-ball", steps=80, noise=0.05, restitution=0.8, seed=2)
check(ball["q"].shape == (1, 80, 1) and ball.kind == "contact", "simulated shape")
check(abs(ball.meta["restitution"] - 0.8) < 1e-15, "meta restitution")
ball.save(os.path.join(d, "b.npz"))
again = impulse.Dataset.load(os.path.join(d, "b.npz"))
check(all(np.array_equal(again[k], ball[k]) for k in ball.arrays) and again.meta == ball.meta, "npz round trip")
seen = []
m = impulse.train("cdl", ball, epochs=3, callback=lambda e, loss: seen.append((e, loss["loss"])))
check([e for e, _ in seen] == [1, 2, 3] and all(np.isfinite(t) for _, t in seen), f"callback every epoch {seen}")
check(len(m.history) == 3 and set(m.history[0]) >= {"epoch", "loss", "state", "contact", "l2"}, "loss history")
x0 = ball.initial_states()
states, contact = m.rollout(x0[0], 80)
check(states.shape == (80, 2) and np.all(np.isfinite(states)), "rollout")
check(np.array_equal(states[0], x0[0]), "rollout starts at x0")
sb, cb = m.rollout(np.stack([x0[0], x0[0] + [0.5, 0.0]]), 80)
check(sb.shape == (2, 80, 2) and np.array_equal(sb[0], states), "batched rollout, first = single")
s1, c1 = m.rollout(x0[0], 80, single_contact=True)
check(s1.shape == states.shape and np.all(np.isfinite(s1)), "rollout with the contact net in single")
check(np.array_equal(c1, contact) == np.array_equal(s1, states), "single contact net: states differ only with decisions")
s2, c2 = m.rollout(x0[0], 80, single_potential=True)
err = np.abs(s2 - states).max()
check(0 < err <= 1e-4 * np.abs(states).max() and np.array_equal(c2, contact),
      f"rollout with the potential in single: within float rounding of double ({err:.3g}), same decisions")
g = m.potential_grad(np.linspace(0, 10, 5)[:, None])
check(g.shape == (5, 1), "potential gradient")
r = m.evaluate(ball)
for key in ("rmse", "rmse_code", "energy_drift", "contact_timing_s", "contacts_true", "trajectories", "steps"):
    check(key in r, f"evaluate reports {key}")
check(r["rmse"] > 0 and r["trajectories"] == 1 and r["steps"] == 80, "evaluate values")
m.save(os.path.join(d, "m.npz"))
m2 = impulse.load_model(os.path.join(d, "m.npz"))
check(np.array_equal(m2.rollout(x0[0], 80)[0], states), "saved model rolls out identically")
for model in ("vin", "resnet", "resnet-contact"):
    mm = impulse.train(model, ball, epochs=1, hidden=16)
    check(np.all(np.isfinite(mm.rollout(x0[0], 10)[0])), f"{model} trains")
raises(lambda: impulse.simulate("no-such-system"), "no-such-system", "unknown system")
raises(lambda: m.rollout([1.0], 5), "x0", "wrong x0 shape")
raises(lambda: impulse.train("nope", ball), "nope", "unknown model")
raises(lambda: impulse.train("cdl", ball, epochs=1, contact_precision="half"), "half", "bad precision")
bad = impulse.Dataset(dict(ball.arrays, q=np.full_like(ball["q"], np.nan)), ball.meta)
raises(lambda: impulse.train("cdl", bad, epochs=1), "q", "NaN in the data")
# the impact law from the data (impact_law="auto"): paper on the event-driven simulator's labels,
# newton on a touch sensor's (compliant contact)
soft = impulse.simulate("compliant-ball", steps=120, restitution=0.7)
for data, law in ((ball, 0), (soft, 1)):
    impulse.train("cdl", data, epochs=1, hidden=8).save(os.path.join(d, "law.npz"))
    saved = json.loads(str(np.load(os.path.join(d, "law.npz"))["meta"]))
    check(saved.get("impact_law") == law, f"{data.meta.get('system')}: impact law {saved.get('impact_law')}")
raises(lambda: impulse.train("cdl", ball, epochs=1, impact_law="sideways"), "impact_law", "bad impact law")
raises(lambda: impulse.train("resnet", ball, epochs=1, impact_law="newton"), "cdl only", "impact law on resnet")
# impacts at their event time: in the checkpoint, and the loaded model rolls out as trained
ev = impulse.train("cdl", ball, epochs=2, hidden=8, impact_timing="event")
ev.save(os.path.join(d, "event.npz"))
check(json.loads(str(np.load(os.path.join(d, "event.npz"))["meta"])).get("impact_timing") == "event", "event timing saved")
check(np.array_equal(impulse.load_model(os.path.join(d, "event.npz")).rollout(x0[0], 40)[0], ev.rollout(x0[0], 40)[0]),
      "event-timing model rolls out identically after loading")
raises(lambda: impulse.train("cdl", ball, epochs=1, impact_timing="later"), "impact_timing", "bad impact timing")
raises(lambda: impulse.train("resnet", ball, epochs=1, impact_timing="event"), "cdl only", "impact timing on resnet")
raises(lambda: impulse.train("cdl", ball, epochs=1, impact_timing="event", impact_law="paper"), "impact_law",
       "impact law with event timing")
# the law refit (cdl): each pair's mu searched on the training loss after the last epoch
pts = impulse.simulate("bouncing-points:2", trajectories=2, steps=120, seed=4)
lr_ = impulse.train("cdl", pts, epochs=2, hidden=8, friction=True, impact_timing="event", law_refit=True,
                    law_refit_grid=6)
rf = lr_.report.get("law_refit")
check(rf is not None and len(rf["pairs"]) == len(pts["contact_restitution"]) and rf["loss_after"] <= rf["loss_before"],
      f"law refit reported ({rf and rf['loss_before']} -> {rf and rf['loss_after']})")
check(all(p["mu_after"] is not None and p["e_after"] == p["e_before"] for p in rf["pairs"]), "law refit: mu only by default")
check(rf["mode"] == "plateau" and rf["horizon"] == 10 and rf["robust"] is False, f"law refit mode ({rf['mode']})")
check(all(p["plateau"] is None or (p["plateau"] == (p["mu_grad"] == 0.0)) for p in rf["pairs"])
      and all(p["mu_after"] == p["mu_before"] for p in rf["pairs"] if p["plateau"] is False),
      "law refit: a pair off the plateau keeps its mu")
# the law identification: every pair's e and mu on one-step windows, robust loss
li = impulse.train("cdl", pts, epochs=2, hidden=8, friction=True, impact_timing="event", law_identify=True,
                   law_refit_grid=6)
ri = li.report.get("law_refit")
check(ri is not None and ri["mode"] == "identify" and ri["horizon"] == 1 and ri["robust"] is True
      and ri["loss_after"] <= ri["loss_before"], f"law identification reported ({ri and ri.get('mode')})")
raises(lambda: impulse.train("cdl", pts, epochs=1, hidden=8, friction=True, law_identify=True, law_refit=True),
       "give one", "law_identify with law_refit")
raises(lambda: impulse.train("cdl", pts, epochs=1, hidden=8, friction=True, law_refit_all=True), "law_refit=True",
       "law_refit_all without law_refit")
check("law_refit" not in impulse.train("cdl", pts, epochs=1, hidden=8, friction=True).report, "no law refit by default")
raises(lambda: impulse.train("cdl", pts, epochs=1, hidden=8, friction=True, law_refit=True, law_refit_grid=2),
       "law_refit.grid", "law refit: bad grid")
raises(lambda: impulse.train("cdl", pts, epochs=1, hidden=8, friction=True, law_refit=True, law_refit_mu_max=0),
       "law_refit.mu_max", "law refit: bad mu_max")
raises(lambda: impulse.train("cdl", pts, epochs=1, hidden=8, friction=True, law_refit_grid=8), "law_refit=True",
       "law refit setting without law_refit")
raises(lambda: impulse.train("resnet", pts, epochs=1, law_refit=True), "cdl only", "law refit on resnet")
raises(lambda: impulse.train("cdl", pts, epochs=1, hidden=8, law_refit=True), "learns no friction",
       "law refit of mu without friction")
rb = impulse.train("resnet", ball, epochs=1)
rb.save(os.path.join(d, "rb.npz"))
check(isinstance(rb, impulse.Model) and isinstance(impulse.load_model(os.path.join(d, "rb.npz")), impulse.Model),
      "resnet on contact data: the CD-Lagrange strand's, and its checkpoint too")
# the learning-rate schedule from the data (lr_schedule="auto"): constant on the event-driven
# simulator's data, cosine (annealed from lr) on the compliant contact's, as asked otherwise
for data, sched, model in ((ball, "auto", "cdl"), (soft, "auto", "cdl"), (soft, "auto", "resnet"),
                           (soft, "constant", "cdl"), (ball, "cosine", "resnet-contact")):
    mm = impulse.train(model, data, epochs=4, hidden=8, lr_schedule=sched)
    lrs = [h["lr"] for h in mm.history]
    annealed = sched == "cosine" or (sched == "auto" and data is soft)
    check(lrs[0] == 1e-2 and (all(a > b > 0 for a, b in zip(lrs, lrs[1:])) if annealed else set(lrs) == {1e-2}),
          f"{data.meta.get('system')} {model} lr_schedule={sched}: rates {lrs}")
raises(lambda: impulse.train("cdl", ball, epochs=1, lr_schedule="linear"), "linear", "bad lr schedule")

# --- constrained strand
pend = impulse.simulate("pendulum-chain:1", trajectories=8, seed=0)
check(pend["z"].shape == (8, 100, 2, 1, 2) and pend.kind == "constrained", "constrained simulate")
check(np.max(np.abs(pend["energy"] - pend["energy"][:, :1])) < 1e-6, "energy conserved by the simulator")
test = impulse.simulate("pendulum-chain:1", trajectories=3, seed=2, rollout_start=4)
losses = []
for model in impulse.CONSTRAINED_MODELS:
    cm = impulse.train(model, pend, epochs=2, hidden=16, chunks=8, batch=8, threads=1,
                       callback=lambda e, loss: losses.append(loss["loss"]))
    ev = cm.evaluate(test, steps=20)
    check(np.isfinite(ev["mean_geo_rel_err"]) and ev["rel_err"].shape == (3, ev["steps"]), f"{model} evaluates")
check(len(losses) == 2 * len(impulse.CONSTRAINED_MODELS) and all(np.isfinite(losses)), "constrained callbacks")
check(cm.kind == "resnet" and isinstance(cm, impulse.ConstrainedModel), "resnet on constrained data: the constrained family's")
cm.save(os.path.join(d, "c.npz"))
cl = impulse.load_model(os.path.join(d, "c.npz"))
check(isinstance(cl, impulse.ConstrainedModel) and cl.kind == "resnet" and np.array_equal(cl.params, cm.params),
      "constrained checkpoint (resnet, dispatched by its format)")
# fast windows (the rotor's Euler angles near gimbal lock): RK4 substeps, reported
rot = impulse.simulate("rotor", trajectories=100, seed=0)
sub = [impulse.train("hnn", rot, epochs=1, hidden=8, chunks=100, batch=100, threads=1, max_substeps=ms).report
       for ms in (None, 1)]
check(sub[0]["substepped_windows"] > 0 and sub[0]["max_substeps"] > 1, f"rotor windows substepped ({sub[0]})")
check(sub[1]["substepped_windows"] == 0 and sub[1]["max_substeps"] == 1, f"max_substeps=1 turns them off ({sub[1]})")
chnn = impulse.train("chnn", pend, epochs=1, hidden=16, chunks=8, batch=8, threads=1)
y0 = pend.initial_states()[:2]
roll = chnn.rollout(y0, 5, 0.03)
check(roll.shape == (2, 6, 4) and np.array_equal(roll[:, 0], y0), "constrained batched rollout")
raises(lambda: impulse.train("chnn", ball, epochs=1), "constrained", "chnn on contact data")
# constrained systems with contacts (issue #25): e and mu learned per contact, by default
cg = impulse.simulate("chain-ground:3", trajectories=4, seed=0)
cgm = impulse.train("clnn", cg, epochs=1, hidden=16, chunks=4, batch=4, threads=1)
cc = cgm.contacts
check(len(cc) == 3 and all(0 < c["e"] < 1 and c["mu"] > 0 for c in cc) and cc[0]["mu_declared"] == 0.5,
      f"clnn learns e and mu per contact ({cc})")
cgm.save(os.path.join(d, "cg.npz"))
check(impulse.load_model(os.path.join(d, "cg.npz")).contacts == cc, "contact checkpoint")
check(impulse.train("clnn", cg, epochs=1, hidden=16, chunks=4, batch=4, threads=1, contact=False).contacts == [],
      "contact=False: the flow alone")
# contact substeps: the windows near a contact with R RK4 substeps per sample, reported
rs = [impulse.train("clnn", cg, epochs=1, hidden=16, chunks=4, batch=4, threads=1, contact_substeps=r).report
      for r in (4, 1)]
check(rs[0]["contact_substeps"] == 4 and rs[0]["max_substeps"] == (4 if rs[0]["contact_windows"] else 1)
      and rs[1]["contact_substeps"] == 1 and rs[1]["contact_windows"] == 0, f"contact_substeps ({rs})")
roll = cgm.rollout(cg.initial_states()[:1], 5, 0.01)
check(roll.shape == (1, 6, 12) and np.all(np.isfinite(roll)), "rollout with contact")
raises(lambda: impulse.train("clnn", pend, epochs=1, contact=True), "contact", "contact on a system without contacts")

# --- planar impact
W = np.array([[2.0, 0.3], [0.3, 1.5]])
u = np.array([0.5, -1.0])
for law in impulse.IMPACT_LAWS:
    P = impulse.impact_predict(law, np.stack([W] * 4), np.stack([u] * 4), mu=0.3, eps=[0.0, 0.3, 0.6, 0.9])
    check(P.shape == (4, 2) and np.all(np.isfinite(P)) and np.all(P[:, 1] > 0), f"{law} predicts")
    one = impulse.impact_predict(law, W, u, mu=0.3, eps=0.3)
    check(np.array_equal(one, P[1]), f"{law}: one impact equals the batch's")
Pn = impulse.impact_predict("ap-poisson", W, [0.0, -1.0], mu=0.0, eps=0.5)
check(abs(Pn[1] - 1.5 / 1.5 * 1.0) < 1e-12 and abs(Pn[0]) < 1e-12, "frictionless central impact: Pn = (1+e) m_eff |un|")
raises(lambda: impulse.impact_predict("mirtich", W, u, mu=0.3, eps=2.0), "eps", "eps out of range")
Pst, st = impulse.impact_predict("mirtich", np.stack([W, W]), np.array([u, [0.5, 1.0]]), mu=0.3, eps=0.5,
                                 return_status=True)
check(list(st) == [0, 1] and np.all(np.isfinite(Pst[0])) and np.all(np.isnan(Pst[1])), f"per-impact status {st}")
raises(lambda: impulse.impact_predict("mirtich", np.stack([W, W]), np.array([u, [0.5, 1.0]]), mu=0.3, eps=0.5),
       "1", "a non-impacting impact raises, naming it")
dvec, nvec = [1.0, 0.0, 0.01], [0.0, 1.0, 0.02]
vpre = np.array([[0.1, -0.5, 0.0], [0.0, -0.3, 1.0]])
vpost = np.array([[0.08, 0.3, 0.1], [0.01, 0.2, 0.5]])
P, err = impulse.impact_irb(dvec, nvec, vpre, vpost, mass=0.0364, inertia=0.0364 * 0.019209 ** 2)
check(P.shape == (2, 2) and np.all(err >= 0), "IRB bound")
ident = impulse.impact_identify("ap-poisson", dvec, nvec, vpre, vpost, P, mass=0.0364, inertia=0.0364 * 0.019209 ** 2)
check(ident.shape == (2, 3) and np.all((ident[:, 1] >= 0) & (ident[:, 1] <= 1)), "identification")
# the batch calls give, impact by impact, exactly the single-impact C functions' results
import ctypes
from impulse import _lib
rng = np.random.default_rng(7)
k, mass, inertia = 30, 0.0364, 0.0364 * 0.019209 ** 2
kg = np.sqrt(inertia / mass)
dk = np.column_stack([np.ones(k), np.zeros(k), rng.uniform(0.025, 0.035, k)])
nk = np.column_stack([np.zeros(k), np.ones(k), rng.uniform(-0.012, 0.012, k)])
vprek = np.column_stack([rng.uniform(-0.5, 0.5, k), rng.uniform(-2.9, -0.5, k), rng.uniform(-14, 14, k)])
vpostk = np.column_stack([vprek[:, 0] + rng.uniform(-1, 1, k), rng.uniform(0.5, 2.5, k), rng.uniform(-30, 30, k)])
vprek[3, 1] = 1.0          # impact 3 moves away from the plane
Ptk = rng.uniform([-0.01, 0.05], [0.01, 0.2], (k, 2))
Ptk[5, 0] = np.nan         # impact 5: no target
for metric in ("velocity", "momentum"):
    Pb, eb, sb = impulse.impact_irb(dk, nk, vprek, vpostk, mass, inertia, metric=metric, return_status=True)
    same = True
    for i in range(k):
        c, Q, act = _lib.Contact(), np.empty(2), ctypes.c_int()
        st = lib_st = impulse.lib.imp_contact_make(ctypes.byref(c), _lib.ptr(dk[i]), _lib.ptr(nk[i]), mass, inertia,
                                                   _lib.ptr(vprek[i]), _lib.ptr(vpostk[i]))
        st = st or impulse.lib.imp_impact_irb(ctypes.byref(c), kg, 0 if metric == "velocity" else 1, _lib.ptr(Q),
                                              ctypes.byref(act))
        if st:
            same &= sb[i] != 0 and bool(np.all(np.isnan(Pb[i]))) and bool(np.isnan(eb[i]))
        else:
            same &= sb[i] == 0 and Pb[i, 0] == Q[0] and Pb[i, 1] == Q[1] and \
                eb[i] == impulse.lib.imp_contact_impulse_error(ctypes.byref(c), _lib.ptr(Q), kg)
    check(same and list(np.nonzero(sb)[0]) == [3] and sb[3] == 1, f"IRB batch ({metric}) == single calls, status {sb}")
raises(lambda: impulse.impact_irb(dk, nk, vprek, vpostk, mass, inertia), "impact 3", "IRB: a non-impacting impact raises")
idb, sid = impulse.impact_identify("wang-mason", dk, nk, vprek, None, Ptk, mass, inertia, grid=11, return_status=True)
same = True
opt = impulse.lib.imp_ident_options_default()
opt.grid = 11
for i in range(k):
    c, res = _lib.Contact(), ctypes.c_double()
    lw = impulse.impact._law("wang-mason", 0.0, 0.0)
    st = impulse.lib.imp_contact_make(ctypes.byref(c), _lib.ptr(dk[i]), _lib.ptr(nk[i]), mass, inertia,
                                      _lib.ptr(vprek[i]), None)
    st = st or impulse.lib.imp_impact_identify_one(ctypes.byref(lw), ctypes.byref(c), _lib.ptr(Ptk[i]),
                                                   ctypes.byref(opt), ctypes.byref(res))
    if st:
        same &= sid[i] != 0 and bool(np.all(np.isnan(idb[i])))
    else:
        same &= sid[i] == 0 and idb[i, 0] == lw.mu and idb[i, 1] == lw.eps and idb[i, 2] == res.value
impulse.lib.imp_clear_error()
check(same and list(np.nonzero(sid)[0]) == [3, 5] and list(sid[[3, 5]]) == [1, 2],
      f"identification batch == single calls, status {sid}")
raises(lambda: impulse.impact_identify("wang-mason", dk, nk, vprek, None, Ptk, mass, inertia, grid=11), "impact 3",
       "identification: a failing impact raises, naming it")
# not contiguous (Fortran order, a strided view): the same numbers
Pf, ef, _ = impulse.impact_irb(np.asfortranarray(dk), nk, np.hstack([vprek, vprek])[:, :3],
                               np.asfortranarray(vpostk), mass, inertia, return_status=True)
Pb, eb, _ = impulse.impact_irb(dk, nk, vprek, vpostk, mass, inertia, return_status=True)
check(np.array_equal(Pf, Pb, equal_nan=True) and np.array_equal(ef, eb, equal_nan=True),
      "IRB of Fortran-ordered inputs equals the C-ordered")
raises(lambda: impulse.impact_irb(dk[:4], nk, vprek, vpostk, mass, inertia), "d: shape", "IRB: mismatched rows")
_, (dv, vv) = impulse.impact._rows3(None, d=dk, v_pre=vprek)
_, (dcopy,) = impulse.impact._rows3(k, d=np.asfortranarray(dk))
check(np.shares_memory(dv, dk) and np.shares_memory(vv, vprek) and not np.shares_memory(dcopy, dk),
      "C-contiguous float64 rows reach the C call without a copy (others are copied)")
rng = np.random.default_rng(0)
x = rng.normal(size=(40, 2))
gp = impulse.GaussianProcess(x, np.sin(x[:, 0]))
mean, var = gp.predict(x[:5])
check(np.max(np.abs(mean - np.sin(x[:5, 0]))) < 1e-2 and np.all(var >= 0), "GP interpolates")

# --- stopping: the callback, Ctrl-C (SIGINT) within one epoch, the best model back
import signal, threading, json
def params_of(model, path):
    model.save(path)
    return np.load(path)["params"]
stopper = impulse.train("cdl", ball, epochs=40, seed=3, callback=lambda e, loss: e >= 4)
check(stopper.report["end"] == "stopped" and stopper.report["epochs_done"] == 4 and len(stopper.history) == 4,
      f"callback stops after its epoch ({stopper.report})")
best = stopper.report["best_epoch"]
if best >= 1:
    ref = impulse.train("cdl", ball, epochs=best, seed=3)
    check(np.array_equal(params_of(stopper, os.path.join(d, "s.npz")), params_of(ref, os.path.join(d, "r.npz"))),
          f"a stopped run returns the best epoch's ({best}) parameters")
seen, sent = [], []
def sigint_after_epoch_3(e, loss):
    seen.append(e)
    if e == 3:  # Ctrl-C from another thread while epoch 4 runs
        threading.Timer(0.0, lambda: (sent.append(len(seen)), os.kill(os.getpid(), signal.SIGINT))).start()
logp = os.path.join(d, "run.log.jsonl")
intr = impulse.train("cdl", ball, epochs=500, seed=3, callback=sigint_after_epoch_3, log=logp)
check(intr.interrupted and intr.report["end"] == "stopped", f"SIGINT stops training ({intr.report})")
check(sent and intr.report["epochs_done"] <= sent[0] + 1, f"stopped within one epoch of the signal: {sent} {intr.report}")
check(signal.getsignal(signal.SIGINT) is signal.default_int_handler, "the SIGINT handler is restored")
lines = [json.loads(l) for l in open(logp)]
check(len(lines) == intr.report["epochs_done"] and {"epoch", "loss", "state", "lr", "best_epoch"} <= set(lines[0]),
      "the JSON-lines log has one line per epoch")
check(np.array_equal(intr.loss_history, [h["loss"] for h in intr.history]), "loss_history = the callback's totals")
cstop = impulse.train("chnn", pend, epochs=30, hidden=16, chunks=8, batch=8, threads=1, callback=lambda e, l: e >= 2)
check(cstop.report["end"] == "stopped" and cstop.report["epochs_done"] == 2 and "loss" in cstop.history[0],
      f"constrained training stops ({cstop.report}, {cstop.history[:1]})")
full = impulse.train("cdl", ball, epochs=6, seed=1)
part = impulse.train("cdl", ball, epochs=6, seed=1, state=os.path.join(d, "st.npz"), checkpoint_every=1,
                     callback=lambda e, loss: e >= 3)
rest = impulse.train("cdl", ball, epochs=6, seed=1, resume=os.path.join(d, "st.npz"))
check(rest.report["resumed_at"] == 3 and np.array_equal(params_of(full, os.path.join(d, "f.npz")),
                                                         params_of(rest, os.path.join(d, "g.npz"))),
      f"resume continues bit-identically ({rest.report})")
# which model a finished run keeps: the best epoch's by default, the last with keep="last"
check(full.report["kept_epoch"] == full.report["best_epoch"] and full.report["far_above_best"] in (False, True),
      f"a finished run keeps its best epoch ({full.report})")
last = impulse.train("cdl", ball, epochs=6, seed=1, keep="last")
check(last.report["kept_epoch"] == 6, f"keep='last' keeps epoch 6 ({last.report})")
# a resumed run's log: the lines of epochs after the state's are dropped, not repeated
logr = os.path.join(d, "r.log.jsonl")
impulse.train("cdl", ball, epochs=6, seed=1, state=os.path.join(d, "st2.npz"), checkpoint_every=1, log=logr,
              callback=lambda e, loss: e >= 3)
with open(logr, "a") as f:  # epoch 4 logged, then killed before its state was written
    f.write(json.dumps({"epoch": 4, "loss": 1.0}) + "\n" + '{"epoch": 5, "lo')
impulse.train("cdl", ball, epochs=6, seed=1, resume=os.path.join(d, "st2.npz"), log=logr)
check([json.loads(l)["epoch"] for l in open(logr)] == [1, 2, 3, 4, 5, 6], "the resumed log has epochs 1..6 once each")
# disks (sphere pairs): simulate, the format's kinds and radii, train with friction, e and mu per contact
disks = impulse.simulate("bouncing-disks:3", trajectories=2, steps=60, seed=2)
kinds, radii = disks.arrays["contact_kinds"], disks.arrays["radii"]
check(list(kinds) == [0] * 12 + [1] * 3 and radii.shape == (3,) and np.all(radii > 0), "bouncing-disks:3 arrays")
dm = impulse.train("cdl", disks, epochs=1, seed=1, friction=True)
dev = dm.evaluate(disks)
check(len(dev["restitution"]) == 15 and len(dev["friction"]) == 15 and np.isfinite(dev["rmse"]),
      "bouncing-disks: e and mu per contact")
done()
