"""The Python bindings of the contact module, the rigid-body strand and the
cube reproduction (impulse.contacts, impulse.rigid, sweep_plan("cube")):
struct mirrors against the C compiler's sizeof/offsetof, known physics
(a frictionless point on a plane leaves with -e u; enough friction sticks),
reverse passes against finite differences, box-toss files against the
command line, and the cube plan against `impulse reproduce cube --plan`
(ctest; IMPULSE_CLI is the tool)."""
import ctypes, os, shutil, subprocess, sys, tempfile
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
import impulse
from impulse import _rigid_lib
import numpy as np

cli = os.environ["IMPULSE_CLI"]
d = tempfile.mkdtemp()
p = lambda name: os.path.join(d, name)  # noqa: E731
import checks  # noqa: E402
from checks import check  # noqa: E402

checks.verbose = True


def raises(fn, want, what):
    try:
        fn()
        check(False, f"{what}: no error")
    except impulse.Error as e:
        check(want in str(e), f"{what}: {e}")


def run(*args):
    subprocess.run([cli, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ)


# ---- the ctypes mirrors have the C structs' sizes and field offsets
cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
check(cc is not None, "a C compiler to compare the struct mirrors with")
if cc:
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "impulse/contact.h"',
             '#include "impulse/rigid_model.h"', '#include "impulse/rigid_models.h"', '#include "impulse/sweep.h"', '#include "impulse/constrained_contact.h"',
             "int main(void) {"]
    want = []
    for cname, cls in _rigid_lib.MIRRORS.items():
        lines.append(f'printf("%zu\\n", sizeof({cname}));')
        want.append((f"sizeof({cname})", ctypes.sizeof(cls)))
        for f, _ in cls._fields_:
            cf = f.rstrip("_")
            lines.append(f'printf("%zu\\n", offsetof({cname}, {cf}));')
            want.append((f"offsetof({cname}, {cf})", getattr(cls, f).offset))
    lines.append("return 0; }")
    with open(p("abi.c"), "w") as f:
        f.write("\n".join(lines))
    subprocess.run([cc, "-std=c11", "-I", os.path.join(here, "..", "..", "include"), p("abi.c"), "-o", p("abi")],
                   check=True)
    got = [int(x) for x in subprocess.run([p("abi")], check=True, capture_output=True, text=True).stdout.split()]
    bad = [f"{w} C {g} Python {v}" for (w, v), g in zip(want, got) if g != v]
    check(len(got) == len(want) and not bad, f"{len(_rigid_lib.MIRRORS)} struct mirrors, {len(want)} sizes and "
          f"offsets as the C compiler's" + (": " + "; ".join(bad[:5]) if bad else ""))

# ---- contact module: a frictionless point on a plane leaves with -e u
pt = impulse.ContactModel(2, bodies=[{"kind": "point", "mass": 2.0}],
                          candidates=[{"kind": "plane", "body_b": 0, "normal": [0, 1], "offset": 0.0, "e": 0.5}])
q, v = np.array([0.1, 0.0]), np.array([0.3, -2.0])
fr = pt.detect(q)
check(fr["phi"][0] == 0 and np.allclose(fr["n"][0], [0, 1, 0]), f"detect: phi {fr['phi']}, n {fr['n'][0]}")
J = pt.jacobian(q)
check(J.shape == (1, 2, 2) and np.allclose(J[0], [[0, 1], [1, 0]]), f"jacobian rows (normal, tangent): {J[0]}")
act = pt.active_set(q, v)
check(list(act) == [0], f"active set of a closing contact at gap 0: {act}")
check(list(pt.active_set(q, -v)) == [], "an opening contact is not active")
check(list(pt.active_set(q, -v, labels=[1])) == [0], "a contact labelled 1 is active")
for e in (0.0, 0.5, 1.0):
    vp, sol = pt.impulse(v, J, e=[e], mu=[0.0], regularization=0.0)
    check(np.allclose(vp, [0.3, 2.0 * e], atol=1e-12), f"frictionless point, e {e}: v+ {vp} (want (0.3, {2 * e}))")
