"""The Python package as a newcomer meets it (issue 27): module layout, names,
messages, reprs, progress, the impact data. ctest runs it with /usr/bin/python3
and IMPULSE_LIBRARY set to the build's libimpulse; the package comes from python/."""
import io, os, sys, tempfile
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import impulse
import numpy as np

from checks import check, done  # noqa: E402


def message(fn):
    """The message of the impulse.Error fn raises ('' if none)."""
    try:
        fn()
    except impulse.Error as e:
        return str(e)
    return ""


tmp = tempfile.mkdtemp()

# --- 20: the package's modules mirror the library's parts; every public name stays in impulse
import importlib
parts = {"data": ("Dataset", "simulate", "CONTACT_SYSTEMS"), "contact": ("Model", "CONTACT_MODELS"),
         "constrained": ("ConstrainedModel", "CONSTRAINED_MODELS"), "training": ("train", "load_model"),
         "impact": ("impact_predict", "impact_irb", "impact_identify", "impact_table1", "GaussianProcess",
                    "IMPACT_LAWS"),
         "sweeps": ("sweep_plan", "sweep_run", "sweep_report", "reproduce", "REPRODUCTIONS")}
for mod, names in parts.items():
    try:
        m = importlib.import_module("impulse." + mod)
    except ImportError as e:
        check(False, f"impulse.{mod} importable ({e})")
        continue
    for name in names:
        check(getattr(m, name, None) is not None and getattr(m, name) is getattr(impulse, name, None),
              f"impulse.{name} is impulse.{mod}.{name}")
check(all(hasattr(impulse, n) for n in impulse.__all__), "every name of impulse.__all__ exists")
with open(os.path.join(HERE, "..", "..", "python", "impulse", "__init__.py")) as f:
    n_lines = sum(1 for _ in f)
check(n_lines < 150, f"impulse/__init__.py holds the package's surface only ({n_lines} lines)")

# --- 12: one name for the per-epoch loss: 'loss', in the callback, the history and the JSON-lines log
import json, warnings
ball = impulse.simulate("bouncing-ball", steps=60, noise=0.05, restitution=0.8, seed=2)
seen = []
log = os.path.join(tmp, "cdl.log.jsonl")
m = impulse.train("cdl", ball, epochs=2, hidden=8, log=log, callback=lambda e, loss: seen.append(dict(loss)))
with open(log) as f:
    logged = [json.loads(line) for line in f]
check(all("loss" in s and "total" not in s for s in seen), f"callback's loss is 'loss' ({seen[:1]})")
check(all("loss" in h for h in m.history), "history's loss is 'loss'")
check([h["loss"] for h in m.history] == [r["loss"] for r in logged], "history's 'loss' = the log's 'loss'")
check(set(seen[0]) - {"lr", "seconds"} <= set(logged[0]), f"the callback's keys are the log's ({sorted(seen[0])})")
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    alias = m.history[0]["total"]
check(alias == m.history[0]["loss"] and any(issubclass(x.category, DeprecationWarning) for x in w),
      "'total' still reads the loss, with a DeprecationWarning")

# --- 13: meta 'system' is optional for contact data (data-format.md); for constrained data a meta
# 'system' that differs from the system file's name is named, not silently replaced
q = ball["q"]
mine = impulse.Dataset({"q": q, "qdot": ball["qdot"], "masses": ball["masses"],
                        "contact_pairs": ball["contact_pairs"], "contact_normals": ball["contact_normals"],
                        "contact_offsets": ball["contact_offsets"]}, {"dt": ball.meta["dt"], "dim": 1})
try:
    mm = impulse.train("cdl", mine, epochs=1, hidden=8)
    check(np.isfinite(mm.evaluate(mine)["rmse"]), "a dataset without meta 'system' trains and evaluates")
except impulse.Error as e:
    check(False, f"a dataset without meta 'system' trains ({e})")
sysfile = os.path.join(HERE, "..", "..", "systems", "double-pendulum.txt")
dp = impulse.simulate(system_file=sysfile, trajectories=3, spread=0.1, steps=12, seed=1)
check("system_text" in dp.meta, "simulate(system_file=...) keeps the file's text, as the CLI")
try:
    cm = impulse.train("chnn", dp, epochs=1, chunks=4, batch=4, hidden=8)
    check(cm.kind == "chnn", "a system file's data train in Python")
except impulse.Error as e:
    check(False, f"a system file's data train in Python ({e})")
renamed = impulse.Dataset(dp.arrays, dict(dp.meta, system="my-arm"))
try:  # data contradicting itself: refused as by the command line, both names said
    impulse.train("chnn", renamed, epochs=1, chunks=4, batch=4, hidden=8)
    check(False, "a differing meta system is refused")
