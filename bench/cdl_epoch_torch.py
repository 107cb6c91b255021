#!/usr/bin/env python3
"""PyTorch peer of bench/bench_cdl.c: one training epoch of a CD-Lagrange
network on the bouncing ball (one trajectory of 500 steps, horizon 10,
batch 32), the same architecture (potential 1-500-1 softplus, no output
bias; contact net 2-100-100-1 relu/sigmoid), the same step (kick-drift-kick
with Newton-restitution impulse gated by the observed contact labels) and
the same loss (state MSE + contact BCE + L2 on the potential), float64
(or float32, the Keras default of the reference code, with a third
argument "float32"), one thread unless a fourth argument asks for more.
Run with Debian's interpreter:
/usr/bin/python3 bench/cdl_epoch_torch.py DATA.npz [EPOCHS] [float64|float32] [THREADS]
Prints seconds per epoch, wall and process CPU time: the mean of the epochs after the first (torch's
warm-up, 5-10 % slower), as bench_cdl.c times impulse after a warm-up epoch."""
import sys, time
import numpy as np
import torch

torch.set_num_threads(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
dtype = torch.float32 if len(sys.argv) > 3 and sys.argv[3] == "float32" else torch.float64
torch.set_default_dtype(dtype)

data = np.load(sys.argv[1])
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
q, v, c = (torch.tensor(data[k][0], dtype=dtype) for k in ("q", "qdot", "contact"))
h, e, H, B = 0.02, float(__import__("json").loads(str(data["meta"]))["restitution"]), 10, 32
T = q.shape[0]

U = torch.nn.Sequential(torch.nn.Linear(1, 500), torch.nn.Softplus(), torch.nn.Linear(500, 1, bias=False))
C = torch.nn.Sequential(torch.nn.Linear(2, 100), torch.nn.ReLU(), torch.nn.Linear(100, 100), torch.nn.ReLU(),
                        torch.nn.Linear(100, 1), torch.nn.Sigmoid())
params = list(U.parameters()) + list(C.parameters())
opt = torch.optim.Adam(params, lr=1e-2, eps=1e-7)

def gradU(x):
    if not x.requires_grad:
        x = x.requires_grad_(True)
    return torch.autograd.grad(U(x).sum(), x, create_graph=True)[0]

def window_loss(q0, v0, tq, tv, lab):
    qn, vn = q0, v0
    g = gradU(qn)
    ls, lc = 0.0, 0.0
    for k in range(H):
        vh = vn - 0.5 * h * g
        qt = qn + h * vh
        p = C(torch.cat([qt, vh], 1))
        gate = lab[:, k]
        g = gradU(qt)
        vS = vh - h * g
        P = -e * vh - vS                         # wall contact, unit mass
        vn = vh - 0.5 * h * g + gate * P
        qn = qt
        ls = ls + (((qn - tq[:, k]) ** 2 + (vn - tv[:, k]) ** 2) / 2).mean()
        lc = lc + torch.nn.functional.binary_cross_entropy(p.clamp(1e-7, 1 - 1e-7), gate)
    l2 = 5e-3 * sum((w ** 2).sum() for n, w in U.named_parameters() if "weight" in n)
    return ls + lc + l2

starts = np.arange(T - H)
idx = torch.arange(H)
times, cpus = [], []
for ep in range(epochs):
    rng = np.random.default_rng(ep)
    rng.shuffle(starts)
    t0, c0 = time.perf_counter(), time.process_time()
    for b in range(0, len(starts), B):
        s = torch.tensor(starts[b:b + B])
        rows = s[:, None] + 1 + idx[None, :]
        loss = window_loss(q[s], v[s], q[rows], v[rows], c[rows])
        opt.zero_grad()
        loss.backward()
        opt.step()
    times.append(time.perf_counter() - t0)
    cpus.append(time.process_time() - c0)
rest = slice(1, None) if len(times) > 1 else slice(0, None)
# wall seconds, then process CPU seconds (all threads), per epoch
print(f"{sum(times[rest]) / len(times[rest]):.6f} {sum(cpus[rest]) / len(cpus[rest]):.6f}")
