#!/usr/bin/env python3
"""Issue 24: where CD-Lagrange's training loss (impacts at their event time)
puts each contact's e and mu on bouncing-disks:5 when gravity, masses and
radii are exact (bench/bench_cdl_law_profile.c), and which single steps
the event step gets wrong at the true law.

Prints two markdown tables:
  1. per pair, the e and mu minimising the window loss (horizon 10, every
     window of the acceptance's training set; every other pair at the truth);
  2. per pair, the steps in which its e enters the loss, split by whether
     the pair met an impact in that step in the data (its normal velocity
     reverses) and whether another active pair shares a body, with the
     steps whose loss at the true law exceeds 1e-2 ("wrong") and the median
     of the e fitted to each isolated impact step alone.

    /usr/bin/python3 scripts/disks_law_profile.py [--build build] [--system bouncing-disks:5]

Needs the bench programs built (cmake option IMPULSE_BENCH, on by default).
"""
import argparse
import collections
import os
import subprocess
import sys
import tempfile

import numpy as np


def run_bench(build, data, *opts):
    out = subprocess.run([os.path.join(build, "bench_cdl_law_profile"), data, "event", *opts], check=True,
                         capture_output=True, text=True).stdout
    rows = [line.split("\t") for line in out.splitlines() if line and not line.startswith("#")]
    return rows[0], rows[1:]


def normal_velocity(d, tr, p, s):
    q, v = d["q_clean"][tr], d["qdot_clean"][tr]
    i, j = d["contact_pairs"][p]
    if d["contact_kinds"][p] == 1:
        dx = q[s, 3 * j:3 * j + 2] - q[s, 3 * i:3 * i + 2]
        return (v[s, 3 * j:3 * j + 2] - v[s, 3 * i:3 * i + 2]) @ (dx / np.linalg.norm(dx))
    return v[s, 3 * j:3 * j + 3] @ d["contact_normals"][p]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--system", default="bouncing-disks:5")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "train.npz")
        subprocess.run([os.path.join(a.build, "impulse"), "simulate", a.system, "--trajectories", "20", "--seed", "100",
                        "-o", data], check=True, capture_output=True)
        d = dict(np.load(data))
        _, prof = run_bench(a.build, data)
        _, steps = run_bench(a.build, data, "steps")
    pairs = d["contact_pairs"]
    print("| pair | bodies | e true | e at the loss minimum | error | mu true | mu at the loss minimum |")
    print("|---|---|---|---|---|---|---|")
    for r in prof:
        p, bi, bj = int(r[0]), int(r[1]), int(r[2])
        who = "%d, %s" % (bj, "wall" if bi < 0 else "disk %d" % bi)
        if r[5] == "-":
            print("| %d | %s | %s | no window | | %s | |" % (p, who, r[4], r[7]))
        else:
            print("| %d | %s | %s | %s | %s | %s | %s |" % (p, who, r[4], r[5], r[6], r[7], r[8]))
    print()
    cnt = collections.defaultdict(collections.Counter)
    fit = collections.defaultdict(list)
    for r in steps:
        p, tr, t, loss, e_true, e_step = int(r[0]), int(r[1]), int(r[2]), float(r[3]), float(r[4]), float(r[5])
        others = [int(x) for x in r[7].split(",")] if r[7] != "-" else []
        mine = set(pairs[p]) - {-1}
        shared = any(set(pairs[o]) & mine for o in others)
        impact = normal_velocity(d, tr, p, t - 1) < 0 < normal_velocity(d, tr, p, t)
        key = ("impact" if impact else "no impact") + (", shared" if shared else ", alone")
        cnt[p][key] += 1
        cnt[p][key + " wrong"] += loss > 1e-2
        if impact and not shared:
            fit[p].append(e_step - e_true)
    keys = ["impact, alone", "impact, shared", "no impact, alone", "no impact, shared"]
    print("| pair | " + " | ".join("%s (wrong)" % k for k in keys) + " | median e error, isolated impact steps |")
    print("|---|" + "---|" * (len(keys) + 1))
    for p in sorted(cnt):
        cells = ["%d (%d)" % (cnt[p][k], cnt[p][k + " wrong"]) for k in keys]
        med = "%+.4f" % np.median(fit[p]) if fit[p] else ""
        print("| %d | %s | %s |" % (p, " | ".join(cells), med))
    return 0


if __name__ == "__main__":
    sys.exit(main())
