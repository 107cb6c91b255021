"""`--json` of every verb that prints results, against docs/json.md, and `-`
for standard output and input (ctest runs it with /usr/bin/python3 and
IMPULSE_CLI set to the build's tool; Python's json module is the parser).

For each verb the object must be one line on stdout with "verb" naming the
verb, every key must be listed for that verb in the doc's table and in its
key table (so the doc and the tool cannot drift apart), and the keys the
doc lists before any optional part must be present."""
import json, os, re, subprocess, sys, tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
cli = os.environ.get("IMPULSE_CLI") or os.path.join(root, "build", "impulse")
from checks import check, done  # noqa: E402


# ---- the documented schema -------------------------------------------------
doc = open(os.path.join(root, "docs", "json.md")).read()
verb_rows, key_names = {}, set()
section = None
for line in doc.splitlines():
    if line.startswith("## "):
        section = line
    m = re.match(r"\| `([a-z -]+)` \| `impulse [^|]*` \| (.*) \|$", line)
    if m:
        verb_rows[m.group(1)] = m.group(2)
    elif section and "Keys" in section and line.startswith("| `"):
        key_names.update(re.findall(r"`([a-z_0-9]+)`", line.split("|")[1]))


def parts(text):
    """(mandatory, allowed) key sets of one doc cell part: mandatory are the
    keys named before the first optional clause ('(', ';', 'adds')."""
    allowed = set(re.findall(r"`([a-z_0-9]+)`", text))
    head = re.split(r"\(|;| adds", text)[0]
    return set(re.findall(r"`([a-z_0-9]+)`", head)), allowed


def schema(verb):
    cell = verb_rows[verb]
    top, _, rows = cell.partition("`rows`:")
    mand, allowed = parts(top)
    if "CD-Lagrange:" in cell:  # two strands in one cell: the keys of either
        mand = set()
    if rows:
        allowed.add("rows")
        mand.add("rows")
    row_mand, row_allowed = parts(rows) if rows else (set(), set())
    return mand, allowed, row_mand, row_allowed


def run(args, stdin=None, ok=True):
    r = subprocess.run([cli, *args], input=stdin, capture_output=True, cwd=work)
    if ok and r.returncode != 0:
        print("command failed:", args, r.stderr.decode(errors="replace"))
    return r


def check_json(verb, args, stdin=None):
    r = run(args, stdin)
    out = r.stdout.decode()
    try:
        obj = json.loads(out)
    except ValueError as e:
        check(False, f"{verb}: stdout is not one JSON object ({e}): {out[:200]!r}")
        return None
    check(r.returncode == 0 and out.count("\n") == 1 and out.endswith("\n"), f"{verb}: one line, exit 0")
    check(obj.get("verb") == verb, f"{verb}: \"verb\" is {obj.get('verb')!r}")
    mand, allowed, row_mand, row_allowed = schema(verb)
    keys = set(obj) - {"verb"}
    check(keys <= allowed, f"{verb}: keys not in the doc's row: {sorted(keys - allowed)}")
    check(mand <= keys, f"{verb}: documented keys missing: {sorted(mand - keys)}")
    check(keys <= key_names, f"{verb}: keys not in the doc's key table: {sorted(keys - key_names)}")
    for row in obj.get("rows", []):
        rk = set(row)
        check(rk <= row_allowed and row_mand <= rk and rk <= key_names,
              f"{verb}: row keys {sorted(rk)} against the doc's {sorted(row_allowed)}")
    return obj


work = tempfile.mkdtemp()
p = lambda name: os.path.join(work, name)
with open(p("run.csv"), "w") as f:
    f.write("t,q\n" + "".join(f"{0.01 * i:.2f},{1 - 0.05 * i:.3f}\n" for i in range(12)))

seen = {}
seen["simulate"] = check_json("simulate", ["simulate", "bouncing-ball", "--steps", "100", "-o", p("ball.npz"), "--json"])
sim_c = check_json("simulate", ["simulate", "pendulum-chain:1", "--trajectories", "4", "-o", p("pend.npz"), "--json",
                                "--quiet"])
