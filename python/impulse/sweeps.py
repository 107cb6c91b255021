"""The papers' reproductions as resumable sweeps (`impulse sweep`, `impulse reproduce`).
"""
from __future__ import annotations

import ctypes
import os
from typing import Callable


from . import _lib
from . import _rigid_lib  # the cube plan's mirror and signatures
from ._lib import Error, check, lib, libc_free
from ._run import _Interrupt


REPRODUCTIONS = ("cdl", "chnn", "impact", "your-data", "cube", "contact")


def _c_str(v):
    return None if v is None else os.fsencode(v) if isinstance(v, os.PathLike) else str(v).encode()


def sweep_plan(name: str, path: str | os.PathLike | None = None, *, quick: bool = False, **options) -> str:
    """The task list of a paper's reproduction, as `impulse sweep plan NAME` /
    `impulse reproduce NAME --plan PATH`; returns the plan's text and writes it
    to `path` if given.

    name "cdl" (Hochlehnert et al. 2021): seeds, first_seed, epochs,
    settings ("code" or "paper"), only ("pendulum,ball-touch,..."), threads.
    name "chnn" (Finzi et al. 2020): preset ("full", "all", "quick", "tiny"),
    systems, models, n_train_list (comma lists), seeds, first_seed, epochs,
    n_train, n_test, hidden, lr, single (bool: precision=single tasks, ids
    ending .f32).
    name "impact" (Fazeli et al. 2017): data (the data_ellipse.mat path,
    required), variant, target, seed, gp (bool: the GP learning-curve tasks).
    name "your-data" (docs/your-data.md: CD-Lagrange, ResNetContact and
    ResNet on compliant-contact data with a touch sensor): seeds, epochs,
    system, restitution, noise, heldout, impact_law ("auto", "paper",
    "newton"), lr_schedule ("auto", "constant", "cosine"), threads.
    name "cube" (docs/cube.md: real cube tosses; end-to-end, MuJoCo fitted,
    ballistic): data (impulse's rigid-body file or the ContactNets file,
    required), test (a file of test tosses), tosses (list of N), seeds, steps,
    max_evals, mujoco (bool; default: whether the peer program cube_mujoco
    is found, as `impulse reproduce cube` decides).
    name "contact" (docs/contact.md: the ball in a box, several bodies, the
    constrained systems that hit things, simulated box tosses): seeds,
    epochs, only ("ball-box,points,disks,constrained,box-toss"), threads,
    box_tosses.
    quick=True: the reproduction's --quick settings.
    """
    plan = _lib.SweepPlan()
    keep = []

    def fill(opts, allowed):
        for k, v in options.items():
            if k not in allowed:
                raise Error(f"sweep_plan {name}: unknown option '{k}' (known: {', '.join(sorted(allowed))})")
            if isinstance(v, bool):
                v = int(v)
            if isinstance(getattr(opts, k), bytes) or dict(opts._fields_)[k] is _lib.c_char_p:
                v = _c_str(",".join(map(str, v)) if isinstance(v, (list, tuple)) else v)
                keep.append(v)
            setattr(opts, k, v)

    if name == "cdl":
        o = _lib.SweepCdlOpts()
        lib.imp_sweep_cdl_opts_default(ctypes.byref(o))
        fill(o, {"seeds", "first_seed", "epochs", "settings", "only", "threads"})
        o.quick = int(quick)
        check(lib.imp_sweep_plan_cdl(ctypes.byref(plan), ctypes.byref(o)))
    elif name == "chnn":
        o = _lib.SweepChnnOpts()
        lib.imp_sweep_chnn_opts_default(ctypes.byref(o))
        if quick:
            o.preset = b"quick"
        fill(o, {"preset", "systems", "models", "n_train_list", "seeds", "first_seed", "epochs", "n_train", "n_test",
                 "hidden", "lr", "single"})
        check(lib.imp_sweep_plan_chnn(ctypes.byref(plan), ctypes.byref(o)))
    elif name == "impact":
        o = _lib.SweepImpactOpts()
        lib.imp_sweep_impact_opts_default(ctypes.byref(o))
        if "data" in options:
            options["data"] = os.path.abspath(os.fspath(options["data"]))
        fill(o, {"data", "variant", "target", "seed", "gp"})
        o.quick = int(quick)
        check(lib.imp_sweep_plan_impact(ctypes.byref(plan), ctypes.byref(o)))
    elif name == "your-data":
        o = _lib.SweepYourDataOpts()
        lib.imp_sweep_your_data_opts_default(ctypes.byref(o))
        fill(o, {"seeds", "epochs", "system", "restitution", "noise", "heldout", "impact_law", "lr_schedule",
                 "threads"})
        o.quick = int(quick)
        check(lib.imp_sweep_plan_your_data(ctypes.byref(plan), ctypes.byref(o)))
    elif name == "cube":
        o = _rigid_lib.SweepCubeOpts()
        lib.imp_sweep_cube_opts_default(ctypes.byref(o))
        if "mujoco" not in options:
            options["mujoco"] = cube_peer() is not None
        for k in ("data", "test"):
            if options.get(k) is not None:
                options[k] = os.path.abspath(_lib.fspath(options[k], k))
        if options.get("data") is None:
            raise Error("sweep_plan cube: data (the ContactNets file or impulse import's output) is required")
        fill(o, {"data", "test", "tosses", "seeds", "steps", "max_evals", "mujoco"})
        o.quick = int(quick)
        check(lib.imp_sweep_plan_cube(ctypes.byref(plan), ctypes.byref(o)))
    elif name == "contact":
        o = _lib.SweepContactOpts()
        lib.imp_sweep_contact_opts_default(ctypes.byref(o))
        fill(o, {"seeds", "epochs", "only", "threads", "box_tosses"})
        o.quick = int(quick)
        check(lib.imp_sweep_plan_contact(ctypes.byref(plan), ctypes.byref(o)))
    else:
        raise Error(f"sweep_plan: '{name}' unknown (known: {', '.join(REPRODUCTIONS)})")
    try:
        buf = ctypes.c_void_p()
        check(lib.imp_sweep_plan_text(ctypes.byref(plan), ctypes.byref(buf)))
        text = ctypes.string_at(buf).decode()
        libc_free(buf)
    finally:
        lib.imp_sweep_plan_free(ctypes.byref(plan))
    if path is not None:
        tmp = os.fspath(path) + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    return text