except impulse.Error as e:
    check("my-arm" in str(e) and "double-pendulum" in str(e), f"a differing meta system names both ({e})")
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    impulse.train("chnn", dp, epochs=1, chunks=4, batch=4, hidden=8)
check(not [x for x in w if issubclass(x.category, impulse.Notice)], "no notice when the names agree")

# --- 14: Python errors name Python arguments and shapes: no temporary files, private functions,
# numpy internals, os.fspath's TypeError or CLI commands
def said(fn):
    try:
        fn()
    except (impulse.Error, TypeError, ValueError) as e:
        return f"{type(e).__name__}: {e}"
    return "(no error)"


def clean(msg, needles, what):
    leaks = [w for w in ("/tmp/", "impulse-", "_train_", "reshape", "os.PathLike object, not", "impulse impact",
                         "impulse import", "list-models", "--") if w in msg]
    check(not leaks and all(n in msg for n in needles), f"{what}: names {needles}, leaks nothing ({msg})")


nan_ball = impulse.Dataset(dict(ball.arrays, q=np.where(np.arange(60)[None, :, None] == 7, np.nan, ball["q"])),
                           ball.meta)
clean(said(lambda: impulse.train("cdl", nan_ball, epochs=1)), ["data", "q[0, 7, 0]", "nan"], "NaN in the data")
clean(said(lambda: m.evaluate(nan_ball)), ["data", "q[0, 7, 0]"], "NaN in evaluate's data")
clean(said(lambda: impulse.train("cdl", ball, epochs=1, hiden=8)), ["hiden", "hidden", "TypeError"], "misspelt option")
clean(said(lambda: impulse.train("chnn", dp, epochs=1, hiden=8)), ["hiden", "hidden"], "misspelt chnn option")
W = np.tile(np.eye(2), (5, 1, 1))
u = np.tile([0.1, -1.0], (5, 1))
clean(said(lambda: impulse.impact_predict("mirtich", W.reshape(-1)[:10], u, 0.2, 0.5)), ["W", "(10,)", "(5, 2, 2)"],
      "wrong W shape")
clean(said(lambda: impulse.impact_predict("mirtich", W[:4], u, 0.2, 0.5)), ["W", "(4, 2, 2)", "(5, 2, 2)"],
      "W rows differ from u's")
clean(said(lambda: impulse.impact_predict("mirtic", W, u, 0.2, 0.5)), ["law", "mirtic", "mirtich"], "unknown law")
clean(said(lambda: impulse.impact_table1("newtn")), ["law", "ap-newton"], "unknown law in impact_table1")
clean(said(lambda: impulse.impact_irb(np.zeros(4), np.zeros(3), np.zeros(3), np.zeros(3), 1, 1)),
      ["d", "(4,)"], "wrong d shape")
clean(said(lambda: impulse.train("cdl", dict(ball.arrays), epochs=1)), ["data", "dict", "impulse.Dataset"],
      "a dict for data")
clean(said(lambda: impulse.load_model({"a": 1})), ["path", "dict"], "a dict for load_model's path")
clean(said(lambda: impulse.Dataset.load(3)), ["path", "int"], "an int for Dataset.load's path")
clean(said(lambda: impulse.train("cdl", ball, epochs=1, contact_labels="onst")), ["contact_labels", "onset"],
      "bad contact_labels")
clean(said(lambda: impulse.train("cdl", ball, epochs=1, contact_labels="geometry", touch=False)),
      ["contact_labels", "geometry", "touch=False"], "geometry labels without touch")
unlabelled = impulse.Dataset({k: v for k, v in ball.arrays.items() if k != "contact"}, ball.meta)
check(said(lambda: impulse.train("cdl", unlabelled, epochs=1, hidden=8, contact_labels="geometry")) == "(no error)",
      "contact_labels='geometry' trains on data without labels")
no_masses = impulse.Dataset({k: v for k, v in ball.arrays.items() if k != "masses"}, ball.meta)
clean(said(lambda: impulse.train("cdl", no_masses, epochs=1)), ["data", "masses"], "missing masses")
msg = said(lambda: impulse.simulate("bouncing-bal"))
clean(msg, ["bouncing-bal", "bouncing-ball"], "unknown system")
check(msg.count("bouncing-bal'") == 1, f"an unknown system is named once ({msg})")

# --- 2: the MIT planar impact data from Python, as the arrays the impact functions take; the README's
# impact lines run as written (from a folder outside the tree, as a user's)
if not hasattr(impulse, "impact_data"):
    check(False, "impulse.impact_data exists")