check(sim_c and "max_rel_energy_drift" in sim_c and sim_c["trajectories"] == 4, "simulate (constrained): its drift")
check(seen["simulate"] and seen["simulate"]["steps"] == 100, "simulate: steps are the samples per trajectory")
seen["train"] = check_json("train", ["train", "cdl", "--data", p("ball.npz"), "--epochs", "2", "--horizon", "5",
                                     "--batch", "4", "-o", p("cdl.npz"), "--json", "--quiet"])
tr_c = check_json("train", ["train", "chnn", "--data", p("pend.npz"), "--epochs", "2", "--hidden", "8", "-o",
                            p("chnn.npz"), "--json", "--quiet"])
check(tr_c and tr_c["epochs_done"] == 2 and tr_c["end"] == "finished" and tr_c["parameters"] > 0, "train (chnn): epochs, end")
check(seen["train"] and seen["train"]["restitution_source"] == "learned", "train (cdl): its contact law")
seen["eval"] = check_json("eval", ["eval", "--model", p("cdl.npz"), "--data", p("ball.npz"), "--json"])
ev_c = check_json("eval", ["eval", "--model", p("chnn.npz"), "--data", p("pend.npz"), "--json"])
check(ev_c and sim_c and ev_c["steps"] == sim_c["steps"] and seen["eval"]["steps"] == seen["simulate"]["steps"],
      "steps: the same quantity (states per trajectory) from simulate and eval, in both strands")
# the same quantity under the same key in both strands
check(seen["eval"] and ev_c and {"model", "system", "trajectories", "steps"} <= set(seen["eval"]) & set(ev_c),
      "eval: shared keys in both strands")
check(seen["train"] and tr_c and set(seen["train"]) & set(tr_c) >= {"final_loss", "epochs_done", "seconds", "output"},
      "train: shared keys in both strands")
seen["import"] = check_json("import", ["import", p("run.csv"), "--finite-differences", "-o", p("run.npz"), "--json"])
seen["info"] = check_json("info", ["info", "--json"])
seen["impact drop"] = check_json("impact drop", ["impact", "drop", "--out", p("drops.npz"), "--set", p("set.npz"),
                                                 "--count", "60", "--seed", "3", "--json"])
seen["impact list-models"] = check_json("impact list-models", ["impact", "list-models", "--json"])
seen["impact predict"] = check_json("impact predict", ["impact", "predict", "--data", p("set.npz"), "--json"])
seen["impact identify"] = check_json("impact identify", ["impact", "identify", "--data", p("set.npz"), "--k", "5",
                                                         "--reps", "2", "--grid", "5", "--per-impact", "--json"])
seen["impact bounds"] = check_json("impact bounds", ["impact", "bounds", "--data", p("set.npz"), "--json"])
seen["impact export"] = check_json("impact export", ["impact", "export", "--data", p("set.npz"), "--out",
                                                     p("set2.npz"), "--json"])
seen["impact gp-fit"] = check_json("impact gp-fit", ["impact", "gp-fit", "--data", p("drops.npz"), "--out", p("gp.npz"),
                                                     "--train", "20", "--restarts", "0", "--json"])
seen["impact gp-eval"] = check_json("impact gp-eval", ["impact", "gp-eval", "--data", p("drops.npz"), "--gp",
                                                       p("gp.npz"), "--json"])
seen["inspect"] = check_json("inspect", ["inspect", p("ball.npz"), "--json"])
check(seen["inspect"] and seen["inspect"]["contact_strand"] is None and seen["inspect"]["meta"]["system"] ==
      "bouncing-ball" and {a["name"] for a in seen["inspect"]["arrays"]} >= {"q", "qdot", "contact"},
      "inspect: the arrays, the meta object, the contact strand can train")
ins_c = check_json("inspect", ["inspect", p("pend.npz"), "--json"])
check(ins_c and ins_c["constrained_strand"] is None and ins_c["contact_strand"] and ins_c["trajectories"] == 4,
      "inspect (constrained data): the constrained strand can train, the contact strand says why not")
ins_m = check_json("inspect", ["inspect", p("cdl.npz"), "--json"])
check(ins_m and ins_m.get("model") == "cdl", "inspect (checkpoint): its model")
ins_csv = check_json("inspect", ["inspect", p("run.csv"), "--json"])
check(ins_csv and ins_csv["format"] == "csv" and "q" in ins_csv["contents"], "inspect (CSV): what it holds")
seen["impact learning-curve"] = check_json("impact learning-curve", [
    "impact", "learning-curve", "--data", p("drops.npz"), "--sizes", "10,20", "--repeats", "2", "--test", "20",
    "--ident", "10", "--restarts", "0", "--grid", "5", "--models", "x1-impulse,residual-impulse", "--json"])