vp, sol = pt.impulse(v, J, e=[0.5], mu=[1.0], regularization=0.0)
check(np.allclose(vp, [0.0, 1.0], atol=1e-12) and sol["branch"] == ["stick"],
      f"mu 1 >= |u_t|/((1 + e)|u_n|): sticks, v+ {vp}, {sol['branch']}")
vp, sol = pt.impulse(v, J, e=[0.5], mu=[0.05], regularization=0.0)
check(np.isclose(vp[0], 0.3 - 0.05 * 3.0 * 2.0 / 2.0) and sol["branch"] == ["slide"],
      f"mu 0.05: slides, loses mu lambda_n / m of tangential speed: v+ {vp}")
A, BT = pt.compliance(J[0])
check(np.allclose(A, np.eye(2) / 2) and np.allclose(BT, J[0] / 2), "compliance of a 2 kg point: A = I/2, BT = J/2")
A2, _ = pt.compliance(J[0], minv=np.eye(2) / 2)
check(np.array_equal(A, A2), "dense M^-1 gives the bodies' compliance")
check(np.isclose(pt.kinetic_energy(v), 0.5 * 2 * v @ v), "kinetic energy")
check(np.allclose(pt.advance(q, v, 0.1), q + 0.1 * v), "advance")
check(np.isclose(pt.gap_rate(q, v, 0), -2.0), "gap rate J_n v")

# the solve's reverse pass against central differences
rng = np.random.default_rng(0)
two = impulse.ContactModel(2, bodies=[{"kind": "planar", "mass": 1.3, "inertia": 0.02}],
                           candidates=[{"kind": "plane", "body_b": 0, "point_b": [-0.1, 0], "normal": [0, 1]},
                                       {"kind": "plane", "body_b": 0, "point_b": [0.1, 0], "normal": [0, 1]}])
q2 = np.array([0.0, 0.0, 0.2])
Jall = two.jacobian(q2).reshape(-1, 3)
A2, _ = two.compliance(Jall)
u2 = np.array([[-1.0, 0.4], [-0.6, 0.3]])
e2, mu2 = np.array([0.4, 0.6]), np.array([0.3, 0.5])
lb = rng.normal(size=4)
r = impulse.contact_solve(A2, u2, e2, mu2, regularization=0.0)
check(r._inputs[0] is A2 and r._inputs[1] is u2, "contact_solve passes C-contiguous float64 arrays without copies")
g = impulse.contact_solve_backward(r, lb)
f = lambda A_, u_, e_, mu_: lb @ impulse.contact_solve(A_, u_, e_, mu_, regularization=0.0)["lambda_"].ravel()  # noqa
h = 1e-6
fd_u = np.array([(f(A2, u2 + h * E, e2, mu2) - f(A2, u2 - h * E, e2, mu2)) / (2 * h)
                 for E in np.eye(4).reshape(4, 2, 2)]).reshape(2, 2)