def sweep_run(plan: str | os.PathLike, out: str | os.PathLike, *, threads: int = 2,
              progress: Callable[[str], None] | None = None) -> dict:
    """Run the tasks of a plan (a plan file, or the text sweep_plan returned)
    not yet done in the folder `out`, longest first, as `impulse sweep run`:
    each task's result and checkpoint are written atomically under
    out/tasks/<id>/, a finished task is never run again, so a run stopped by
    Ctrl-C (after the task being trained reaches the end of an epoch) or
    killed resumes where it stopped. Several processes may share `out`.
    threads: training threads per task (the constrained networks; CD-Lagrange
    tasks name theirs in the plan). progress(line) gets one line of text now
    and then. Returns {"ran", "skipped", "failed", "stopped"}; a failing task
    is counted (its message in out/tasks/<id>/error.txt), not raised.
    """
    plan_c = _lib.SweepPlan()
    text = os.fspath(plan)
    if "\n" in text or text.lstrip().startswith("task "):
        check(lib.imp_sweep_plan_parse(ctypes.byref(plan_c), text.encode(), b"plan"))
    else:
        check(lib.imp_sweep_plan_load(ctypes.byref(plan_c), os.fsencode(text)))
    try:
        d = os.fsencode(out)
        check(lib.imp_sweep_prepare(ctypes.byref(plan_c), d))
        o = _lib.SweepRunOpts()
        lib.imp_sweep_run_opts_default(ctypes.byref(o))
        o.threads = threads
        o.runner = b"python"

        def on_progress(user, line):
            if progress is not None:
                try:
                    progress(line.decode("utf-8", "replace"))
                except BaseException as e:  # never unwind through C
                    print(f"impulse: the progress callback raised {e!r}")
        keep = (_lib.SWEEP_PROGRESS_FN(on_progress), None)
        o.progress = keep[0] if progress is not None else _lib.SWEEP_PROGRESS_FN()
        summary = _lib.SweepSummary()
        with _Interrupt() as intr:
            stop_fn = _lib.SWEEP_STOP_FN(lambda user: 1 if intr.hit else 0)
            o.should_stop = stop_fn
            st = lib.imp_sweep_run_plan(ctypes.byref(plan_c), d, ctypes.byref(o), ctypes.byref(summary))
            if st:
                lib.imp_clear_error()  # failed tasks are in the summary and their error.txt
        return {"ran": summary.ran, "skipped": summary.skipped, "failed": summary.failed, "stopped": intr.hit}
    finally:
        lib.imp_sweep_plan_free(ctypes.byref(plan_c))


