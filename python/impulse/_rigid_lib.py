"""ctypes mirrors and signatures of the contact module (include/impulse/contact.h),
the rigid-body trajectories, metrics, time stepper and models
(include/impulse/rigid_traj.h, rigid_model.h, rigid_models.h) and the cube
sweep plan (include/impulse/sweep.h). The library's imp_abi_sizeof does not
know these structs; tests/python/test_rigid_contact.py compares every mirror
with the C compiler's sizeof and offsetof."""
from __future__ import annotations

import ctypes

from ._lib import P, Struct, c_char_p, c_double, c_int, c_size_t, dptr, lib, MAX_BODIES, MAX_CONTACTS

c_i64, c_u64 = ctypes.c_int64, ctypes.c_uint64
ipt = P(c_int)

CONTACT_MAX_ROWS = 3 * MAX_CONTACTS
RIGID_MAX_POINTS = 8
RIGID_STATE = 13
RIGID_QUAT_TOL = 1e-6
WALL = -1


class ContactBody(Struct):
    _fields_ = [("kind", c_int), ("mass", c_double), ("inertia", c_double * 9)]


class ContactCandidate(Struct):
    _fields_ = [("kind", c_int), ("body_a", c_int), ("body_b", c_int), ("point_a", c_double * 3),
                ("point_b", c_double * 3), ("radius_a", c_double), ("radius_b", c_double),
                ("normal", c_double * 3), ("offset", c_double), ("e", c_double), ("mu", c_double)]


class ContactModel(Struct):
    _fields_ = [("dim", c_int), ("n_bodies", c_int), ("bodies", ContactBody * MAX_BODIES),
                ("n_candidates", c_int), ("cand", ContactCandidate * MAX_CONTACTS), ("gap_tol", c_double),
                ("nq", c_int), ("nv", c_int), ("q_offset", c_int * MAX_BODIES), ("v_offset", c_int * MAX_BODIES)]


class ContactFrame(Struct):
    _fields_ = [("phi", c_double), ("n", c_double * 3), ("t", (c_double * 3) * 2), ("pa", c_double * 3),
                ("pb", c_double * 3)]


class ContactGeomGrad(Struct):
    _fields_ = [("point_a", c_double * 3), ("point_b", c_double * 3), ("radius_a", c_double),
                ("radius_b", c_double), ("offset", c_double)]


class ContactSolveOpts(Struct):
    _fields_ = [("tol", c_double), ("max_sweeps", c_int), ("max_pivots", c_int), ("regularization", c_double),
                ("lambda0", dptr)]


class ContactSolution(Struct):
    _fields_ = [("n", c_int), ("dim", c_int), ("lambda_", c_double * CONTACT_MAX_ROWS),
                ("u_plus", c_double * CONTACT_MAX_ROWS), ("eps", c_double), ("regularization", c_double),
                ("branch", c_int * MAX_CONTACTS), ("slide", (c_double * 2) * MAX_CONTACTS), ("sweeps", c_int),
                ("pivots", c_int), ("residual", c_double), ("fallback", c_int), ("law", c_int)]


class RigidBody(Struct):
    _fields_ = [("size", c_double * 3), ("mass", c_double), ("inertia", c_double * 3)]


class RigidTraj(Struct):
    _fields_ = [("n_rows", c_size_t), ("n_episodes", c_int), ("states", dptr), ("lengths", P(c_i64)),
                ("ids", P(c_i64)), ("dt", c_double), ("body", RigidBody), ("ground_height", c_double),
                ("gravity", c_double), ("source", ctypes.c_char * 256)]


class RigidStats(Struct):
    _fields_ = [("n_episodes", c_int), ("n_rows", c_size_t), ("min_length", c_size_t), ("max_length", c_size_t),
                ("max_quat_norm_error", c_double), ("n_diffs", c_size_t), ("lin_median", c_double),
                ("lin_p95", c_double), ("lin_max", c_double), ("ang_median", c_double), ("ang_p95", c_double),
                ("ang_max", c_double), ("ang_world_median", c_double), ("repeated_rows", c_size_t),
                ("repeated_angvel", c_size_t), ("first_angvel_repeated", c_int), ("max_step_angle", c_double),
                ("max_speed", c_double)]


class RigidMetrics(Struct):
    _fields_ = [("position_error_pct", c_double), ("rotation_error_deg", c_double), ("penetration_pct", c_double)]