lc = seen["impact learning-curve"]
check(lc and [(r["model"], r.get("train")) for r in lc["rows"]][:4] ==
      [("x1-impulse", 10), ("x1-impulse", 20), ("residual-impulse", 10), ("residual-impulse", 20)] and
      [r["model"] for r in lc["rows"][4:]] == ["best-post-hoc", "irb-velocity", "base-law"],
      "impact learning-curve: one row per model and size, then the references")
check(set(verb_rows) == set(seen), f"every verb of the doc's table is tested: {sorted(set(verb_rows) ^ set(seen))}")
b = seen["impact bounds"]
check(b and [r["model"] for r in b["rows"]][:3] == ["irb-velocity", "irb-momentum", "best-post-hoc"] and
      all(r["mean_error"] >= 0 for r in b["rows"]), "impact bounds: one row per bound")
# the two verbs sum the errors in another order: equal to rounding
check(seen["impact gp-fit"] and seen["impact gp-eval"] and
      abs(seen["impact gp-fit"]["mean_error"] - seen["impact gp-eval"]["mean_error"]) <=
      1e-12 * seen["impact gp-fit"]["mean_error"] and seen["impact gp-eval"]["impacts"] == seen["impact gp-fit"]["impacts"],
      "gp-eval on the held-out impacts repeats gp-fit's mean_error")

# ---- '-': standard output and input ----------------------------------------
piped = run(["simulate", "bouncing-ball", "--steps", "100", "-o", "-"]).stdout
check(piped == open(p("ball.npz"), "rb").read(), "simulate -o - writes the bytes of -o FILE")
piped = run(["import", p("run.csv"), "--finite-differences", "-o", "-"]).stdout
check(piped == open(p("run.npz"), "rb").read(), "import -o - writes the bytes of -o FILE")
pend = run(["simulate", "pendulum-chain:1", "--trajectories", "4", "-o", "-", "--quiet"]).stdout
tr_pipe = check_json("train", ["train", "chnn", "--data", "-", "--epochs", "2", "--hidden", "8", "-o", p("chnn2.npz"),
                               "--json", "--quiet"], stdin=pend)
check(tr_pipe and tr_c and tr_pipe["final_loss"] == tr_c["final_loss"], "train --data - trains as on the file (same loss)")
cp = run(["train", "chnn", "--data", p("pend.npz"), "--epochs", "2", "--hidden", "8", "-o", "-", "--quiet"])
check(cp.returncode == 0 and cp.stdout[:2] == b"PK" and b"trained" not in cp.stdout,
      "train -o -: the checkpoint alone on stdout")
exported = run(["impact", "export", "--data", p("set.npz"), "--out", "-"]).stdout
check(exported == open(p("set2.npz"), "rb").read(), "impact export --out - writes the bytes of --out FILE")
b_pipe = check_json("impact bounds", ["impact", "bounds", "--data", "-", "--json"], stdin=exported)
check(b_pipe == b, "impact bounds --data - reads the set from stdin")
pr = run(["impact", "predict", "--data", p("set.npz"), "--model", "mirtich", "--out", "-"])
check(pr.returncode == 0 and pr.stdout[:2] == b"PK" and b"| convention" in pr.stderr,
      "impact predict --out -: impulses on stdout, the table on stderr")
# a verb that peeks at a checkpoint's kind and then loads it reads '-' twice: the same bytes
for model, data in (("cdl.npz", "ball.npz"), ("chnn.npz", "pend.npz")):
    ev_pipe = check_json("eval", ["eval", "--model", "-", "--data", p(data), "--json"],
                         stdin=open(p(model), "rb").read())
    ev_file = check_json("eval", ["eval", "--model", p(model), "--data", p(data), "--json"])
    drop_t = lambda d: {k: v for k, v in (d or {}).items() if k != "seconds"}
    check(ev_pipe and drop_t(ev_pipe) == drop_t(ev_file), f"eval --model - ({model}) evaluates as from the file")