fd_e = np.array([(f(A2, u2, e2 + h * E, mu2) - f(A2, u2, e2 - h * E, mu2)) / (2 * h) for E in np.eye(2)])
fd_mu = np.array([(f(A2, u2, e2, mu2 + h * E) - f(A2, u2, e2, mu2 - h * E)) / (2 * h) for E in np.eye(2)])
err = max(np.abs(fd_u - g["u_minus"]).max(), np.abs(fd_e - g["e"]).max(), np.abs(fd_mu - g["mu"]).max())
check(err < 1e-6, f"contact_solve_backward against central differences (branches {r['branch']}): max error {err:.1e}")
# CD-Lagrange's equality laws (law=, u_ref=): the law holds and the reverse pass matches central differences
ur2 = np.array([[-0.9, 0.0], [-0.5, 0.0]])
for law in ("paper", "halfstep"):
    r = impulse.contact_solve(A2, u2, e2, mu2, law=law, u_ref=ur2, regularization=0.0)
    beta = -e2 * ur2[:, 0] if law == "paper" else np.maximum(u2[:, 0] - (1 + e2) * ur2[:, 0], 0.0)
    check(np.abs(r["u_plus"][:, 0] - beta).max() < 1e-9, f"contact_solve law={law}: u+_n = beta")
    g = impulse.contact_solve_backward(r, lb)
    f = lambda u_, ur_, e_: lb @ impulse.contact_solve(A2, u_, e2 if e_ is None else e_, mu2, law=law, u_ref=ur_,  # noqa
                                                        regularization=0.0)["lambda_"].ravel()
    E4 = np.eye(4).reshape(4, 2, 2)
    fd_u = np.array([(f(u2 + h * E, ur2, None) - f(u2 - h * E, ur2, None)) / (2 * h) for E in E4]).reshape(2, 2)
    fd_ur = np.array([(f(u2, ur2 + h * E, None) - f(u2, ur2 - h * E, None)) / (2 * h) for E in E4]).reshape(2, 2)
    fd_e = np.array([(f(u2, ur2, e2 + h * E) - f(u2, ur2, e2 - h * E)) / (2 * h) for E in np.eye(2)])
    err = max(np.abs(fd_u - g["u_minus"]).max(), np.abs(fd_ur - g["u_ref"]).max(), np.abs(fd_e - g["e"]).max())
    check(err < 1e-6, f"contact_solve_backward law={law} against central differences (branches {r['branch']}): "
          f"max error {err:.1e}")
try:
    impulse.contact_solve(A2, u2, e2, mu2, law="poisson")
    check(False, "an unknown law is refused")
except impulse.Error as ex:
    check("law" in str(ex), f"an unknown law is refused: {ex}")

vb = rng.normal(size=3)
v2 = np.array([0.2, -1.0, 0.5])
vp, sol = two.impulse(v2, Jall, e2, mu2, regularization=0.0)
gi = two.impulse_backward(sol, vb)
fi = lambda v_: vb @ two.impulse(v_, Jall, e2, mu2, regularization=0.0)[0]  # noqa: E731
fd_v = np.array([(fi(v2 + h * E) - fi(v2 - h * E)) / (2 * h) for E in np.eye(3)])
check(np.abs(fd_v - gi["v_minus"]).max() < 1e-6, f"impulse_backward dv- against differences: {gi['v_minus']} {fd_v}")
jb = two.jacobian_backward(q2, 0, phi_bar=1.0)
fp = lambda qq: two.detect(qq)["phi"][0]  # noqa: E731
fd_q = np.array([(fp(q2 + h * E) - fp(q2 - h * E)) / (2 * h) for E in np.eye(3)])
check(np.abs(fd_q - jb["q"]).max() < 1e-7, f"jacobian_backward dphi/dq against differences: {jb['q']}")
raises(lambda: pt.impulse(v, J, e=[-0.5], mu=[0.0]), "e", "a negative restitution is refused naming e")
raises(lambda: pt.jacobian(np.zeros(3)), "q: shape", "a wrong q is refused naming q")
raises(lambda: impulse.ContactModel(2, [{"kind": "point", "mass": 1}], [{"kind": "plane", "body_b": 3,
                                                                          "normal": [0, 1]}]),
       "cand[0].body_b", "a candidate of a missing body is refused naming the field")
raises(lambda: impulse.ContactModel(2, [{"kind": "blob"}], [{}]), "bodies[0].kind", "unknown body kind")
sp = impulse.ContactModel(3, bodies=[{"kind": "spatial", "mass": 1, "inertia": np.eye(3) * 0.01}],
                          candidates=[{"kind": "plane", "body_b": 0, "radius_b": 0.05, "normal": [0, 0, 1]}])