class RigidModel(Struct):
    _fields_ = [("mass", c_double), ("inertia", c_double * 3), ("n_points", c_int),
                ("points", (c_double * 3) * RIGID_MAX_POINTS), ("e", c_double), ("mu", c_double),
                ("ground", c_double), ("gravity", c_double), ("e_threshold", c_double),
                ("warm_start", c_int), ("dv0", c_double * 3)]


class RigidModelGrad(Struct):
    _fields_ = [("e", c_double), ("mu", c_double), ("ground", c_double),
                ("points", (c_double * 3) * RIGID_MAX_POINTS)]


class RigidStepTrace(Struct):
    _fields_ = [("h", c_double), ("s", c_double * 13), ("qn", c_double * 4), ("qnorm", c_double),
                ("vm", c_double * 6), ("vp", c_double * 6), ("n_active", c_int),
                ("active", c_int * RIGID_MAX_POINTS), ("phi", c_double * RIGID_MAX_POINTS),
                ("e", c_double * RIGID_MAX_POINTS), ("frames", ContactFrame * RIGID_MAX_POINTS),
                ("J", c_double * (3 * RIGID_MAX_POINTS * 6)), ("BT", c_double * (3 * RIGID_MAX_POINTS * 6)),
                ("A", c_double * (9 * RIGID_MAX_POINTS * RIGID_MAX_POINTS)), ("um", c_double * (3 * RIGID_MAX_POINTS)),
                ("r", c_double * 4), ("rnorm", c_double), ("sol", ContactSolution)]


class BoxTossOpts(Struct):
    _fields_ = [("n_tosses", c_int), ("n_samples", c_int), ("dt", c_double), ("substeps", c_int), ("e", c_double),
                ("mu", c_double), ("ground", c_double), ("gravity", c_double), ("body", RigidBody), ("seed", c_u64)]


class RigidIdentOpts(Struct):
    _fields_ = [("substeps", c_int), ("max_evals", c_int), ("window", c_int), ("e0", c_double), ("mu0", c_double),
                ("ground0", c_double), ("algorithm", c_int)]


class RigidLearnOpts(Struct):
    _fields_ = [("substeps", c_int), ("window", c_int), ("batch", c_int), ("steps", c_int), ("lr", c_double),
                ("eval_every", c_int), ("learn_points", c_int), ("point_scale", c_double), ("ground_scale", c_double),
                ("seed", c_u64), ("fit_evals", c_int), ("learn_inertia", c_int),
                ("learn_dv0", c_int), ("select_inertia", c_int), ("rot_weight", c_double),
                ("prior_ground_sd", c_double), ("prior_inertia_sd", c_double), ("prior_point_sd", c_double)]


class RigidLearnReport(Struct):
    _fields_ = [("best_step", c_int), ("valid_score", c_double), ("train_loss", c_double),
                ("skipped_windows", c_int), ("seconds", c_double),
                ("fit_evals", c_int), ("fit_loss", c_double), ("fit_valid_nominal", c_double),
                ("fit_valid_inertia", c_double), ("inertia_kept", c_int),
                ("valid_position_pct", c_double), ("valid_rotation_deg", c_double)]


class RigidIdentResult(Struct):
    _fields_ = [("loss", c_double), ("train", RigidMetrics), ("evals", c_int)]


class RigidModelCtx(Struct):
    _fields_ = [("model", P(RigidModel)), ("dt", c_double), ("substeps", c_int)]


class SweepCubeOpts(Struct):
    _fields_ = [("data", c_char_p), ("test", c_char_p), ("tosses", c_char_p), ("seeds", c_int), ("quick", c_int),
                ("steps", c_int), ("max_evals", c_int), ("mujoco", c_int)]


MLP_MAX_LAYERS = 8
RIGID_E2E_IN = 11


class Mlp(Struct):
    _fields_ = [("n_layers", c_int), ("sizes", c_int * (MLP_MAX_LAYERS + 1)), ("hidden_act", c_int),
                ("output_act", c_int), ("last_bias", c_int), ("w_off", c_size_t * MLP_MAX_LAYERS),
                ("b_off", c_size_t * MLP_MAX_LAYERS), ("n_params", c_size_t)]


class RigidE2eOpts(Struct):
    _fields_ = [("hidden", c_int), ("layers", c_int), ("act", c_int), ("steps", c_int), ("batch", c_int),
                ("lr", c_double), ("eval_every", c_int), ("window", c_int), ("noise", c_double),
                ("seed", ctypes.c_ulonglong)]


class RigidE2e(Struct):
    _fields_ = [("net", Mlp), ("params", dptr), ("in_mean", c_double * RIGID_E2E_IN),
                ("in_scale", c_double * RIGID_E2E_IN), ("out_mean", c_double * RIGID_STATE),
                ("out_scale", c_double * RIGID_STATE), ("work", ctypes.c_void_p)]


