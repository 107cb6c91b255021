#!/usr/bin/python3
"""One CHNN training epoch on the 3-pendulum (800 chunks, batch 200, RK4
3/8 rule x 4 steps, L1, AdamW): impulse vs the PyTorch peer, one thread
each, printed as a ratio. Process CPU time is compared (the machine is
shared); wall times are printed too. impulse is also timed on 2 threads
(wall, process CPU, and the critical path: the slowest thread's CPU time
per minibatch, i.e. the epoch on otherwise idle cores), with the
projection to the reference's 2000 epochs.

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
for n, w, cpu, crit in re.findall(r"(\d+) threads?: .*?([\d.]+) s/epoch wall, ([\d.]+) s/epoch cpu, ([\d.]+) s/epoch critical", c):
    print(f"impulse {n} thread(s): 2000 epochs = {2000 * float(w) / 60:.1f} min wall here, "
          f"{2000 * float(cpu) / 60:.1f} min of CPU, {2000 * float(crit) / 60:.1f} min on {n} otherwise idle "
          f"core(s) (critical path)")
r = subprocess.run(["/usr/bin/python3", os.path.join(here, "bench_chnn_torch.py"), data, epochs],
                   capture_output=True, text=True, env=env)
if r.returncode != 0:
    sys.exit(f"PyTorch peer not run: {(r.stderr.strip().splitlines() or ['failed'])[-1]}")
t = r.stdout.strip().splitlines()[-1]
print(t)
cw, cc = map(float, re.search(r"1 thread: .*?([\d.]+) s/epoch wall, ([\d.]+) s/epoch cpu", c).groups())
tw, tc = map(float, re.search(r"([\d.]+) s/epoch wall, ([\d.]+) s/epoch cpu", t).groups())
print(f"speed-up of impulse (1 thread) over PyTorch (cpu time per epoch): {tc / cc:.2f}x  (wall: {tw / cw:.2f}x)")
# like for like: the peer reports the epochs after its first; so does this line
for n, steady in re.findall(r"(\d+) threads?: first epoch [\d.]+ s, then ([\d.]+) s/epoch wall", c):
    print(f"epochs after the first, wall: impulse {n} thread(s) {float(steady):.4f} s against PyTorch 1 thread "
          f"{tw:.4f} s: {tw / float(steady):.2f}x")
