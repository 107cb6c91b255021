# the copied checkpoint with its touched contact's e and mu set to the truth's (e 0 -> 1e-4), evaluated
import sys, math, os
sys.path.insert(0, "/work/wt-impenergy/python")
import impulse, numpy as np
model, data, e, mu = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
m = impulse.load_model(model)
cs = m.contacts
nc = len(cs)
touched = [i for i, c in enumerate(cs) if (c["e"], c["mu"]) != (0.5, 0.25)]
for s in (10.0, 1.0):
    p = m.params.copy()
    for i in touched:
        p[len(p) - 2 * nc + 2 * i] = math.log(e / (1 - e)) / s
        p[len(p) - 2 * nc + 2 * i + 1] = math.log(math.expm1(mu)) / s
    m.params[:] = p
    if all(abs(m.contacts[i]["e"] - e) < 1e-9 and abs(m.contacts[i]["mu"] - mu) < 1e-9 for i in touched):
        break
print([(c["e"], c["mu"]) for c in m.contacts])
r = m.evaluate(impulse.load_data(data) if hasattr(impulse, "load_data") else data)
ie = r["impact_energy"]
print(os.path.basename(model), "e", e, "mu", mu, "one_step", ie["one_step"], "rollout", ie["rollout"], "map", ie["at_model_impacts"])