class RigidE2eReport(Struct):
    _fields_ = [("best_step", c_int), ("valid_score", c_double), ("train_loss", c_double), ("seconds", c_double)]


# name in C -> mirror; the test compares each with the compiler's sizeof
MIRRORS = {"imp_contact_body": ContactBody, "imp_contact_candidate": ContactCandidate,
           "imp_contact_model": ContactModel, "imp_contact_frame": ContactFrame,
           "imp_contact_geom_grad": ContactGeomGrad, "imp_contact_solve_opts": ContactSolveOpts,
           "imp_contact_solution": ContactSolution, "imp_rigid_body": RigidBody, "imp_rigid_traj": RigidTraj,
           "imp_rigid_stats": RigidStats, "imp_rigid_metrics": RigidMetrics, "imp_rigid_model": RigidModel,
           "imp_rigid_model_grad": RigidModelGrad, "imp_rigid_step_trace": RigidStepTrace,
           "imp_box_toss_opts": BoxTossOpts, "imp_rigid_ident_opts": RigidIdentOpts,
           "imp_rigid_ident_result": RigidIdentResult,
           "imp_rigid_learn_opts": RigidLearnOpts, "imp_rigid_learn_report": RigidLearnReport, "imp_rigid_model_ctx": RigidModelCtx,
           "imp_sweep_cube_opts": SweepCubeOpts, "imp_mlp": Mlp, "imp_rigid_e2e_opts": RigidE2eOpts,
           "imp_rigid_e2e": RigidE2e, "imp_rigid_e2e_report": RigidE2eReport}

