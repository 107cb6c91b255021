"""Issue 25: how much of a learned model's impact-energy error comes from
its e and mu. Loads a CHNN/CLNN-with-contact checkpoint, sets e and mu of
every contact it learned (the ones not at their initial 0.5, 0.25) to the
given values, and prints eval's impact_energy block on the test data (the
one-step and rollout measures, and the impact map alone).

  IMPULSE_LIBRARY=build/libimpulse.so /usr/bin/python3 scripts/chnn_contact_truth_e.py MODEL.npz TEST.npz E MU
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import impulse  # noqa: E402

model, data, e, mu = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
m = impulse.load_model(model)
cs = m.contacts
nc = len(cs)
touched = [i for i, c in enumerate(cs) if (c["e"], c["mu"]) != (0.5, 0.25)]
# the last 2 n_contacts parameters: a_c, b_c with e = sigmoid(s a_c), mu = softplus(s b_c); s is 10, or 1 in
# checkpoints written before the contact scale: take the one that gives back e and mu
for s in (10.0, 1.0):
    p = m.params.copy()
    for i in touched:
        p[len(p) - 2 * nc + 2 * i] = math.log(e / (1 - e)) / s
        p[len(p) - 2 * nc + 2 * i + 1] = math.log(math.expm1(mu)) / s
    m.params[:] = p
    if all(abs(m.contacts[i]["e"] - e) < 1e-9 and abs(m.contacts[i]["mu"] - mu) < 1e-9 for i in touched):
        break
else:
    sys.exit("chnn_contact_truth_e.py: could not set e and mu")
ie = m.evaluate(data)["impact_energy"]
print(os.path.basename(model), "e", e, "mu", mu, "one_step", ie["one_step"], "rollout", ie["rollout"],
      "at_model_impacts", ie["at_model_impacts"], "impact_map", ie["impact_map"],
      "impact_map_true_masses", ie["impact_map_true_masses"], "compliance", ie["compliance"])