else:
    mit = impulse.impact_data()
    k = len(mit)
    check(k > 1000 and mit.d.shape == mit.n.shape == mit.v_pre.shape == mit.v_post.shape == (k, 3)
          and mit.W.shape == (k, 2, 2) and mit.u.shape == mit.P.shape == (k, 2), f"impact_data shapes ({mit})")
    minv = np.array([1 / mit.mass, 1 / mit.mass, 1 / mit.inertia])
    J = np.stack([mit.d, mit.n], axis=1)                                    # (k, 2, 3)
    W = np.einsum("kij,j,klj->kil", J, minv, J)
    check(np.allclose(W, mit.W), "W = J M^-1 J^T")
    check(np.allclose(mit.u + np.einsum("kij,kj->ki", mit.W, mit.P), np.einsum("kij,kj->ki", J, mit.v_post)),
          "J v_post = u + W P for the measured impulses")
    check(np.allclose(np.einsum("kij,kj->ki", J, mit.v_pre), mit.u) and np.all(mit.u[:, 1] < 0),
          "u = J v_pre, every impact approaching")
    corrected = impulse.impact_data(convention="corrected")
    check(np.array_equal(corrected.d[:, 2], -mit.d[:, 2]), "convention='corrected' flips d3")
with open(os.path.join(HERE, "..", "..", "README.md")) as f:
    readme = f.read()
block = readme.split("## Python", 1)[1].split("```python", 1)[1].split("```", 1)[0]
lines = [ln for ln in block.splitlines() if "impact_" in ln]
cwd = os.getcwd()
os.chdir(tmp)
try:
    env = {"impulse": impulse}
    exec("\n".join(lines), env)
    check(env["P"].shape == (len(env["mit"].u), 2) if "mit" in env else False, "the README's impact lines run")
except Exception as e:
    check(False, f"the README's impact lines run ({type(e).__name__}: {e})")
finally:
    os.chdir(cwd)

# --- 19: objects pleasant to inspect: reprs that say what a thing is, evaluate() printing in a few lines,
# a typed package (PEP 561)
r = repr(m)
check(r.startswith("Model(") and "cdl" in r and "epochs" in r, f"Model repr ({r})")
r = repr(cm)
check(r.startswith("ConstrainedModel(") and "chnn" in r and "parameters" in r, f"ConstrainedModel repr ({r})")
r = repr(ball)
check(r.startswith("Dataset(") and "bouncing-ball" in r, f"Dataset repr ({r})")
gp = impulse.GaussianProcess(np.linspace(0, 1, 8)[:, None], np.sin(np.linspace(0, 1, 8)), max_iter=5)
check(repr(gp).startswith("GaussianProcess(") and "8 points" in repr(gp), f"GaussianProcess repr ({gp!r})")
test = impulse.simulate("pendulum-chain:2", trajectories=2, steps=30, seed=2)
pc = impulse.train("chnn", impulse.simulate("pendulum-chain:2", trajectories=4, steps=30), epochs=1, chunks=4,
                   batch=4, hidden=8)
ev = pc.evaluate(test)
check(isinstance(ev, dict) and ev["rel_err"].shape == (2, 31), "evaluate() is still a dict of arrays")
check(len(repr(ev)) < 600 and "(2, 31)" in repr(ev), f"evaluate() prints compactly ({len(repr(ev))} chars)")
ev = m.evaluate(ball, predictions=True)
check(len(repr(ev)) < 800 and ev["states"].shape == (1, 60, 2), f"contact evaluate() prints compactly ({ev!r})")
pkg = os.path.join(HERE, "..", "..", "python")
with open(os.path.join(pkg, "pyproject.toml")) as f:
    check(os.path.exists(os.path.join(pkg, "impulse", "py.typed")) and "py.typed" in f.read(),
          "py.typed shipped with the package")

# --- 18: training shows progress by default: one line rewritten in place on a terminal, fitted to its
# width; a display updated in place in Jupyter; progress=False turns it off
class Tty(io.StringIO):
    def isatty(self):
        return True


def train_into(stream, **kw):
    old, sys.stderr = sys.stderr, stream
    try:
        return impulse.train("cdl", ball, epochs=3, hidden=8, **kw)
    except TypeError as e:
        check(False, f"train takes progress ({e})")
    finally:
        sys.stderr = old


os.environ["COLUMNS"] = "60"
tty = Tty()
train_into(tty)
lines = [x for x in tty.getvalue().replace("\n", "\r").split("\r") if x.strip()]
check(lines and "epoch 3/3" in lines[-1] and "loss" in lines[-1] and "ETA" in lines[-1],
      f"terminal: epoch, loss and ETA by default ({lines})")
check(lines and all(len(x) < 60 for x in lines) and "\r" in tty.getvalue(),
      f"terminal: one line rewritten in place, within 60 columns ({[len(x) for x in lines]})")
