"""Same seed and options: the Python package and the impulse command write
bit-identical datasets and checkpoints (ctest; IMPULSE_CLI is the tool)."""
import os, subprocess, sys, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import impulse
import numpy as np

cli = os.environ["IMPULSE_CLI"]
d = tempfile.mkdtemp()
failed = 0


def run(*args):
    subprocess.run([cli, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def same(a, b, what):
    global failed
    A, B = np.load(a), np.load(b)
    ka, kb = sorted(k for k in A.files if k != "meta"), sorted(k for k in B.files if k != "meta")
    diff = [k for k in ka if k not in kb or A[k].shape != B[k].shape or not np.array_equal(A[k], B[k])]
    if ka != kb or diff:
        failed += 1
        worst = max((float(np.max(np.abs(A[k] - B[k]))) for k in diff if k in kb and A[k].shape == B[k].shape),
                    default=float("nan"))
        print(f"FAILED: {what}: arrays {ka} vs {kb}, differing {diff} (largest difference {worst:.3g})")
    else:
        print(f"ok: {what}: {len(ka)} arrays bit-identical")


p = lambda name: os.path.join(d, name)  # noqa: E731
run("simulate", "bouncing-ball", "--restitution", "0.8", "--noise", "0.05", "--steps", "150", "--seed", "3",
    "-o", p("ball_cli.npz"))
ball = impulse.simulate("bouncing-ball", restitution=0.8, noise=0.05, steps=150, seed=3)
ball.save(p("ball_py.npz"))
same(p("ball_cli.npz"), p("ball_py.npz"), "simulate bouncing-ball")
run("train", "cdl", "--data", p("ball_cli.npz"), "--epochs", "20", "--seed", "5", "--quiet", "-o", p("cdl_cli.npz"))
impulse.train("cdl", ball, epochs=20, seed=5, output=p("cdl_py.npz"))
same(p("cdl_cli.npz"), p("cdl_py.npz"), "train cdl, 20 epochs")
run("train", "vin", "--data", p("ball_cli.npz"), "--epochs", "5", "--settings", "paper", "--hidden", "32",
    "--horizon", "4", "--batch", "8", "--damping", "--potential-precision", "double", "--quiet", "-o", p("vin_cli.npz"))
impulse.train("vin", ball, epochs=5, settings="paper", hidden=32, horizon=4, batch=8, damping=True,
              potential_precision="double", output=p("vin_py.npz"))
same(p("vin_cli.npz"), p("vin_py.npz"), "train vin with options")
# compliant contact: the default schedule (auto) anneals the rate in both
run("simulate", "compliant-ball", "--restitution", "0.7", "--noise", "0.1", "--steps", "150", "--seed", "4",
    "-o", p("soft_cli.npz"))
soft = impulse.Dataset.load(p("soft_cli.npz"))
run("train", "cdl", "--data", p("soft_cli.npz"), "--epochs", "8", "--hidden", "32", "--seed", "2", "--quiet",
    "-o", p("soft_cdl_cli.npz"))
impulse.train("cdl", soft, epochs=8, hidden=32, seed=2, output=p("soft_cdl_py.npz"))
same(p("soft_cdl_cli.npz"), p("soft_cdl_py.npz"), "train cdl on compliant data (auto: cosine)")

run("simulate", "pendulum-chain:2", "--trajectories", "16", "--seed", "1", "--quiet", "-o", p("pend_cli.npz"))
pend = impulse.simulate("pendulum-chain:2", trajectories=16, seed=1)
pend.save(p("pend_py.npz"))
same(p("pend_cli.npz"), p("pend_py.npz"), "simulate pendulum-chain:2")
for name, kw, args in (("compliant-ball", dict(stiffness=1e4), ["--stiffness", "1e4"]),
                       ("bouncing-disk", dict(friction=0.3, spin=2.0), ["--friction", "0.3", "--spin", "2"])):
    run("simulate", name, "--seed", "4", "--noise", "0.01", "--steps", "100", *args, "-o", p(f"{name}_cli.npz"))
    impulse.simulate(name, seed=4, noise=0.01, steps=100, **kw).save(p(f"{name}_py.npz"))
    same(p(f"{name}_cli.npz"), p(f"{name}_py.npz"), f"simulate {name}")
sysfile = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "systems", "double-pendulum.txt")
run("simulate", "--system-file", sysfile, "--trajectories", "2", "--spread", "0.1", "--steps", "20", "--seed", "1",
    "--quiet", "-o", p("file_cli.npz"))
impulse.simulate(system_file=sysfile, trajectories=2, spread=0.1, steps=20, seed=1).save(p("file_py.npz"))
same(p("file_cli.npz"), p("file_py.npz"), "simulate a system file")
import json
for model in ("chnn", "hnn"):
    tj = json.loads(subprocess.run([cli, "train", model, "--data", p("pend_cli.npz"), "--epochs", "3", "--hidden", "32",
                                    "--chunks", "16", "--batch", "8", "--seed", "2", "-o", p(f"{model}_cli.npz"),
                                    "--json", "--quiet"], check=True, capture_output=True).stdout)
    mp = impulse.train(model, pend, epochs=3, hidden=32, chunks=16, batch=8, seed=2, output=p(f"{model}_py.npz"))
    same(p(f"{model}_cli.npz"), p(f"{model}_py.npz"), f"train {model} (2 threads, as the CLI)")
    # the report: the keys and values of `impulse train --json` (wall time aside)
    rdiff = {k: (v, tj.get(k)) for k, v in mp.report.items() if k != "seconds" and tj.get(k) != v}
    if rdiff or "seconds" not in tj:
        failed += 1
        print(f"FAILED: train {model}: Python's report and train --json differ: {rdiff}")
    else:
        print(f"ok: train {model}: Python's report has the keys and values of train --json")

# eval: the package's dict has the keys and values of `impulse eval --json`, in both strands
import json
def same_eval(cli_args, py, what):
    global failed
    j = json.loads(subprocess.run([cli, "eval", *cli_args, "--json"], check=True, capture_output=True).stdout)
    diff = {k: (v, py.get(k)) for k, v in j.items() if k != "seconds" and not (v == py.get(k) or (v is None and
            py.get(k) != py.get(k)))}
    if diff:
        failed += 1
        print(f"FAILED: {what}: eval differs {diff}")
    else:
        print(f"ok: {what}: eval --json and Python agree on {len(j)} keys")
same_eval(["--model", p("cdl_cli.npz"), "--data", p("ball_cli.npz")],
          impulse.load_model(p("cdl_py.npz")).evaluate(ball), "cdl")
test = impulse.simulate("pendulum-chain:2", trajectories=4, seed=2, rollout_start=4)
test.save(p("test_py.npz"))
same_eval(["--model", p("chnn_cli.npz"), "--data", p("test_py.npz")],
          impulse.load_model(p("chnn_py.npz")).evaluate(test), "chnn")
# with contact: the impact_energy block and the violation away from impacts, DOPRI5 and --contact-rk4
cg = impulse.simulate("chain-ground:3", trajectories=3, seed=1)
cg.save(p("cg_py.npz"))
run("train", "clnn", "--data", p("cg_py.npz"), "--epochs", "1", "--hidden", "16", "--seed", "1", "--quiet",
    "-o", p("clnn_cg.npz"))
same_eval(["--model", p("clnn_cg.npz"), "--data", p("cg_py.npz")],
          impulse.load_model(p("clnn_cg.npz")).evaluate(cg), "clnn with contact")
same_eval(["--model", p("clnn_cg.npz"), "--data", p("cg_py.npz"), "--contact-rk4"],
          impulse.load_model(p("clnn_cg.npz")).evaluate(cg, contact_rk4=True), "clnn with contact, RK4")
for extra in ([], ["--contact-rk4"]):
    c0 = cg.initial_states()[0]
    run("rollout", "--model", p("clnn_cg.npz"), "--state", ",".join(repr(v) for v in c0), "--steps", "30",
        *extra, "-o", p("cgroll_cli.npz"))
    cy = impulse.load_model(p("clnn_cg.npz")).rollout(c0, 30, cg._dt(), contact_rk4=bool(extra))
    cz = np.load(p("cgroll_cli.npz"))["z"]
    if not np.array_equal(cz.reshape(cz.shape[0], -1), cy):
        failed += 1
        print("FAILED: clnn-with-contact rollout differs from impulse rollout", extra)
    else:
        print("ok: clnn-with-contact rollout equals impulse rollout", extra)

# rollout: the package's equals `impulse rollout` (contact family; constrained: DOPRI5 as eval)
x0 = ball.initial_states()[0]
run("rollout", "--model", p("cdl_cli.npz"), "--state", ",".join(repr(v) for v in x0), "--steps", "60",
    "-o", p("roll_cli.npz"))
py_states, _ = impulse.load_model(p("cdl_py.npz")).rollout(x0, 60)
if not np.array_equal(np.load(p("roll_cli.npz"))["states"], py_states):
    failed += 1
    print("FAILED: cdl rollout differs from impulse rollout")
else:
    print("ok: cdl rollout equals impulse rollout")
y0 = test.initial_states()[0]
run("rollout", "--model", p("chnn_cli.npz"), "--state", ",".join(repr(v) for v in y0), "--steps", "6",
    "--dt", "0.03", "-o", p("croll_cli.npz"))
cy = impulse.load_model(p("chnn_py.npz")).rollout(y0, 6, 0.03)
cz = np.load(p("croll_cli.npz"))["z"]
if cz.reshape(cz.shape[0], -1).shape != cy.shape or not np.array_equal(cz.reshape(cz.shape[0], -1), cy):
    failed += 1
    print("FAILED: chnn rollout differs from impulse rollout", cz.shape, cy.shape)
else:
    print("ok: chnn rollout equals impulse rollout")

# '-' is standard output / input where a file is expected
piped = subprocess.run([cli, "simulate", "bouncing-ball", "--restitution", "0.8", "--noise", "0.05", "--steps", "150",
                        "--seed", "3", "-o", "-"], check=True, capture_output=True).stdout
if piped != open(p("ball_cli.npz"), "rb").read():
    failed += 1
    print("FAILED: simulate -o - differs from the file")
ev = subprocess.run([cli, "eval", "--model", p("cdl_cli.npz"), "--data", "-", "--json"], input=piped, check=True,
                    capture_output=True).stdout
ev_file = subprocess.run([cli, "eval", "--model", p("cdl_cli.npz"), "--data", p("ball_cli.npz"), "--json"], check=True,
                         capture_output=True).stdout
if ev != ev_file or os.path.exists("-"):
    failed += 1
    print("FAILED: eval --data - differs from the file's, or a file named '-' was written")
else:
    print("ok: -o - and --data - are standard output and input")

# plot-log: loss curves from a JSON-lines training log (the learning rate, constant here, gets
# no curve of its own); a log without epochs is refused
with open(p("run.log.jsonl"), "w") as f:
    for e in range(1, 6):
        f.write(json.dumps({"epoch": e, "epochs": 5, "loss": 1.0 / e, "state": 0.8 / e, "contact": 0.2 / e,
                            "lr": 0.01, "seconds": 0.1 * e, "best_epoch": e}) + "\n")
subprocess.run([cli, "plot-log", p("run.log.jsonl")], check=True, capture_output=True)
fig = np.load(p("run.log.loss.npz"))
spec = json.loads(str(fig["meta"]))
lines = [el for el in spec["elements"] if el["kind"] == "line"]
if not os.path.exists(p("run.log.loss.png")) or len(lines) != 3 or not np.allclose(fig[lines[0]["y"]], 1.0 / np.arange(1, 6)):
    failed += 1
    print(f"FAILED: plot-log: {len(lines)} lines, png {os.path.exists(p('run.log.loss.png'))}")
else:
    print("ok: plot-log draws loss and its terms (a constant learning rate gets no panel)")
open(p("empty.jsonl"), "w").write("not a log\n")
r = subprocess.run([cli, "plot-log", p("empty.jsonl")], capture_output=True, text=True)
if r.returncode == 0 or "no epoch lines" not in r.stderr:
    failed += 1
    print("FAILED: plot-log accepts a log without epochs:", r.stderr)
sys.exit(1 if failed else 0)
