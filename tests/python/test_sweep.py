"""The reproductions from Python: impulse.sweep_plan / sweep_run /
sweep_report / reproduce give the same plans as `impulse sweep plan` and
`impulse reproduce ... --plan`, and the same results as `impulse sweep run`
(ctest; IMPULSE_CLI is the tool)."""
import os, subprocess, sys, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import impulse
import numpy as np

os.environ["IMPULSE_PYTHON"] = "/nonexistent/python3"  # figures: tested elsewhere
cli = os.environ["IMPULSE_CLI"]
d = tempfile.mkdtemp()
p = lambda name: os.path.join(d, name)  # noqa: E731
import checks  # noqa: E402
from checks import check  # noqa: E402

checks.verbose = True


def run(*args):
    subprocess.run([cli, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=os.environ)


# plans: the same text as the command line's
run("sweep", "plan", "cdl", "--only", "pendulum", "--epochs", "3", "--seeds", "2", "-o", p("cdl_cli.txt"))
text = impulse.sweep_plan("cdl", p("cdl_py.txt"), only="pendulum", epochs=3, seeds=2)
check(open(p("cdl_cli.txt")).read() == text == open(p("cdl_py.txt")).read(), "cdl plan as `impulse sweep plan cdl`")
run("reproduce", "chnn", "--quick", "--plan", p("chnn_cli.txt"))
check(open(p("chnn_cli.txt")).read() == impulse.sweep_plan("chnn", quick=True), "chnn plan as `reproduce chnn --plan`")
drops = p("drops.npz")
run("impact", "drop", "--count", "60", "--out", drops)
run("reproduce", "impact", "--quick", "--data", drops, "--plan", p("impact_cli.txt"))
check(open(p("impact_cli.txt")).read() == impulse.sweep_plan("impact", data=drops, quick=True),
      "impact plan as `reproduce impact --plan`")
run("reproduce", "your-data", "--quick", "--epochs", "3", "--restitution", "0.65", "--impact-law", "newton",
    "--plan", p("yd_cli.txt"))
check(open(p("yd_cli.txt")).read() == impulse.sweep_plan("your-data", quick=True, epochs=3, restitution=0.65,
                                                         impact_law="newton"),
      "your-data plan as `reproduce your-data --plan`")
run("reproduce", "contact", "--quick", "--only", "points,box-toss", "--epochs", "4", "--box-tosses", "6",
    "--plan", p("contact_cli.txt"))
check(open(p("contact_cli.txt")).read() == impulse.sweep_plan("contact", quick=True, only="points,box-toss", epochs=4,
                                                              box_tosses=6),
      "contact plan as `reproduce contact --plan`")
for bad, want in ((lambda: impulse.sweep_plan("cdl", only="moon"), "'moon'"),
                  (lambda: impulse.sweep_plan("contact", only="moon"), "'moon'"),
                  (lambda: impulse.sweep_plan("your-data", impact_law="sideways"), "impact_law=sideways"),
                  (lambda: impulse.sweep_plan("cdl", speed=3), "unknown option 'speed'"),
                  (lambda: impulse.sweep_plan("nope"), "'nope' unknown"),
                  (lambda: impulse.sweep_plan("impact"), "data")):
    try:
        bad()
        check(False, f"error naming {want}")
    except impulse.Error as e:
        check(want in str(e), f"error names {want}: {e}")

# run and report: the CLI's results, bit for bit (train time aside)
run("sweep", "run", p("cdl_cli.txt"), "--out", p("cli_run"))
lines = []
summary = impulse.sweep_run(text, p("py_run"), progress=lines.append)
check(summary == {"ran": 6, "skipped": 0, "failed": 0, "stopped": False} and lines, f"sweep_run: {summary}")
check(impulse.sweep_run(p("cdl_py.txt"), p("py_run"))["skipped"] == 6, "a second run finds every task done")
for tid in ("pendulum.cdl.s0", "pendulum.vin.s1", "pendulum.resnet.s1"):
    a = np.load(p(f"cli_run/tasks/{tid}/result.npz"))["metrics"]
    b = np.load(p(f"py_run/tasks/{tid}/result.npz"))["metrics"]
    check(np.array_equal(np.delete(a, 4), np.delete(b, 4), equal_nan=True), f"{tid}: metrics bit-identical to the CLI's")
md = impulse.sweep_report(p("py_run"))
check("6 of 6 tasks done" in md and "### Pendulum" in md and os.path.exists(p("py_run/report.md")), "sweep_report")
md = impulse.reproduce("cdl", p("repro"), only="pendulum", epochs=2, seeds=1)
check("3 of 3 tasks done" in md and "| vin " in md, "reproduce('cdl')")
md = impulse.reproduce("your-data", p("repro_yd"), seeds=1, epochs=2, heldout=1)
check("5 of 5 tasks done" in md and "| cdl            | as-given | 1 |" in md and "| resnet         | none     | 1 |" in md,
      "reproduce('your-data')")
# the contact comparisons' rows, as `reproduce contact --json` prints them
with open(p("ct.plan"), "w") as f:
    f.write("# impulse sweep plan 1\ntask id=pts strand=contact system=bouncing-points:2 model=cdl friction=1 "
            "epochs=2 n_train=2 n_test=1\n")
run("sweep", "run", p("ct.plan"), "--out", p("ct_run"))
rows = impulse.contact_rows(p("ct_run"))
check(len(rows) == 1 and rows[0]["part"] == "model" and len(rows[0]["e"]) == 8 and len(rows[0]["mu_true"]) == 8
      and rows[0]["rmse"] > 0, f"contact_rows: {rows}")
checks.done()