MINV_FN = ctypes.CFUNCTYPE(c_int, dptr, dptr, c_int, c_int, ctypes.c_void_p)
ROLLOUT_FN = ctypes.CFUNCTYPE(c_int, dptr, c_size_t, ctypes.c_void_p, dptr)
V = ctypes.c_void_p
CM, CF, CS = P(ContactModel), P(ContactFrame), P(ContactSolution)
_SIGS = [
    # contact.h
    ("imp_contact_model_init", [CM], c_int), ("imp_contact_state_check", [CM, dptr], c_int),
    ("imp_contact_advance", [CM, dptr, dptr, c_double, dptr], None),
    ("imp_contact_kinetic_energy", [CM, dptr], c_double),
    ("imp_contact_detect", [CM, dptr, CF], c_int),
    ("imp_contact_jacobian", [CM, dptr, CF, c_int, dptr], None),
    ("imp_contact_jacobian_backward", [dptr, P(ContactGeomGrad), c_double, dptr, CM, dptr, CF, c_int], None),
    ("imp_contact_minv_bodies", [dptr, dptr, c_int, c_int, V], c_int),
    ("imp_contact_minv_dense", [dptr, dptr, c_int, c_int, V], c_int),
    ("imp_contact_minv_bodies_backward", [dptr, dptr, dptr, CM], None),
    ("imp_contact_gap_rate", [CM, dptr, CF, c_int, dptr], c_double),
    ("imp_contact_active_set", [CM, dptr, CF, dptr, P(ctypes.c_byte), ipt], c_int),
    ("imp_contact_attribute_labels", [CM, CF, P(ctypes.c_ubyte), c_double, P(ctypes.c_byte)], c_int),
    ("imp_contact_assemble_jacobian", [CM, dptr, CF, ipt, c_int, dptr], None),
    ("imp_contact_compliance", [dptr, dptr, dptr, c_int, c_int, MINV_FN, V], c_int),
    ("imp_contact_compliance_backward", [dptr, dptr, dptr, dptr, dptr, dptr, c_int, c_int, MINV_FN, V, dptr], c_int),
    ("imp_contact_solve_opts_default", [P(ContactSolveOpts)], None),
    ("imp_contact_solve_work_doubles", [c_int, c_int], c_size_t),
    ("imp_contact_solve_work_ints", [c_int, c_int], c_size_t),
    ("imp_contact_solve_forward", [CS, dptr, dptr, dptr, dptr, c_int, c_int, P(ContactSolveOpts), dptr, ipt], c_int),
    ("imp_contact_solve_backward", [dptr, dptr, dptr, dptr, dptr, CS, dptr, dptr, dptr, dptr, dptr, ipt], c_int),
    ("imp_contact_solve_law_forward",
     [CS, dptr, dptr, dptr, dptr, dptr, c_int, c_int, c_int, P(ContactSolveOpts), dptr, ipt], c_int),
    ("imp_contact_solve_law_backward",
     [dptr, dptr, dptr, dptr, dptr, dptr, CS, dptr, dptr, dptr, dptr, dptr, dptr, ipt], c_int),
    ("imp_contact_impulse_work_doubles", [c_int, c_int, c_int], c_size_t),
    ("imp_contact_impulse_forward", [dptr, CS, dptr, dptr, c_int, c_int, c_int, MINV_FN, V, dptr, dptr,
                                     P(ContactSolveOpts), dptr, ipt], c_int),
    ("imp_contact_impulse_backward", [dptr, dptr, dptr, dptr, dptr, dptr, dptr, CS, dptr, dptr, c_int, MINV_FN, V,
                                      dptr, dptr, dptr, ipt], c_int),
    # rigid_traj.h
    ("imp_rigid_traj_default", [P(RigidTraj)], None), ("imp_rigid_traj_free", [P(RigidTraj)], None),
    ("imp_rigid_traj_offset", [P(RigidTraj), c_int], c_size_t),
    ("imp_rigid_traj_check", [P(RigidTraj), c_double], c_int),
    ("imp_rigid_traj_set", [P(RigidTraj), dptr, c_size_t, P(c_i64), P(c_i64), c_size_t, c_double], c_int),
    ("imp_rigid_traj_read_arrays", [P(RigidTraj), c_char_p, c_char_p, c_char_p, c_char_p, c_double], c_int),
    ("imp_rigid_traj_save", [P(RigidTraj), c_char_p], c_int),
    ("imp_rigid_traj_load", [P(RigidTraj), c_char_p], c_int),
    ("imp_rigid_traj_load_any", [P(RigidTraj), c_char_p, ipt], c_int),
    ("imp_rigid_quat_angle", [dptr, dptr], c_double),
    ("imp_rigid_traj_stats", [P(RigidTraj), P(RigidStats)], c_int),
    ("imp_rigid_metrics_episode", [dptr, dptr, c_size_t, P(RigidBody), c_double, P(RigidMetrics)], c_int),
    ("imp_rigid_lowest_corner", [dptr, P(RigidBody), c_double], c_double),
    ("imp_rigid_eval_rollouts", [P(RigidTraj), ipt, c_int, ROLLOUT_FN, V, c_double, P(RigidMetrics)], c_int),
    ("imp_rigid_traj_penetration", [P(RigidTraj), c_double, dptr, dptr], c_int),
    ("imp_rigid_ballistic", [dptr, c_size_t, c_double, P(RigidBody), c_double, c_int, dptr], c_int),
    ("imp_rigid_eval_ballistic", [P(RigidTraj), ipt, c_int, P(RigidMetrics)], c_int),
    ("imp_rigid_split", [c_int, c_int, c_u64, c_double, c_double, ipt, ipt, ipt, ipt, ipt, ipt], c_int),
    # rigid_model.h
    ("imp_rigid_model_box", [P(RigidModel), P(RigidBody), c_double, c_double, c_double, c_double], None),
    ("imp_rigid_model_check", [P(RigidModel)], c_int),
    ("imp_rigid_step_forward", [P(RigidModel), c_double, dptr, dptr, P(RigidStepTrace)], c_int),
    ("imp_rigid_step_backward", [P(RigidModel), P(RigidStepTrace), dptr, dptr, P(RigidModelGrad)], c_int),
    ("imp_rigid_model_rollout", [P(RigidModel), c_double, c_int, dptr, c_size_t, dptr], c_int),
    ("imp_rigid_model_energy", [P(RigidModel), dptr], c_double),
    ("imp_rigid_window_loss", [P(RigidModel), c_double, c_int, dptr, c_size_t, c_double, dptr, P(RigidModelGrad),
                               dptr], c_int),
    ("imp_box_toss_defaults", [P(BoxTossOpts)], None),
    ("imp_box_toss_simulate", [P(BoxTossOpts), P(RigidTraj)], c_int),
    ("imp_box_toss_initial", [P(BoxTossOpts), c_int, dptr], None),
    ("imp_rigid_ident_defaults", [P(RigidIdentOpts), P(RigidTraj)], None),
    ("imp_rigid_identify", [P(RigidTraj), ipt, c_int, P(RigidIdentOpts), P(RigidModel), P(RigidIdentResult)], c_int),
    ("imp_rigid_learn_defaults", [P(RigidLearnOpts)], None),
    ("imp_rigid_learn", [P(RigidTraj), ipt, c_int, ipt, c_int, P(RigidLearnOpts), P(RigidModel), P(RigidLearnReport)],
     c_int),
    # rigid_models.h
    ("imp_rigid_e2e_opts_default", [P(RigidE2eOpts)], None),
    ("imp_rigid_e2e_init", [P(RigidE2e), P(RigidE2eOpts)], c_int), ("imp_rigid_e2e_free", [P(RigidE2e)], None),
    ("imp_rigid_e2e_set_scaling", [P(RigidE2e), P(RigidTraj), ipt, c_int], c_int),
    ("imp_rigid_e2e_features", [P(RigidE2e), dptr, dptr], None),
    ("imp_rigid_e2e_step", [P(RigidE2e), dptr, dptr], c_int),
    ("imp_rigid_e2e_window_loss", [P(RigidE2e), dptr, dptr, dptr, c_int, c_int, dptr, P(V)], c_double),
    ("imp_mlp_work_new", [P(Mlp), c_int], V), ("imp_mlp_work_free", [V], None),
    ("imp_rigid_e2e_rollout", [dptr, c_size_t, V, dptr], c_int),
    ("imp_rigid_e2e_train", [P(RigidE2e), P(RigidTraj), ipt, c_int, ipt, c_int, P(RigidE2eOpts),
                             P(RigidE2eReport)], c_int),
    # sweep.h (cube)
    ("imp_sweep_cube_opts_default", [P(SweepCubeOpts)], None),
    ("imp_sweep_cube_peer", [ctypes.c_char_p, c_size_t], c_int),
    ("imp_sweep_cube_rows", [c_char_p, P(V)], c_int),
]
for _n, _a, _r in _SIGS:
    _f = getattr(lib, _n)
    _f.argtypes, _f.restype = _a, _r