raises(lambda: sp.check_state([0, 0, 0.1, 2, 0, 0, 0]), "quaternion", "a non-unit quaternion is refused")
check(np.isclose(sp.detect([0, 0, 0.1, 1, 0, 0, 0])["phi"][0], 0.05), "a ball 0.1 over the plane: gap 0.05")

# ---- rigid bodies: box-toss as the command line writes it
run("simulate", "box-toss", "--trajectories", "3", "--steps", "40", "--seed", "5", "-o", p("toss_cli.npz"))
t_cli = impulse.RigidTrajectories.load(p("toss_cli.npz"))
t = impulse.box_toss(3, 40, seed=5, path=p("toss_py.npz"))
check(np.array_equal(t.states, t_cli.states) and list(t.lengths) == [40, 40, 40] and t.dt == t_cli.dt,
      f"box_toss as `impulse simulate box-toss`: {t}")
check(np.array_equal(impulse.RigidTrajectories.load(p("toss_py.npz")).states, t_cli.states), "save/load round trip")
check(np.array_equal(impulse.box_toss_initial(1, seed=5), t.episode(1)[0]), "box_toss_initial(k) is toss k's start")
check(np.shares_memory(t.episode(2), t.states), "episodes are views of the library's array")
m0 = impulse.rigid_metrics(t.episode(0), t.episode(0), t.body)
check(m0["position_error_pct"] == 0 and m0["rotation_error_deg"] < 1e-12 and m0["penetration_pct"] < 1e-9,
      f"metrics of a toss against itself: {m0}")
box = impulse.RigidModel.box(t.body, e=0.3, mu=0.25)
ev = t.evaluate(box, substeps=64)
check(ev["position_error_pct"] < 1e-9 and ev["rotation_error_deg"] < 1e-9,
      f"the simulator's own model (64 substeps) reproduces its tosses: {ev}")
fn = t.evaluate(lambda x0, n: box.rollout(x0, n, t.dt, substeps=64))
check(fn == ev, "a Python rollout function scores the same")
ball = t.evaluate("ballistic")
check(ball["position_error_pct"] > 0.1 and ball["penetration_pct"] > 0, f"ballistic flight goes through the ground: {ball}")
s0 = np.array([1, 0, 0, 0, 0, 0, 0.0524, 0, 0, 0, 0, 0, 0], dtype=float)
check(abs(impulse.rigid_lowest_corner(s0, t.body)) < 1e-12, "a cube resting flat: its lowest corner at the ground")
rest = box.rollout(s0, 50, t.dt, substeps=4)
check(np.abs(rest[:, 6] - 0.0524).max() < 1e-6, f"a resting cube stays (z drift {np.abs(rest[:, 6] - 0.0524).max():.1e})")
check(np.isclose(impulse.rigid_quat_angle([1, 0, 0, 0], [np.cos(0.25), np.sin(0.25), 0, 0]), 0.5),
      "quaternion angle")
fall = impulse.rigid_ballistic(s0 + np.eye(13)[6], 10, 0.01, t.body, 9.81)
check(np.isclose(fall[-1, 6], 1.0524 - 0.5 * 9.81 * 0.09 ** 2), "ballistic fall z = z0 - g t^2/2")
tr_, va_, te_ = impulse.rigid_split(20, seed=3)
check(sorted(np.concatenate([tr_, va_, te_])) == list(range(20)) and len(tr_) == 10, "split 50/25/25 of 20 tosses")
# step reverse pass against differences (e, and the input state): a tilted
# cube whose lowest corner is 0.5 mm over the ground, falling at 1 m/s
c, sn = np.cos(0.1), np.sin(0.1)
x = np.array([c, sn, 0, 0, 0, 0, 0, 3.0, 1.0, -2.0, 0.4, 0.1, -1.0])
x[6] = 5e-4 - impulse.rigid_lowest_corner(x, t.body)
ob = rng.normal(size=13)
out, trace = box.step(x, 1e-3, trace=True)
sb, gg = box.step_backward(trace, ob)
fs = lambda mm, xx: ob @ mm.step(xx, 1e-3)  # noqa: E731
bp, bm = impulse.RigidModel.box(t.body, e=0.3 + h, mu=0.25), impulse.RigidModel.box(t.body, e=0.3 - h, mu=0.25)
fd_e = (fs(bp, x) - fs(bm, x)) / (2 * h)
fd_x = np.array([(fs(box, x + h * E) - fs(box, x - h * E)) / (2 * h) for E in np.eye(13)[4:]])
check(trace.n_active >= 1 and abs(fd_e - gg["e"]) < 1e-5 and np.abs(fd_x - sb[4:]).max() < 1e-5,
      f"step_backward against differences ({trace.n_active} active points): de {gg['e']:.6g} vs {fd_e:.6g}")
