#!/usr/bin/env python3
"""The compliant ball in a box's restitution as the data show it (issue 24,
docs/cdl.md "Ball in a box"): the training set's 24 trajectories simulated
again, noise-free, at dt 0.0005 (impulse simulate compliant-ball-box, same
seed: the same starts), each contact's onset and release located where the
gap crosses zero, and per impact with an approach speed above 0.3 m/s:
  e onset/offset = release speed / approach speed (the spring-damper's
                   apparent restitution, what --restitution sets),
  e* rigid       = the restitution of the instantaneous impact that
                   reproduces both free flights around the contact (the pre-
                   and post-contact parabolas, extended, meet below the floor),
grouped by approach speed. Writes OUT/apparent-e.md.

    /usr/bin/python3 scripts/ball_box_apparent_e.py [OUT]   (default results/ball-box)
"""
import os, subprocess, sys
import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "results/ball-box"
impulse = os.environ.get("IMPULSE", "build/impulse")
fine = os.path.join(out, "fine.npz.tmp")
subprocess.run([impulse, "simulate", "compliant-ball-box", "--trajectories", "24", "--seed", "100", "--dt", "0.0005",
                "--steps", "16000", "-o", fine], check=True, stdout=subprocess.DEVNULL)
d = np.load(fine)
q, v = d["q_clean"], d["qdot_clean"]
os.remove(fine)
h, g, W = 0.0005, 9.81, 1.5
rows = []  # pair, approach speed u0, release speed u1, contact duration
for n in range(q.shape[0]):
    for pair, gap, un in [(0, q[n, :, 1], v[n, :, 1]), (1, q[n, :, 0] + W, v[n, :, 0]), (2, W - q[n, :, 0], -v[n, :, 0])]:
        i = 1
        while i < len(gap):
            if gap[i] < 0 <= gap[i - 1]:
                j = i
                while j < len(gap) and gap[j] < 0:
                    j += 1
                if j == len(gap):
                    break
                a = gap[i - 1] / (gap[i - 1] - gap[i])
                b = gap[j - 1] / (gap[j - 1] - gap[j])
                u0 = -(un[i - 1] + a * (un[i] - un[i - 1]))
                u1 = un[j - 1] + b * (un[j] - un[j - 1])
                rows.append((pair, u0, u1, (j - 1 + b - (i - 1 + a)) * h))
                i = j
            i += 1
r = np.array(rows)
r = r[r[:, 1] > 0.3]
lines = ["| contact | approach speed (m/s) | impacts | contact time (s) | e onset/offset | e* rigid |", "|---|---|---|---|---|---|"]
for p, name in enumerate(["floor", "left wall", "right wall"]):
    bands = [(0.3, 1), (1, 2), (2, 4), (4, 9), (0.3, 9)] if p == 0 else [(0.3, 9)]
    for lo, hi in bands:
        k = (r[:, 0] == p) & (r[:, 1] >= lo) & (r[:, 1] < hi)
        u0, u1, T = r[k, 1], r[k, 2], r[k, 3]
        gp = g if p == 0 else 0.0
        s = T * (u1 + gp * T / 2) / (u0 + u1 + gp * T)  # where the extended parabolas meet
        es = (u1 + gp * (T - s)) / (u0 + gp * s)
        lines.append("| %s | %s | %d | %.4f | %.3f | %.3f |" % (name, "all" if (lo, hi) == (0.3, 9) else "%g-%g" % (lo, hi),
                                                               k.sum(), T.mean(), (u1 / u0).mean(), es.mean()))
open(os.path.join(out, "apparent-e.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