tty = Tty()
train_into(tty, callback=lambda e, loss: print(f"mine {e}", file=sys.stderr))
out = tty.getvalue()
check(all(f"\rmine {e}\n" in out for e in (1, 2, 3)) and "epoch 3/3" in out.rsplit("mine 3", 1)[-1],
      f"terminal: a callback's printing starts on a cleared line, the progress line comes back ({out!r})")
tty = Tty()
train_into(tty, progress=False)
check(tty.getvalue() == "", f"progress=False shows nothing ({tty.getvalue()!r})")
import types
shown = []


class Handle:
    def update(self, obj):
        shown.append(("update", repr(obj)))


def display(obj, display_id=False):
    shown.append(("display", repr(obj)))
    return Handle()


fake = types.ModuleType("IPython")
fake.get_ipython = lambda: types.SimpleNamespace(kernel=object())
fake_display = types.ModuleType("IPython.display")
fake_display.display = display
saved = {k: sys.modules.get(k) for k in ("IPython", "IPython.display")}
sys.modules.update({"IPython": fake, "IPython.display": fake_display})
try:
    plain = io.StringIO()
    train_into(plain)
finally:
    for k, v in saved.items():
        if v is None:
            sys.modules.pop(k, None)
        else:
            sys.modules[k] = v
check([k for k, _ in shown][:1] == ["display"] and shown and "epoch 3/3" in shown[-1][1]
      and all(k == "update" for k, _ in shown[1:]), f"Jupyter: one display, updated in place ({shown})")
check(plain.getvalue() == "", "Jupyter: nothing on stderr")
os.environ.pop("COLUMNS")

# --- 4: `import numpy; import impulse` (numpy loads OpenBLAS first) ends on the CPU's kernels, not the
# 'Prescott' ones a misdetected virtual CPU gets: simulated by numpy loading OpenBLAS with
# OPENBLAS_CORETYPE=Prescott, the variable then removed as if never set
import subprocess
with open("/proc/cpuinfo") as f:
    has_avx2 = " avx2" in f.read()
if has_avx2:
    code = ("import os, sys, warnings; warnings.simplefilter('error', RuntimeWarning); import numpy; "
            "os.environ.pop('OPENBLAS_CORETYPE'); sys.path.insert(0, sys.argv[1]); import impulse; "
            "a = numpy.random.default_rng(0).random((64, 32)); "
            "print(impulse.blas_core(), float(abs(a @ a.T - numpy.einsum('ij,kj->ik', a, a)).max()))")
    r = subprocess.run([sys.executable, "-c", code, os.path.join(HERE, "..", "..", "python")],
                       env=dict(os.environ, OPENBLAS_CORETYPE="Prescott"), capture_output=True, text=True)
    out = r.stdout.split()
    check(r.returncode == 0 and out and out[0] != "Prescott" and float(out[1]) < 1e-12,
          f"numpy first: OpenBLAS on the CPU's kernels, products right ({r.stdout.strip()} {r.stderr.strip()[-300:]})")

# --- 17: float32 positions are accepted by both strands, converted, with a notice (Python and the CLI)
def notices(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            fn()
        except impulse.Error as e:
            return f"error: {e}"
    return " | ".join(str(x.message) for x in w if issubclass(x.category, impulse.Notice))


ball32 = impulse.Dataset({k: (v.astype(np.float32) if k in ("q", "qdot") else v) for k, v in ball.arrays.items()},
                         ball.meta)
said32 = notices(lambda: impulse.train("cdl", ball32, epochs=1, hidden=8))
check("float32" in said32 and "q" in said32 and "error" not in said32, f"contact strand: float32 noted ({said32})")
dp32 = impulse.Dataset(dict(dp.arrays, z=dp["z"].astype(np.float32)), dp.meta)
said32 = notices(lambda: impulse.train("chnn", dp32, epochs=1, chunks=4, batch=4, hidden=8))
check("float32 z" in said32 and "error" not in said32, f"constrained strand: float32 noted ({said32})")
cli = os.environ.get("IMPULSE_CLI")
if cli:
    for name, data, model, extra in (("ball32.npz", ball32, "cdl", ["--hidden", "8"]),
                                     ("dp32.npz", dp32, "chnn", ["--chunks", "4", "--batch", "4", "--hidden", "8"])):
        path = os.path.join(tmp, name)
        data.save(path)
        r = subprocess.run([cli, "train", model, "--data", path, "--epochs", "1", "-o", path + ".model.npz"] + extra,
                           capture_output=True, text=True)
        check(r.returncode == 0 and "notice" in r.stderr and "float32" in r.stderr,
              f"impulse train {model} on float32 data: trains, with a notice ({r.stderr.strip()[-300:]})")

done()