ro_pipe = run(["rollout", "--model", "-", "--state", "1,0", "--steps", "20", "-o", "-"],
              stdin=open(p("cdl.npz"), "rb").read()).stdout
run(["rollout", "--model", p("cdl.npz"), "--state", "1,0", "--steps", "20", "-o", p("ro.npz")])
check(ro_pipe[:2] == b"PK" and ro_pipe == open(p("ro.npz"), "rb").read(), "rollout --model - -o -: the file's bytes")
pred = run(["eval", "--model", p("cdl.npz"), "--data", p("ball.npz"), "--predictions", "-"])
run(["eval", "--model", p("cdl.npz"), "--data", p("ball.npz"), "--predictions", p("pred.npz")])
check(pred.stdout == open(p("pred.npz"), "rb").read() and b"rmse" in pred.stderr,
      "eval --predictions -: the predictions alone on stdout, the summary on stderr")
gp_pipe = check_json("impact gp-fit", ["impact", "gp-fit", "--data", "-", "--out", p("gp2.npz"), "--train", "20",
                                      "--restarts", "0", "--json"], stdin=open(p("drops.npz"), "rb").read())
check(gp_pipe and gp_pipe["mean_error"] == seen["impact gp-fit"]["mean_error"], "impact gp-fit --data -: as from the file")
ins_pipe = check_json("inspect", ["inspect", "-", "--json"], stdin=open(p("ball.npz"), "rb").read())
same_but_name = lambda a, b: {k: v for k, v in a.items() if k not in ("file", "constrained_strand")} == \
    {k: v for k, v in b.items() if k not in ("file", "constrained_strand")}
check(ins_pipe and same_but_name(ins_pipe, seen["inspect"]) and
      ins_pipe["constrained_strand"] == seen["inspect"]["constrained_strand"].replace(p("ball.npz"), "-"),
      "inspect -: as the file (messages name '-')")
# every impact verb that writes a file: '-' gives the file's bytes alone on stdout
for args in (["impact", "drop", "--count", "20", "--seed", "3"],
             ["impact", "gp-fit", "--data", p("drops.npz"), "--train", "20", "--restarts", "0"],
             ["impact", "gp-eval", "--data", p("drops.npz"), "--gp", p("gp.npz")],
             ["impact", "identify", "--data", p("set.npz"), "--k", "5", "--reps", "2", "--grid", "5", "--per-impact"],
             ["impact", "bounds", "--data", p("set.npz")]):
    r = run(args + ["--out", "-"])
    run(args + ["--out", p("out.npz")])
    check(r.returncode == 0 and r.stdout[:2] == b"PK" and r.stdout == open(p("out.npz"), "rb").read() and r.stderr,
          f"{' '.join(args[:2])} --out -: the file's bytes on stdout, the summary on stderr")
lc_args = ["impact", "learning-curve", "--data", p("drops.npz"), "--sizes", "10,20", "--repeats", "2", "--test", "20",
           "--ident", "10", "--restarts", "0", "--grid", "5", "--models", "x1-impulse"]
lc_out = run(lc_args + ["--out", "-"]).stdout
run(lc_args + ["--out", p("lc.md")])
# the table's title and its last line hold the run's seconds, which may differ
# between the runs (under load: "x1-impulse 0.1;" against "0.0;")
strip = lambda t: re.sub(rb"Fitting time per model[^\n]*", b"", re.sub(rb", \d+ s\)", b")", t))
check(lc_out.startswith(b"### Learning curve") and strip(lc_out) == strip(open(p("lc.md"), "rb").read()),
      "impact learning-curve --out -: the table once on stdout, as in --out FILE")
for args in (["simulate", "bouncing-ball", "-o", "-", "--json"],
             ["eval", "--model", p("cdl.npz"), "--data", p("ball.npz"), "--predictions", "-", "--json"],
             ["train", "chnn", "--data", p("pend.npz"), "-o", "-", "--json"],
             ["impact", "bounds", "--data", p("set.npz"), "--out", "-", "--json"]):
    r = run(args, ok=False)
    err = r.stderr.decode()
    check(r.returncode != 0 and r.stdout == b"" and err.count("\n") == 1 and "standard output" in err,
          f"{' '.join(args[:2])} --json with '-': refused in one line ({err.strip()})")

done()