def sweep_report(out: str | os.PathLike) -> str:
    """The report of a sweep folder from whatever is finished, as
    `impulse sweep report`: writes out/report.md, out/index.html and each
    reproduction's tables and figures, and returns the Markdown text (which
    lists the tasks not done)."""
    buf = ctypes.c_void_p()
    check(lib.imp_sweep_report(os.fsencode(out), ctypes.byref(buf)))
    text = ctypes.string_at(buf).decode()
    libc_free(buf)
    return text


def reproduce(name: str, out: str | os.PathLike, *, quick: bool = False, threads: int = 2,
              progress: Callable[[str], None] | None = None, **options) -> str:
    """A paper's reproduction, as `impulse reproduce NAME --out OUT`: its plan
    (sweep_plan options), run in `out` (resuming what an earlier call left)
    and reported; returns the report's Markdown."""
    text = sweep_plan(name, quick=quick, **options)
    sweep_run(text, out, threads=threads, progress=progress)
    return sweep_report(out)


def cube_peer() -> str | None:
    """The MuJoCo peer program of the cube reproduction, or None when not
    found: $IMPULSE_CUBE_MUJOCO, else cube_mujoco beside the running program
    (as the library looks), else beside libimpulse or in the bin/ folder next
    to its lib/ folder (Python is the running program here), which is then
    put in $IMPULSE_CUBE_MUJOCO so that sweep_run's cube tasks find it too."""
    buf = ctypes.create_string_buffer(4096)
    if lib.imp_sweep_cube_peer(buf, len(buf)):
        return buf.value.decode()
    if "IMPULSE_CUBE_MUJOCO" in os.environ:
        return None
    here = os.path.dirname(os.path.realpath(_lib.path)) if _lib.path else ""
    for cand in (os.path.join(here, "cube_mujoco"), os.path.join(here, "..", "bin", "cube_mujoco")):
        if here and os.path.isfile(cand) and os.access(cand, os.X_OK):
            os.environ["IMPULSE_CUBE_MUJOCO"] = os.path.abspath(cand)
            return os.environ["IMPULSE_CUBE_MUJOCO"]
    return None


def _rows(fn, out) -> list[dict]:
    import json
    buf = ctypes.c_void_p()
    check(fn(os.fsencode(out), ctypes.byref(buf)))
    text = ctypes.string_at(buf).decode() if buf.value else ""
    if buf.value:
        libc_free(buf)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def cube_rows(out: str | os.PathLike) -> list[dict]:
    """The cube results of a sweep folder, as `impulse reproduce cube --json`
    prints them: one dict per finished task and test set (model, tosses,
    seed, test, test_tosses, position_error_pct, rotation_error_deg,
    penetration_pct, seconds)."""
    return _rows(lib.imp_sweep_cube_rows, out)


def contact_rows(out: str | os.PathLike) -> list[dict]:
    """The contact results of a sweep folder, as `impulse reproduce contact
    --json` prints them: one dict per finished task, "part" "model" (system,
    config, model, seed, rmse, min_gap, seconds, and per contact pair e, mu,
    e_true, mu_true, impacts), "constrained" (system, model, seed, n_test,
    rel_err_first5, rel_err_rollout) or "box-toss" (model, tosses, seed, e,
    mu, e_true, mu_true, position_error_pct, penetration_pct)."""
    return _rows(lib.imp_sweep_contact_rows, out)