loss, lg = box.window_loss(t.episode(0)[:10], t.dt, substeps=4)
check(np.isfinite(loss) and lg["points"].shape == (8, 3) and lg["x0"].shape == (13,), f"window loss {loss:.3g}")
# window-loss gradients against differences: e through a bounce, the ground
# through a slow (plastic) landing, where the gap sets the impulse
xs = x.copy()
xs[7:10], xs[10:13] = [0.5, 0.2, 0.0], [0.1, 0.0, -0.05]
win = np.concatenate([box.rollout(x, 12, 0.004, substeps=2), box.rollout(xs, 12, 0.004, substeps=2)])
win[:, 4:7] += 1e-3 * rng.normal(size=(24, 3))  # measurements off the model's rollout,
win[[0, 12]] = x, xs                             # each window starting from its state
wl = lambda mm, w: mm.window_loss(w, 0.004, substeps=2)[0]  # noqa: E731
_, wg = box.window_loss(win[:12], 0.004, substeps=2)
fd_e = (wl(impulse.RigidModel.box(t.body, e=0.3 + h, mu=0.25), win[:12])
        - wl(impulse.RigidModel.box(t.body, e=0.3 - h, mu=0.25), win[:12])) / (2 * h)
_, wg2 = box.window_loss(win[12:], 0.004, substeps=2)
wg["ground"] = wg2["ground"]
fd_g = (wl(impulse.RigidModel.box(t.body, e=0.3, mu=0.25, ground=h), win[12:])
        - wl(impulse.RigidModel.box(t.body, e=0.3, mu=0.25, ground=-h), win[12:])) / (2 * h)
check(abs(fd_e - wg["e"]) < 1e-5 * max(1, abs(fd_e)) and abs(fd_g - wg["ground"]) < 1e-5 * max(1, abs(fd_g))
      and fd_e != 0 and fd_g != 0,
      f"window_loss gradients against differences: e {wg['e']:.6g} vs {fd_e:.6g}, ground {wg['ground']:.6g} vs {fd_g:.6g}")
check(np.isclose(box.energy(s0), 0.37 * 9.81 * 0.0524), "energy of a resting cube: m g z")
fit, res = impulse.rigid_identify(t, [0, 1], max_evals=12)
res_e = fit.e
check(0 <= fit.e <= 1 and 0 <= fit.mu <= 2 and res["evals"] >= 1, f"rigid_identify: {fit}, {res}")
learned, lrep = impulse.rigid_learn(t, fit, [0, 1], [2], steps=10, eval_every=5, batch=4, seed=1)
check(0 <= learned.e <= 1 and lrep["best_step"] >= 0 and lrep["best_step"] <= 10 and np.isfinite(lrep["valid_score"])
      and fit.e == res_e, f"rigid_learn: {learned}, {lrep} (the start unchanged)")
check(np.isclose(lrep["valid_position_pct"] + lrep["valid_rotation_deg"], lrep["valid_score"], rtol=1e-12),
      f"rigid_learn: the validation errors add up to the score: {lrep}")
