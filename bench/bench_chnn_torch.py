#!/usr/bin/python3
"""PyTorch peer of bench/bench_chnn.c: one CHNN training epoch on the
3-pendulum with the reference's hot path (Finzi et al. 2020 code, see
/work/shared/reference/chnn.md section 5): float32, MLP 3x256 tanh with
orthogonal init, exp mass parameters, H = p^T M^-1 p / 2 + V(x) with
create_graph for grad H, DPhi rebuilt at every evaluation, projection
P(u) = u - J G (G^T J G)^-1 G^T u via linalg.solve, RK4 3/8 rule (4 steps),
L1 loss over all 5 states, AdamW 3e-3 / 1e-4, cosine schedule, batch 200,
800 chunks. One thread unless asked for more.

usage: bench_chnn_torch.py data.npz [epochs] [threads]   (data written by bench_chnn; 2, 1)
"""
import sys, time, json
import numpy as np
import torch
import torch.nn as nn

path = sys.argv[1]
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
torch.set_num_threads(threads)
torch.manual_seed(0)
f = np.load(path)
meta = json.loads(str(f["meta"]))
dt = float(meta["dt"])
z = f["z"]                            # (n, T, 2, N, 2)
chunks = torch.tensor(z[:, :5], dtype=torch.float32)   # (800, 5, 2, N, 2)
n_pts, d = chunks.shape[3], chunks.shape[4]
# 3-pendulum: tether point 0 to origin, links (0,1), (1,2)
edges = [(0, -1)] + [(i - 1, i) for i in range(1, n_pts)]
C = len(edges)


class CHNN(nn.Module):
    def __init__(self):
        super().__init__()
        layers, k = [], n_pts * d
        for _ in range(3):
            lin = nn.Linear(k, 256)
            nn.init.orthogonal_(lin.weight)
            layers += [lin, nn.Tanh()]
            k = 256
        last = nn.Linear(256, 1)
        nn.init.orthogonal_(last.weight)
        layers.append(last)
        self.V = nn.Sequential(*layers)
        self.theta = nn.Parameter(0.1 * torch.randn(n_pts))

    def minv(self, p):                # p (bs, N, d); point masses
        return p * torch.exp(-self.theta)[None, :, None]

    def H(self, x, p):
        bs = x.shape[0]
        return 0.5 * (p * self.minv(p)).sum((1, 2)) + self.V(x.reshape(bs, -1)).squeeze(-1)

    def DPhi(self, x, v):
        """G: gradients of (Phi, Phidot) wrt (x, v), shape (bs, 2N d, 2C)."""
        bs = x.shape[0]
        G = x.new_zeros(bs, 2, n_pts, d, 2, C)
        for c, (i, j) in enumerate(edges):
            xi, vi = x[:, i], v[:, i]
            xj = x[:, j] if j >= 0 else torch.zeros_like(xi)
            vj = v[:, j] if j >= 0 else torch.zeros_like(vi)
            G[:, 0, i, :, 0, c] = 2 * (xi - xj)
            G[:, 0, i, :, 1, c] = 2 * (vi - vj)
            G[:, 1, i, :, 1, c] = 2 * (xi - xj)
            if j >= 0:
                G[:, 0, j, :, 0, c] = -2 * (xi - xj)
                G[:, 0, j, :, 1, c] = -2 * (vi - vj)
                G[:, 1, j, :, 1, c] = -2 * (xi - xj)
        return G

    def forward(self, t, zz):          # zz (bs, 2, N, d) = (x, p)
        with torch.enable_grad():
            x, p = zz[:, 0], zz[:, 1]
            if not zz.requires_grad:
                zz = zz.requires_grad_(True)
                x, p = zz[:, 0], zz[:, 1]
            H = self.H(x, p).sum()
            dH = torch.autograd.grad(H, zz, create_graph=True)[0]
        bs = zz.shape[0]
        v = self.minv(p)
        G = self.DPhi(x, v)
        # dPhidot/dp = M^-1 dPhidot/dv
        Gp = self.minv(G[:, 1].permute(0, 3, 4, 1, 2).reshape(bs * 2 * C, n_pts, d))
        G = torch.cat([G[:, 0:1], Gp.reshape(bs, 2, C, n_pts, d).permute(0, 3, 4, 1, 2)[:, None]], 1)
        G = G.reshape(bs, 2 * n_pts * d, 2 * C)
        dH = dH.reshape(bs, 2 * n_pts * d)
        nd = n_pts * d
        JdH = torch.cat([dH[:, nd:], -dH[:, :nd]], 1)
        JG = torch.cat([G[:, nd:], -G[:, :nd]], 1)
        GJG = G.transpose(1, 2) @ JG
        lam = torch.linalg.solve(GJG, (G.transpose(1, 2) @ JdH[..., None]))
        zdot = JdH - (JG @ lam).squeeze(-1)
        return zdot.reshape(bs, 2, n_pts, d)


def rk38(f, z0, h, steps):
    out, z = [z0], z0
    for _ in range(steps):
        k1 = f(0, z)
        k2 = f(0, z + h * k1 / 3)
        k3 = f(0, z + h * (k2 - k1 / 3))
        k4 = f(0, z + h * (k1 - k2 + k3))
        z = z + h * (k1 + 3 * (k2 + k3) + k4) / 8
        out.append(z)
    return torch.stack(out, 1)


model = CHNN()
print("torch CHNN parameters:", sum(p.numel() for p in model.parameters()))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2000)
loader = torch.utils.data.DataLoader(chunks, batch_size=200, shuffle=True)
times, cpus = [], []
for ep in range(epochs):
    t0, c0 = time.perf_counter(), time.process_time()
    for batch in loader:
        x0, v0 = batch[:, 0, 0], batch[:, 0, 1]
        p0 = v0 * torch.exp(model.theta)[None, :, None]
        zz0 = torch.stack([x0, p0], 1)
        pred = rk38(model, zz0, dt, 4)                 # (bs, 5, 2, N, d)
        pred_v = torch.stack([pred[:, :, 0], model.minv(pred[:, :, 1].reshape(-1, n_pts, d)).reshape(pred[:, :, 1].shape)], 2)
        loss = (pred_v - batch).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    sched.step()
    times.append(time.perf_counter() - t0)
    cpus.append(time.process_time() - c0)
    print(f"epoch {ep + 1}: {times[-1]:.3f} s wall, {cpus[-1]:.3f} s cpu, loss {loss.item():.4g}")
# the first epoch includes torch's warm-up; report the mean of the rest
rest = slice(1, None) if epochs > 1 else slice(0, None)
print(f"torch CHNN 3-pendulum, {threads} thread{'s' if threads > 1 else ''}: {sum(times[rest]) / len(times[rest]):.4f} s/epoch wall, "
      f"{sum(cpus[rest]) / len(cpus[rest]):.4f} s/epoch cpu")
