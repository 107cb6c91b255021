#!/usr/bin/python3
"""One CHNN training epoch on the 3-pendulum (800 chunks, batch 200, RK4
3/8 rule x 4 steps, L1, AdamW): impulse vs the PyTorch peer. impulse runs
in double and with its hidden-to-hidden products in single precision
(--precision single), on each thread count asked for; the peer on 1 and 2
threads. Printed: wall, process CPU and critical-path times (the slowest
thread's CPU time per minibatch, i.e. the epoch on otherwise idle cores),
the share of this machine's one-thread dgemm/sgemm peak the epoch's
products reach, the projection to the reference's 2000 epochs, and the
ratios of the epochs after the first (as the peer reports them): one thread
against one thread, and each at its best thread count.

usage: bench/bench_chnn.py [BUILD_DIR] [EPOCHS] [THREADS]   (default build, 3, 1,2)
"""
import os, re, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
build = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(root, "build")
epochs = sys.argv[2] if len(sys.argv) > 2 else "3"
threads = sys.argv[3] if len(sys.argv) > 3 else "1,2"
if not threads.startswith("1,") and threads != "1":
    threads = "1," + threads  # the PyTorch ratio is taken against 1 thread
exe = os.path.join(build, "bench_chnn")
subprocess.run(["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(root, "include"),
                os.path.join(here, "bench_chnn.c"), os.path.join(build, "libimpulse.a"),
                "-lopenblas", "-lmatio", "-lz", "-lm", "-lpthread", "-o", exe], check=True)
env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
core = subprocess.run([os.path.join(build, "impulse"), "info"], capture_output=True, text=True, env=env).stdout
m = re.search(r"suggested core type: (\S+)", core)
if m and "OPENBLAS_CORETYPE" not in env:
    env["OPENBLAS_CORETYPE"] = m.group(1)
data = os.path.join(build, "bench_chnn_data.npz")
c = subprocess.run([exe, epochs, data, threads], capture_output=True, text=True, env=env, check=True).stdout.strip()
print(c)
num = r"([\d.]+)"
for n, prec, w, cpu, crit in re.findall(r"(\d+) threads?, ([a-z ]+): .*?" + num + " s/epoch wall, " + num +
                                        " s/epoch cpu, " + num + " s/epoch critical", c):
    print(f"impulse {n} thread(s), {prec}: 2000 epochs = {2000 * float(w) / 60:.1f} min wall here, "
          f"{2000 * float(cpu) / 60:.1f} min of CPU, {2000 * float(crit) / 60:.1f} min on {n} otherwise idle "
          f"core(s) (critical path)")
# like for like: the peer reports the epochs after its first; so do these
ours = {(int(n), prec): float(t) for n, prec, t in
        re.findall(r"(\d+) threads?, ([a-z ]+): first epoch [\d.]+ s, then ([\d.]+) s/epoch wall", c)}
peer = {}
for pt in (1, 2):
    r = subprocess.run(["/usr/bin/python3", os.path.join(here, "bench_chnn_torch.py"), data, epochs, str(pt)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"PyTorch peer not run: {(r.stderr.strip().splitlines() or ['failed'])[-1]}")
    t = r.stdout.strip().splitlines()[-1]
    print(t)
    peer[pt] = float(re.search(r"([\d.]+) s/epoch wall", t).group(1))
for (n, prec), t in sorted(ours.items()):
    print(f"epochs after the first, wall: impulse {n} thread(s) {prec} {t:.4f} s against PyTorch 1 thread "
          f"{peer[1]:.4f} s: {peer[1] / t:.2f}x")
best_peer = min(peer.values())
for prec in sorted({p for _, p in ours}):
    best = min(t for (n, p), t in ours.items() if p == prec)
    print(f"best thread count each, {prec}: impulse {best:.4f} s against PyTorch {best_peer:.4f} s "
          f"(faster of 1 and 2 threads): {best_peer / best:.2f}x")
