#!/usr/bin/python3
"""One training epoch of CLNN with contact on chain-ground:3, impulse against
its PyTorch peer (bench/chnn_contact_epoch_torch.py), one thread against one
thread (issue #25's speed target: at least 3x). Both train on the same 800
five-state trajectories (`impulse simulate chain-ground:3 --trajectories 800
--steps 4 --rollout-start 4`: each is one chunk), batch 200, in double.

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

usage: bench/chnn_contact_epoch.py [BUILD_DIR] [EPOCHS] [BLAS_CORE]   (default build, 2, suggested)
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
                        "--batch", "200", "--chunks", "800", "--quiet", "--checkpoint-seconds", "0"],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"impulse train clnn failed: {r.stderr.strip()}")
    return child_cpu() - c0, (r.stdout.strip().splitlines() or [""])[-1]


with tempfile.TemporaryDirectory() as tmp:
    t1, _ = train(1, os.path.join(tmp, "m1.npz"))
    tn, summary = train(1 + epochs, os.path.join(tmp, "mn.npz"))
ours = (tn - t1) / epochs
r = subprocess.run(["/usr/bin/python3", os.path.join(here, "chnn_contact_epoch_torch.py"), data, str(1 + epochs),
                    "--threads", "1"], capture_output=True, text=True, env=env)
if r.returncode != 0:
    sys.exit(f"PyTorch peer not run: {(r.stderr.strip().splitlines() or ['failed'])[-1]}")
lines = [json.loads(x) for x in r.stdout.strip().splitlines()]
peer = lines[-1]["epoch_cpu_s_after_first"]
print(json.dumps({"data": data, "epochs_timed": epochs, "openblas_coretype": env.get("OPENBLAS_CORETYPE", "unset"), "impulse_epoch_cpu_s": ours, "impulse_summary": summary,
                  "peer": lines[-1]["impl"], "peer_epoch_cpu_s": peer,
                  "peer_contact_maps_per_epoch": [x["contact_maps"] for x in lines[:-1]],
                  "ratio_peer_over_impulse": peer / ours if ours > 0 else None}, indent=1))
