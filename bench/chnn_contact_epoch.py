#!/usr/bin/python3
"""One training epoch of CLNN with contact on chain-ground:3, impulse against
its PyTorch peer (bench/chnn_contact_epoch_torch.py), one thread against one
thread (issue #25's speed target: at least 3x). Both train on the same 800
five-state trajectories (`impulse simulate chain-ground:3 --trajectories 800
--steps 4 --rollout-start 4`: each is one chunk), batch 200, in double by
default.

impulse: `impulse train clnn --threads 1` (contact is on by default where
the system declares contacts) run for 1 and for
1 + EPOCHS epochs; its epoch is the difference of the two runs' CPU times
over EPOCHS (set-up and the first epoch cancel). The peer: the CPU time of
its epochs after the first. Run the whole under `nice -n 19` on a shared
machine and say so with the numbers.

Both sides load the same OpenBLAS (PyTorch through libblas.so.3), whose
kernel family OPENBLAS_CORETYPE picks. BLAS_CORE sets it for both: `suggested`
(default) is what `impulse info` suggests for this CPU (what the impulse tool
uses when the variable is unset: SkylakeX on an AVX-512 CPU), `inherit` keeps
the caller's environment, any other value is passed as is (e.g. Haswell).

PRECISION `double` (default) trains impulse with `--precision double` and
the peer in float64. `single` trains impulse with `--precision single` (the
network's products with every dimension above four through sgemm,
everything else double) and times the peer twice, with `--float32` and in
float64; it prints both ratios (ratio_peer_float32_over_impulse,
ratio_peer_float64_over_impulse; ratio_peer_over_impulse is the float32
one).

usage: bench/chnn_contact_epoch.py [BUILD_DIR] [EPOCHS] [BLAS_CORE] [PRECISION]
       (default build, 2, suggested, double)
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
build = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(root, "build")
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
cli = os.path.join(build, "impulse")
core = sys.argv[3] if len(sys.argv) > 3 else "suggested"
precision = sys.argv[4] if len(sys.argv) > 4 else "double"
if precision not in ("double", "single"):
    sys.exit(f"chnn_contact_epoch.py: error: PRECISION must be double or single, not {precision!r}")
env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
if core == "suggested":
    info = subprocess.run([cli, "info"], capture_output=True, text=True, env=dict(env, IMPULSE_NO_REEXEC="1")).stdout
    found = [ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("suggested core type:")]
    core = found[0] if found else "inherit"
if core != "inherit":
    env["OPENBLAS_CORETYPE"] = core
data = os.path.join(build, "chnn_contact_epoch_data.npz")
if not os.path.exists(data):
    subprocess.run([cli, "simulate", "chain-ground:3", "--trajectories", "800", "--steps", "4", "--rollout-start", "4",
                    "--seed", "0", "-o", data, "--quiet"], check=True, env=env)


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def train(e, out):
    c0 = child_cpu()
    r = subprocess.run([cli, "train", "clnn", "--data", data, "-o", out, "--epochs", str(e), "--threads", "1",
                        "--batch", "200", "--chunks", "800", "--quiet", "--checkpoint-seconds", "0",
                        "--precision", precision],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"impulse train clnn failed: {r.stderr.strip()}")
    return child_cpu() - c0, (r.stdout.strip().splitlines() or [""])[-1]


with tempfile.TemporaryDirectory() as tmp:
    t1, _ = train(1, os.path.join(tmp, "m1.npz"))
    tn, summary = train(1 + epochs, os.path.join(tmp, "mn.npz"))
ours = (tn - t1) / epochs


def peer_run(float32):
    r = subprocess.run(["/usr/bin/python3", os.path.join(here, "chnn_contact_epoch_torch.py"), data, str(1 + epochs),
                        "--threads", "1"] + (["--float32"] if float32 else []), capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"PyTorch peer not run: {(r.stderr.strip().splitlines() or ['failed'])[-1]}")
    return [json.loads(x) for x in r.stdout.strip().splitlines()]


out = {"data": data, "epochs_timed": epochs, "openblas_coretype": env.get("OPENBLAS_CORETYPE", "unset"),
       "precision": precision, "impulse_epoch_cpu_s": ours, "impulse_summary": summary}
runs = [("", False)] if precision == "double" else [("_float32", True), ("_float64", False)]
for tag, float32 in runs:
    lines = peer_run(float32)
    peer = lines[-1]["epoch_cpu_s_after_first"]
    out.update({"peer" + tag: lines[-1]["impl"], "peer" + tag + "_epoch_cpu_s": peer,
                "peer" + tag + "_contact_maps_per_epoch": [x["contact_maps"] for x in lines[:-1]],
                "ratio_peer" + tag + "_over_impulse": peer / ours if ours > 0 else None})
if precision == "single":
    out["ratio_peer_over_impulse"] = out["ratio_peer_float32_over_impulse"]
print(json.dumps(out, indent=1))