_, lrep_w = impulse.rigid_learn(t, fit, [0, 1], [2], steps=10, eval_every=5, batch=4, seed=1, rot_weight=0.0)
check(0 < lrep_w["train_loss"] < lrep["train_loss"],
      f"rigid_learn: rot_weight 0 leaves the rotation out of the window loss ({lrep_w} vs {lrep})")
net, rep = impulse.RigidE2E.train(t, [0, 1], [2], steps=20, hidden=16, batch=16, eval_every=10, seed=1)
roll = net.rollout(t.episode(2)[0], 40)
check(roll.shape == (40, 13) and np.isfinite(roll).all() and rep["best_step"] >= 0, f"end-to-end net trained: {rep}")
check(np.array_equal(roll[1], net.step(roll[0])), "the end-to-end rollout is its steps")
ep = t.episode(2)
x0s, tgt = np.ascontiguousarray(ep[[0, 5]]), np.stack([ep[1:4], ep[6:9]])
L, G = net.window_loss(x0s, tgt)
k = int(np.argmax(np.abs(G)))
pp, pm = net.params.copy(), net.params.copy()
pp[k] += 1e-6
pm[k] -= 1e-6
fd = (net.window_loss(x0s, tgt, pp, grad=False)[0] - net.window_loss(x0s, tgt, pm, grad=False)[0]) / 2e-6
check(np.isfinite(L) and abs(fd - G[k]) < 1e-5 * max(1, abs(fd)), f"end-to-end window loss {L:.4g}, "
      f"d/dparams[{k}] {G[k]:.6g} vs differences {fd:.6g}")
raises(lambda: net.window_loss(x0s, tgt[:1]), "target", "a window target of the wrong shape is named")
raises(lambda: impulse.rigid_metrics(t.episode(0)[:5], t.episode(0)), "pred", "pred of the wrong length named")
raises(lambda: impulse.rigid_metrics(t.episode(0), np.zeros((5, 12))), "meas", "meas of the wrong width named")
raises(lambda: impulse.RigidTrajectories(np.zeros((3, 13))), "states", "a zero quaternion is refused")
raises(lambda: impulse.box_toss(1, 3, speed=2), "unknown option 'speed'", "box_toss refuses an unknown option")

# ---- the cube reproduction's plan, as `impulse reproduce cube --plan`
impulse.box_toss(16, 20, seed=7, path=p("cube.npz"))  # 2N = 16 tosses for the plan's N = 8
run("reproduce", "cube", "--quick", "--data", p("cube.npz"), "--plan", p("cube_cli.txt"), "--out", p("rc"))
text = impulse.sweep_plan("cube", quick=True, data=p("cube.npz"))
check("cube" in impulse.REPRODUCTIONS and open(p("cube_cli.txt")).read() == text,
      "cube plan as `reproduce cube --quick --plan`")
check("strand=cube" in text and all(f"model={m}" in text for m in ("end-to-end", "ballistic")),
      "the cube plan lists the end-to-end and ballistic models")
raises(lambda: impulse.sweep_plan("cube"), "data", "the cube plan wants data")
raises(lambda: impulse.cube_rows(d), "not a sweep folder", "cube_rows of a folder that is not a sweep's")
ballistic = "".join(line + "\n" for line in text.splitlines() if line.startswith("#") or "model=ballistic" in line
                    and "tosses=8 " in line)
summary = impulse.sweep_run(ballistic, p("cube_run"))
rows = impulse.cube_rows(p("cube_run"))
check(summary["ran"] == 1 and rows and all(r["model"] == "ballistic" and r["tosses"] == 8 for r in rows)
      and all(np.isfinite(r["position_error_pct"]) for r in rows), f"a cube task run from Python, its rows: {rows}")

