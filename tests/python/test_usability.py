"""The Python package as a newcomer meets it (issue 27): module layout, names,
messages, reprs, progress, the impact data. ctest runs it with /usr/bin/python3
and IMPULSE_LIBRARY set to the build's libimpulse; the package comes from python/."""
import io, os, sys, tempfile
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import impulse
import numpy as np

failed = passed = 0


def check(cond, what):
    global failed, passed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAILED:", what)


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

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
