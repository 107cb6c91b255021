"""Every ```python block of the README and of docs/*.md runs (issue 27 item 2),
page by page in one namespace, in a fresh folder, on the package of this
tree (ctest runs it with /usr/bin/python3 and IMPULSE_LIBRARY / IMPULSE_CLI
set to the build's). Quick variants only where a block is long: epoch and
trajectory counts are made small (the substitutions are listed below and
printed), and the long reproductions (impulse.reproduce, impulse.sweep_run
and the report of such a run, impulse.sweep_report) are not run: their arguments are bound to the real signatures, so a block
calling them wrongly still fails. Files a block reads (ball.npz, train.npz)
are written first with the command line."""
import inspect, os, re, subprocess, sys, tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(root, "python"))
import impulse  # noqa: E402

cli = os.environ.get("IMPULSE_CLI") or os.path.join(root, "build", "impulse")
PAGES = ["README.md"] + sorted(os.path.join("docs", f) for f in os.listdir(os.path.join(root, "docs"))
                               if f.endswith(".md"))
# (pattern, replacement): the quick variants of long blocks
QUICK = [(r"epochs=\d+", "epochs=2"), (r"trajectories=800", "trajectories=12"), (r"trajectories=100", "trajectories=4"),
         (r"seeds=10", "seeds=1"), (r"impulse\.box_toss\(4, 148", "impulse.box_toss(3, 40"),
         (r"rigid_identify\(tosses, \[0, 1\]\)", "rigid_identify(tosses, [0, 1], max_evals=6)"),
         (r"steps=100\)", "steps=20)")]


def checked_only(fn):
    """fn's arguments bound to its signature, not run (a long reproduction)."""
    sig = inspect.signature(fn)

    def call(*args, **kwargs):
        sig.bind(*args, **kwargs)
        print(f"  {fn.__name__}: arguments checked, not run")
        return ""
    return call


def blocks(path):
    text = open(os.path.join(root, path)).read()
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


failed = ran = 0
with tempfile.TemporaryDirectory() as tmp:
    os.chdir(tmp)
    subprocess.run([cli, "simulate", "bouncing-ball", "--restitution", "0.7", "--noise", "0.2", "--seed", "1",
                    "--steps", "60", "-o", "ball.npz"], check=True, capture_output=True)
    subprocess.run([cli, "simulate", "--system-file", os.path.join(root, "systems", "double-pendulum.txt"),
                    "--trajectories", "3", "--spread", "0.2", "-o", "train.npz"], check=True, capture_output=True)
    for page in PAGES:
        code = blocks(page)
        if not code:
            continue
        src = "\n".join(code)
        for pat, rep in QUICK:
            src = re.sub(pat, rep, src)
        ns = {"__name__": "__doc__", "impulse": impulse}  # a page's later blocks may take `import impulse` as read
        real = (impulse.reproduce, impulse.sweep_run, impulse.sweep_report)
        impulse.reproduce, impulse.sweep_run, impulse.sweep_report = (checked_only(f) for f in real)
        try:
            print(f"{page}: {len(code)} block(s)")
            exec(compile(src, page, "exec"), ns)
            ran += len(code)
        except Exception as e:  # noqa: BLE001 - any failure of a documented block is the test's finding
            failed += 1
            print(f"FAILED: {page}: {type(e).__name__}: {e}")
        finally:
            impulse.reproduce, impulse.sweep_run, impulse.sweep_report = real
print(f"{ran} passed, {failed} failed")
sys.exit(1 if failed or not ran else 0)
