"""impulse: learn the dynamics of mechanical systems with contact and
constraints, and model planar impacts (Python interface to libimpulse).

Three strands, all on numpy arrays:

    import impulse                       # sets up OpenBLAS (before or after numpy)
    ball = impulse.simulate("bouncing-ball", noise=0.05, restitution=0.8, steps=200)
    m = impulse.train("cdl", ball, epochs=100, callback=lambda e, loss: print(e, loss["loss"]))
    m.evaluate(ball)                     # {'rmse': ..., 'rmse_code': ..., 'energy_drift': ...}
    states, contact = m.rollout(ball.initial_states())

    pend = impulse.simulate("pendulum-chain:2", trajectories=50, seed=0)
    c = impulse.train("chnn", pend, epochs=20)
    c.evaluate(impulse.simulate("pendulum-chain:2", trajectories=10, seed=2, rollout_start=4))

    mit = impulse.impact_data()          # the MIT planar impact data, as the arrays below take
    P = impulse.impact_predict("mirtich", mit.W, mit.u, mu=0.2, eps=0.5)   # W (n, 2, 2), u (n, 2)

Datasets (`Dataset`) hold named numpy arrays plus a `meta` dict and read and
write the same .npz files as the `impulse` command. Models are saved and
loaded as the same checkpoints. For the same seed and options, results are
bit-identical to the command line's.

The library is found through $IMPULSE_LIBRARY, then the copy installed with
this package, then a build folder of the source tree, then the system's
loader path. Errors raise impulse.Error with the library's one-line message.

The modules mirror the library's parts: impulse.data (Dataset, simulate),
impulse.contact (Model, the CD-Lagrange family), impulse.constrained
(ConstrainedModel, CHNN and friends), impulse.training (train, load_model),
impulse.impact (planar impact laws), impulse.sweeps (reproductions),
impulse.contacts (the contact module: detection, assembly, the multi-contact
impulse solve and their reverse passes), impulse.rigid (one tossed rigid
body: trajectory files, metrics, the rigid step, box-toss, rigid-identified,
the end-to-end network); every
public name is also importable from impulse itself.
"""
from __future__ import annotations

from . import _lib
from ._lib import VERSION as __version__
from ._lib import Error, Notice, lib
from .constrained import CONSTRAINED_MODELS, ConstrainedModel
from .contact import CONTACT_MODELS, Model
from .data import CONTACT_SYSTEMS, Dataset, simulate
from .impact import (IMPACT_LAWS, GaussianProcess, ImpactData, impact_data, impact_identify, impact_irb,
                     impact_predict, impact_table1)
from .sweeps import REPRODUCTIONS, contact_rows, cube_peer, cube_rows, reproduce, sweep_plan, sweep_report, sweep_run
from .contacts import ContactModel, ContactSystem, contact_solve, contact_solve_backward
from .rigid import (RigidBody, RigidE2E, RigidModel, RigidTrajectories, box_toss, box_toss_initial, rigid_ballistic,
                    rigid_identify, rigid_learn, rigid_lowest_corner, rigid_metrics, rigid_quat_angle, rigid_split)
from ._run import TRAIN_FAR_ABOVE_BEST
from .training import load_model, train

__all__ = ["Error", "Notice", "Dataset", "Model", "ConstrainedModel", "simulate", "train", "load_model", "library_path",
           "blas_core", "CONTACT_SYSTEMS", "CONTACT_MODELS", "CONSTRAINED_MODELS", "IMPACT_LAWS",
           "impact_data", "ImpactData", "impact_predict", "impact_irb", "impact_identify", "impact_table1", "GaussianProcess", "version",
           "REPRODUCTIONS", "sweep_plan", "sweep_run", "sweep_report", "reproduce", "TRAIN_FAR_ABOVE_BEST",
           "contact_rows", "cube_peer", "cube_rows", "ContactModel", "ContactSystem", "contact_solve", "contact_solve_backward",
           "RigidBody", "RigidTrajectories", "RigidModel", "RigidE2E", "box_toss", "box_toss_initial",
           "rigid_metrics", "rigid_quat_angle", "rigid_lowest_corner", "rigid_ballistic", "rigid_split",
           "rigid_identify", "rigid_learn"]
version = __version__
library_path: str = _lib.path


def blas_core() -> str:
    """The OpenBLAS kernel family in use (e.g. 'SkylakeX'; 'Prescott' means SSE3 only)."""
    return lib.imp_blas_corename().decode()


Error.__module__ = Notice.__module__ = __name__