# ---- constrained systems with contacts: the new simulators
for sysname in ("chain-ground:3", "chain-ground-elastic:3", "gyroscope-wall", "colliding-pendulums"):
    ds = impulse.simulate(sysname, trajectories=1, steps=20, seed=0)
    check(np.isfinite(ds["z"]).all() and np.isfinite(ds["energy"]).all(), f"simulate {sysname}: {ds}")

cs = impulse.ContactSystem("chain-ground:3")
x, v = cs.sample_state(0)
ds_t = impulse.simulate("chain-ground:3", trajectories=1, steps=100, seed=0)
dt = float(ds_t["t"][1] - ds_t["t"][0])
tr, stats = cs.simulate(x, v, dt, 100)
check(np.array_equal(tr, ds_t["z"][0].reshape(101, -1)) and stats["impacts"] > 0
      and 0 <= stats["max_joint_velocity"] < 1e-9,
      f"ContactSystem.simulate is impulse.simulate's trajectory: {stats}")
for name, e in (("chain-ground:3", 0.0), ("chain-ground-elastic:3", 1.0)):
    cs = impulse.ContactSystem(name)
    x, _ = cs.sample_state(0)
    Jn = cs.frame(x, 0)["J"][0]
    v = -cs.minv(x, Jn)  # moves along the joints, closing contact 0
    vp, sol = cs.impulse(x, v, [0])
    check(np.isclose(Jn @ vp, -e * (Jn @ v), atol=1e-7) and cs.energy(x, vp) <= cs.energy(x, v) + 1e-8
          and (e < 1 or np.isclose(cs.energy(x, vp), cs.energy(x, v), rtol=1e-8)),
          f"{name}: contact 0 leaves at -e u (e {e}): {Jn @ v:.4f} -> {Jn @ vp:.4f}, energy "
          f"{cs.energy(x, v):.6f} -> {cs.energy(x, vp):.6f}")
raises(lambda: impulse.ContactSystem("chain-ground:3").frame(np.zeros(6), 7), "c: 7", "a missing contact is named")

# contacts between two constrained bodies: the built-in and its system file
cp = impulse.ContactSystem("colliding-pendulums")
cpf = impulse.ContactSystem(path=os.path.join(here, "..", "..", "systems", "colliding-pendulums.txt"))
x, _ = cp.sample_state(3)
fr = cp.frame(x, 0)
gap = np.linalg.norm(x.reshape(3, 2)[2] - x.reshape(3, 2)[1]) - 0.22
check(cp.n_contacts == 2 and cpf.n_contacts == 2 and np.isclose(fr["phi"], gap)
      and np.isclose(cpf.frame(x, 0)["phi"], fr["phi"]) and np.allclose(fr["J"][0][2:4], -fr["J"][0][4:6]),
      f"colliding-pendulums: two body-body contacts, gap |x3 - x2| - 0.22, rows relative: {fr}")

# energy lost at impacts: the truth against itself, and a model that keeps the energy
ds_cp = impulse.simulate("colliding-pendulums", trajectories=2, seed=1)
ie = cp.impact_energy(ds_cp["z"], ds_cp["z"])
z_keep = ds_cp["z"].reshape(2, ds_cp["z"].shape[1], -1).copy()
z_keep[:, 1:] = z_keep[:, :-1].copy()
ie_keep = cp.impact_energy(ds_cp["z"], z_keep, one_step=True)
check(ie["impacts"] > 0 and ie["rel_error"] == 0 and ie["within_5pct"] == ie["impacts"]
      and len(ie["truth_loss"]) == ie["impacts"] and np.isclose(ie["truth_loss"].sum(), ie["truth_lost"])
      and np.isclose(ie_keep["rel_error"], 1) and ie_keep["within_5pct"] == 0,
      f"impact_energy: truth {ie}, a no-loss model {ie_keep}")
raises(lambda: cp.impact_energy(ds_cp["z"], ds_cp["z"][:1]), "shape", "impact_energy: model and truth shapes differ")

checks.done()