# imp_sweep_plan_cube takes the plan mirrored in _lib
from ._lib import SweepPlan  # noqa: E402
lib.imp_sweep_plan_cube.argtypes, lib.imp_sweep_plan_cube.restype = [P(SweepPlan), P(SweepCubeOpts)], c_int


# constrained_contact.h
class DopriStats(Struct):
    _fields_ = [("n_steps", ctypes.c_long), ("n_rejected", ctypes.c_long), ("n_rhs", ctypes.c_long)]


class ChnnSimOpts(Struct):
    _fields_ = [("rtol", c_double), ("atol", c_double)]


class ChnnContactStats(Struct):
    _fields_ = [("impacts", c_int), ("resting", c_int), ("max_penetration", c_double),
                ("impact_energy", c_double), ("projection_energy", c_double), ("ode", DopriStats),
                ("max_joint_velocity", c_double)]


class ImpactEnergyOpts(Struct):
    _fields_ = [("threshold", c_double), ("window", c_int), ("one_step", c_int)]


from ._lib import ImpactEnergy  # noqa: E402,F401  (imp_ceval_result holds two)


class CsysMinvCtx(Struct):
    _fields_ = [("s", V), ("x", dptr), ("w", V)]


MIRRORS.update({"imp_dopri5_stats": DopriStats, "imp_chnn_sim_opts": ChnnSimOpts,
                "imp_chnn_contact_stats": ChnnContactStats, "imp_csys_minv_ctx": CsysMinvCtx,
                "imp_impact_energy_opts": ImpactEnergyOpts, "imp_impact_energy": ImpactEnergy})
from ._lib import Rng  # noqa: E402
for _n, _a, _r in [
    ("imp_chnn_system", [V, c_char_p], c_int), ("imp_csys_load", [V, c_char_p], c_int),
    ("imp_csys_work_new", [V], V), ("imp_csys_work_free", [V], None),
    ("imp_csys_energy", [V, dptr, dptr], c_double),
    ("imp_chnn_sample_state", [V, P(Rng), c_double, dptr, V], c_int),
    ("imp_csys_contact_frame", [V, dptr, c_int, dptr, P(c_double * 3), dptr], c_double),
    ("imp_csys_contact_minv", [dptr, dptr, c_int, c_int, V], c_int),
    ("imp_csys_contact_impulse", [V, dptr, dptr, ipt, c_int, CS, V], c_int),
    ("imp_csys_contact_active", [V, dptr, dptr, c_double, c_double, ipt], c_int),
    ("imp_chnn_simulate_contact", [V, dptr, c_double, c_int, P(ChnnSimOpts), dptr, P(ChnnContactStats)], c_int),
    ("imp_csys_impact_energy", [V, dptr, dptr, c_int, c_int, P(ImpactEnergyOpts), P(ImpactEnergy), dptr, dptr,
                                c_int], c_int),
]:
    _f = getattr(lib, _n)
    _f.argtypes, _f.restype = _a, _r
