"""Loading libimpulse and the ctypes mirrors of its public structs.

Every mirror is checked against the library's own sizeof (imp_abi_sizeof) at
import, so a layout change in a header is an ImportError, not a silent bug.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os


def _suggest_coretype() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return None
    for flag, core in (("avx512f", "SkylakeX"), ("avx2", "Haswell"), ("avx", "Sandybridge")):
        if flag in flags:
            return core
    return None


# OpenBLAS reads these when it is loaded: its kernels (virtual CPUs with a
# generic model name get SSE3 kernels otherwise) and its thread pool (every
# BLAS call of impulse is single-threaded; idle pool threads spin on the other
# cores and a threaded BLAS changes the floating-point sums, so results would
# differ from the CLI's). imp_blas_init() below also sets one thread at run
# time, for the case where numpy loaded OpenBLAS first.
if "OPENBLAS_CORETYPE" not in os.environ and _suggest_coretype():
    os.environ["OPENBLAS_CORETYPE"] = _suggest_coretype()
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

try:
    import numpy as np  # noqa: E402
except ImportError as e:  # a plain venv does not see Debian's python3-numpy
    raise ImportError("impulse needs numpy, which this Python does not have: create the venv with "
                      "--system-site-packages to use Debian's python3-numpy, or install a numpy wheel into it "
                      "(pip install numpy; offline: pip install --no-index --find-links DIR numpy)") from e

VERSION = "0.1.0"


class Error(RuntimeError):
    """A failure reported by libimpulse (the message names the offending field)."""


class Notice(UserWarning):
    """What impulse assumed or converted for you (the CLI's `notice:` lines), as a
    warning: warnings.simplefilter("ignore", impulse.Notice) silences them."""


def notice(message: str) -> None:
    """warnings.warn(message, Notice), attributed to the user's line (the
    first caller outside this package)."""
    import sys
    import warnings
    here = os.path.dirname(os.path.abspath(__file__))
    f, level = sys._getframe(0), 1
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == here:
        f, level = f.f_back, level + 1
    warnings.warn(message, Notice, stacklevel=level)


def _candidates() -> list[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    if os.environ.get("IMPULSE_LIBRARY"):
        out.append(os.environ["IMPULSE_LIBRARY"])
    # the library this package was installed with (copied by setup.py)
    out += sorted(glob.glob(os.path.join(here, "libimpulse.so*")))
    # run from the source tree: python/impulse -> ../../build*/
    out += [p for p in sorted(glob.glob(os.path.join(here, "..", "..", "build*", "libimpulse.so.0"))) if "build-san" not in p]
    found = ctypes.util.find_library("impulse")
    if found:
        out.append(found)
    for d in ("/usr/local/lib", "/usr/local/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib"):
        out.append(os.path.join(d, "libimpulse.so.0"))
    return out


def _load() -> ctypes.CDLL:
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path}: {e}")
    raise ImportError("libimpulse.so not found (set IMPULSE_LIBRARY to the library, or build it with "
                      "scripts/build.sh and install this package again)" + ("; " + "; ".join(tried) if tried else ""))


lib = _load()
path = getattr(lib, "_name", "")

c_int, c_double, c_ull, c_size_t, c_char_p, c_void_p = (ctypes.c_int, ctypes.c_double, ctypes.c_ulonglong,
                                                        ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p)
P = ctypes.POINTER
dptr = P(c_double)

MAX_BODIES, MAX_DIM, MAX_CONTACTS = 16, 3, 32
ERR_NOT_FOUND = -7  # include/impulse/core.h


class Struct(ctypes.Structure):
    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k, _ in self._fields_}


class CdlConfig(Struct):
    _fields_ = [("kind", c_int), ("hidden", c_int), ("hidden_layers", c_int), ("act", c_int),
                ("contact_hidden", c_int), ("touch", c_int), ("projection", c_int), ("learn_damping", c_int),
                ("learn_mass", c_int), ("learn_restitution", c_int), ("friction", c_int), ("impact_law", c_int),
                ("contact_tol", c_double), ("gate_geometry", c_int), ("impact_timing", c_int)]


class LossParts(Struct):
    _fields_ = [("state", c_double), ("contact", c_double), ("l2", c_double), ("total", c_double)]


PROGRESS_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int, P(LossParts))

# include/impulse/train.h
TRAIN_MAX_PARTS = 4


class LossPart(Struct):
    _fields_ = [("name", c_char_p), ("value", c_double)]


class EpochInfo(Struct):
    _fields_ = [("epoch", c_int), ("epochs", c_int), ("loss", c_double), ("n_parts", c_int),
                ("parts", LossPart * TRAIN_MAX_PARTS), ("lr", c_double), ("seconds", c_double),
                ("best_epoch", c_int), ("best_loss", c_double)]


EPOCH_FN = ctypes.CFUNCTYPE(c_int, P(EpochInfo), c_void_p)


class TrainReport(Struct):
    _fields_ = [("stop", c_int), ("epochs_done", c_int), ("resumed_at", c_int), ("best_epoch", c_int),
                ("best_loss", c_double), ("final_loss", c_double), ("seconds", c_double), ("kept_epoch", c_int),
                ("far_above_best", c_int)]


class TrainHooks(Struct):
    _fields_ = [("on_epoch", EPOCH_FN), ("user_data", c_void_p), ("loss_history", dptr),
                ("report", P(TrainReport)), ("diverge_factor", c_double), ("state_path", c_char_p),
                ("state_every", c_int), ("state_seconds", c_double), ("resume_path", c_char_p), ("keep", c_int)]


LAW_REFIT_MU, LAW_REFIT_E = 1, 2  # include/impulse/cdl.h


class LawRefitOpts(Struct):
    _fields_ = [("what", c_int), ("min_steps", c_int), ("grid", c_int), ("mu_max", c_double), ("tol", c_double),
                ("profile", c_int), ("all", c_int), ("horizon", c_int), ("robust", c_int)]


class LawRefitPair(Struct):
    _fields_ = [("steps", c_int), ("windows", c_int), ("searched", c_int), ("e_before", c_double),
                ("e_after", c_double), ("mu_before", c_double), ("mu_after", c_double), ("plateau", c_int),
                ("mu_grad", c_double), ("e_grad", c_double)]


class LawRefitReport(Struct):
    _fields_ = [("n_pairs", c_int), ("loss_before", c_double), ("loss_after", c_double), ("seconds", c_double),
                ("pairs", LawRefitPair * MAX_CONTACTS)]


class TrainOpts(Struct):
    _fields_ = [("epochs", c_int), ("horizon", c_int), ("batch", c_int), ("lr", c_double), ("lr_schedule", c_int),
                ("l2", c_double),
                ("seed", c_ull), ("single_contact", c_int), ("single_potential", c_int), ("threads", c_int),
                ("progress", c_int),
                ("on_progress", PROGRESS_FN), ("user", c_void_p), ("hooks", TrainHooks),
                ("law_refit", c_int), ("refit", LawRefitOpts), ("refit_report", P(LawRefitReport))]


class SimOpts(Struct):
    _fields_ = [("n_traj", c_int), ("n_steps", c_int), ("dt", c_double), ("noise", c_double),
                ("restitution", c_double), ("gravity", c_double), ("length", c_double), ("q0", c_double),
                ("v0", c_double), ("friction", c_double), ("spin", c_double), ("randomize", c_int),
                ("seed", c_ull), ("stiffness", c_double)]


class ContactPair(Struct):
    _fields_ = [("body_i", c_int), ("body_j", c_int), ("normal", c_double * MAX_DIM), ("offset", c_double),
                ("tangent", c_double * MAX_DIM), ("kind", c_int)]


class Geometry(Struct):
    _fields_ = [("n_bodies", c_int), ("dim", c_int), ("mass", c_double * MAX_BODIES), ("restitution", c_double),
                ("n_pairs", c_int), ("pairs", ContactPair * MAX_CONTACTS), ("has_pair_law", c_int),
                ("pair_e", c_double * MAX_CONTACTS), ("pair_mu", c_double * MAX_CONTACTS), ("has_radii", c_int),
                ("radius", c_double * MAX_BODIES), ("linearized", c_int)]


class Trajset(Struct):
    _fields_ = [("n_traj", c_int), ("n_steps", c_int), ("dt", c_double), ("geom", Geometry), ("q", dptr),
                ("qdot", dptr), ("q_clean", dptr), ("qdot_clean", dptr), ("contact", dptr),
                ("system", ctypes.c_char * 64), ("noise", c_double), ("seed", c_ull), ("gravity", c_double),
                ("length", c_double), ("has_contact", c_int), ("labels", ctypes.c_char * 16),
                ("friction", c_double), ("interior", dptr), ("widened_f32", c_int)]


class EvalResult(Struct):
    _fields_ = [("rmse", c_double), ("rmse_code", c_double), ("energy_drift", c_double),
                ("contact_timing", c_double), ("contacts_true", c_int), ("contacts_pred", c_int),
                ("contacts_missed", c_int), ("n_traj", c_int), ("n_steps", c_int)]


class Rng(Struct):
    _fields_ = [("s", ctypes.c_uint64 * 4), ("has_spare", c_int), ("spare", c_double)]


class CTraj(Struct):
    _fields_ = [("n_traj", c_int), ("T", c_int), ("dim", c_int), ("dt", c_double), ("z", dptr),
                ("widened_f32", c_int)]


CPROGRESS_FN = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_double, c_double)


class CTrainOpts(Struct):
    _fields_ = [("epochs", c_int), ("lr", c_double), ("weight_decay", c_double), ("batch", c_int),
                ("n_chunks", c_int), ("chunk_steps", c_int), ("seed", c_ull), ("threads", c_int),
                ("single_products", c_int), ("warmup_steps", c_int), ("grad_clip", c_double), ("all_windows", c_int), ("max_substeps", c_int), ("skip_factor", c_double), ("contact_substeps", c_int), ("verbose", c_int), ("progress", CPROGRESS_FN), ("progress_user", c_void_p), ("hooks", TrainHooks)]


class CTrainResult(Struct):
    _fields_ = [("final_loss", c_double), ("seconds", c_double), ("critical_seconds", c_double), ("epochs", c_int),
                ("substepped_windows", c_int), ("max_substeps", c_int), ("skipped_batches", c_int),
                ("contact_windows", c_int)]


class CEvalOpts(Struct):
    _fields_ = [("n_test", c_int), ("steps", c_int), ("rtol", c_double), ("atol", c_double),
                ("max_steps_per_sample", c_int), ("max_seconds", c_double), ("contact_rk4", c_int)]


class ImpactEnergy(Struct):
    _fields_ = [("impacts", c_int), ("truth_lost", c_double), ("model_lost", c_double), ("rel_error", c_double),
                ("mean_rel_error", c_double), ("max_rel_error", c_double), ("within_5pct", c_int)]


class CEvalResult(Struct):
    _fields_ = [("n_test", c_int), ("T", c_int), ("mean_geo", c_double), ("median_geo", c_double),
                ("geo", dptr), ("rel_err", dptr), ("energy_err", dptr), ("violation", dptr),
                ("mean_energy_err", c_double), ("mean_violation", c_double), ("seconds", c_double),
                ("has_contact", c_int), ("impact_one_step", ImpactEnergy), ("impact_rollout", ImpactEnergy),
                ("map_steps", ctypes.c_long), ("map_truth_lost", c_double), ("map_model_lost", c_double),
                ("map_kinetic", c_double), ("mean_violation_away", c_double), ("violation_away_states", ctypes.c_long),
                ("sum_rel_err_5", c_double), ("sum_rel_err", c_double),
                ("impact_map", ImpactEnergy), ("impact_map_true", ImpactEnergy), ("map_elastic", ctypes.c_long),
                ("map_resting", ctypes.c_long), ("compliance_tt_model", c_double),
                ("compliance_tt_truth", c_double), ("compliance_nt_model", c_double),
                ("compliance_nt_truth", c_double), ("compliance_rel_error", c_double)]


class Contact(Struct):
    _fields_ = [("J", c_double * 6), ("minv", c_double * 3), ("W", c_double * 4), ("Mc", c_double * 4),
                ("u", c_double * 2), ("u_post", c_double * 2), ("v_pre", c_double * 3), ("v_post", c_double * 3)]


class ImpactLaw(Struct):
    _fields_ = [("model", c_int), ("variant", c_int), ("mu", c_double), ("eps", c_double)]


class IdentOptions(Struct):
    _fields_ = [("mu_cap", c_double), ("grid", c_int), ("tol", c_double)]


class GpOptions(Struct):
    _fields_ = [("max_iter", c_int), ("restarts", c_int), ("seed", ctypes.c_uint64), ("standardize", c_int),
                ("min_noise", c_double)]


# include/impulse/sweep.h
class SweepPlan(Struct):
    _fields_ = [("n_tasks", c_int), ("tasks", c_void_p)]


class SweepChnnOpts(Struct):
    _fields_ = [("preset", c_char_p), ("systems", c_char_p), ("models", c_char_p), ("n_train_list", c_char_p),
                ("seeds", c_int), ("first_seed", c_int), ("epochs", c_int), ("n_train", c_int), ("n_test", c_int),
                ("hidden", c_int), ("lr", c_double), ("single", c_int)]


class SweepCdlOpts(Struct):
    _fields_ = [("quick", c_int), ("seeds", c_int), ("first_seed", c_int), ("epochs", c_int), ("settings", c_char_p),
                ("only", c_char_p), ("threads", c_int)]


class SweepImpactOpts(Struct):
    _fields_ = [("data", c_char_p), ("quick", c_int), ("variant", c_char_p), ("target", c_char_p),
                ("seed", ctypes.c_long), ("gp", c_int)]


class SweepYourDataOpts(Struct):
    _fields_ = [("quick", c_int), ("seeds", c_int), ("epochs", c_int), ("system", c_char_p), ("restitution", c_double),
                ("noise", c_double), ("heldout", c_int), ("impact_law", c_char_p), ("lr_schedule", c_char_p),
                ("threads", c_int)]


class SweepContactOpts(Struct):
    _fields_ = [("quick", c_int), ("seeds", c_int), ("epochs", c_int), ("only", c_char_p), ("threads", c_int),
                ("box_tosses", c_int)]


SWEEP_PROGRESS_FN = ctypes.CFUNCTYPE(None, c_void_p, c_char_p)
SWEEP_STOP_FN = ctypes.CFUNCTYPE(c_int, c_void_p)


class SweepRunOpts(Struct):
    _fields_ = [("threads", c_int), ("runner", c_char_p), ("progress", SWEEP_PROGRESS_FN), ("progress_user", c_void_p),
                ("should_stop", SWEEP_STOP_FN), ("stop_user", c_void_p)]


class SweepSummary(Struct):
    _fields_ = [("ran", c_int), ("skipped", c_int), ("failed", c_int)]


lib.imp_abi_sizeof.restype = c_size_t
lib.imp_abi_sizeof.argtypes = [c_char_p]
for _name, _cls in (("imp_cdl_config", CdlConfig), ("imp_loss_parts", LossParts), ("imp_train_opts", TrainOpts),
                    ("imp_sim_opts", SimOpts), ("imp_contact_geometry", Geometry), ("imp_trajset", Trajset),
                    ("imp_eval_result", EvalResult), ("imp_rng", Rng), ("imp_ctraj", CTraj),
                    ("imp_ctrain_opts", CTrainOpts), ("imp_ctrain_result", CTrainResult),
                    ("imp_ceval_opts", CEvalOpts), ("imp_ceval_result", CEvalResult), ("imp_contact", Contact),
                    ("imp_impact_law", ImpactLaw), ("imp_ident_options", IdentOptions),
                    ("imp_gp_options", GpOptions), ("imp_train_hooks", TrainHooks),
                    ("imp_epoch_info", EpochInfo), ("imp_train_report", TrainReport), ("imp_loss_part", LossPart),
                    ("imp_sweep_plan", SweepPlan), ("imp_sweep_chnn_opts", SweepChnnOpts),
                    ("imp_sweep_cdl_opts", SweepCdlOpts), ("imp_sweep_impact_opts", SweepImpactOpts),
                    ("imp_sweep_your_data_opts", SweepYourDataOpts), ("imp_sweep_contact_opts", SweepContactOpts),
                    ("imp_sweep_run_opts", SweepRunOpts), ("imp_sweep_summary", SweepSummary),
                    ("imp_law_refit_opts", LawRefitOpts), ("imp_law_refit_report", LawRefitReport)):
    if lib.imp_abi_sizeof(_name.encode()) != ctypes.sizeof(_cls):
        raise ImportError(f"impulse: the Python mirror of {_name} ({ctypes.sizeof(_cls)} bytes) does not match "
                          f"the library's ({lib.imp_abi_sizeof(_name.encode())} bytes): rebuild and reinstall")


def opaque(type_name: str):
    """A zeroed buffer the size of a public struct the binding does not mirror."""
    n = lib.imp_abi_sizeof(type_name.encode())
    if not n:
        raise Error(f"{type_name}: unknown to the library")
    return ctypes.create_string_buffer(n)


def _sig(name, args, res=c_int):
    f = getattr(lib, name)
    f.argtypes, f.restype = args, res


V = c_void_p
for _n, _a, _r in [
    ("imp_last_error", [], c_char_p), ("imp_blas_corename", [], c_char_p), ("imp_blas_init", [], c_int),
    ("imp_sim_defaults", [c_char_p, P(SimOpts)], c_int),
    ("imp_simulate", [c_char_p, P(SimOpts), P(Trajset)], c_int),
    ("imp_trajset_free", [P(Trajset)], None), ("imp_trajset_load", [P(Trajset), c_char_p], c_int),
    ("imp_trajset_save", [P(Trajset), c_char_p], c_int),
    ("imp_train_state_epoch", [c_char_p, P(c_int)], c_int), ("imp_train_log_truncate", [c_char_p, c_int], c_int),
    ("imp_contact_geometry_check", [P(Geometry)], c_int),
    ("imp_contact_min_gaps", [P(Geometry), dptr, c_size_t, c_size_t, dptr], None),
    ("imp_model_kind_from_name", [c_char_p, P(c_int)], c_int),
    ("imp_model_kind_name", [c_int], c_char_p),
    ("imp_law_refit_opts_identify", [P(LawRefitOpts)], None),
    ("imp_law_refit_mode_name", [P(LawRefitOpts)], c_char_p),
    ("imp_activation_from_name", [c_char_p, P(c_int)], c_int),
    ("imp_cdl_config_default", [P(CdlConfig), c_int], None),
    ("imp_train_opts_default", [P(TrainOpts), c_int], None),
    ("imp_model_create", [P(V), P(CdlConfig), P(Geometry), c_double, c_ull], c_int),
    ("imp_model_free", [V], None), ("imp_model_save", [V, c_char_p, c_char_p], c_int),
    ("imp_model_load", [P(V), c_char_p], c_int),
    ("imp_model_train", [V, P(Trajset), P(TrainOpts), P(LossParts)], c_int),
    ("imp_label_mode_from_name", [c_char_p, P(c_int)], c_int),
    ("imp_contact_labels_apply", [P(Trajset), c_int, c_void_p], c_int),
    ("imp_cdl_default_impact_law", [P(Trajset)], c_int),
    ("imp_lr_schedule_from_name", [c_char_p, P(c_int)], c_int),
    ("imp_train_default_lr_schedule", [P(Trajset)], c_int),
    ("imp_model_init_contact_law", [V, P(Trajset), c_int, c_double, c_int, c_double, c_void_p], c_int),
    ("imp_model_get_contact_law", [V, dptr, dptr], None),
    ("imp_model_set_projection", [V, c_int], c_int),
    ("imp_model_sizes", [V, P(c_int), P(c_int)], c_int),
    ("imp_model_rollout", [V, dptr, c_int, dptr, dptr, dptr], c_int),
    ("imp_model_rollout_single", [V, dptr, c_int, dptr, c_int, dptr, dptr], c_int),
    ("imp_model_potential_grad", [V, dptr, c_int, dptr], c_int),
    ("imp_model_evaluate", [V, P(Trajset), c_int, P(EvalResult), dptr, dptr, dptr], c_int),
    ("imp_eval_energy_error", [P(Trajset), dptr, P(c_double), P(c_double)], c_int),
    ("imp_flat_chnn_simulate", [c_char_p, c_char_p, c_int, c_int, c_double, c_ull, c_double, c_double, c_double,
                                c_double, c_int, dptr, dptr, dptr, P(c_int), P(c_int), P(c_int), P(c_int), P(c_int),
                                P(c_double), c_char_p], c_int),
    ("imp_flat_cmodel_info", [V, P(c_int), P(c_int), P(c_size_t)], c_int),
    ("imp_cmodel_kind_from_name", [c_char_p, P(c_int)], c_int),
    ("imp_cmodel_kind_name", [c_int], c_char_p),
    ("imp_csystem_from_name", [V, c_char_p], c_int),
    ("imp_csystem_from_meta", [V, c_char_p, c_char_p], c_int),
    ("imp_cmodel_init", [V, c_int, V, c_int, c_int], c_int),
    ("imp_cmodel_init_params", [V, dptr, P(Rng)], None),
    ("imp_rng_seed", [P(Rng), c_ull], None),
    ("imp_ctraj_to_generalised", [V, P(CTraj), P(CTraj)], c_int),
    ("imp_ctraj_free", [P(CTraj)], None),
    ("imp_ctrain_opts_default", [P(CTrainOpts)], None),
    ("imp_ctrain", [V, dptr, P(CTraj), P(CTrainOpts), P(CTrainResult)], c_int),
    ("imp_ctrain_contact_substeps", [V, P(CTrainOpts)], c_int),
    ("imp_cmodel_save", [c_char_p, V, dptr, P(CTrainOpts), P(CTrainResult)], c_int),
    ("imp_cmodel_load", [c_char_p, V, P(dptr)], c_int),
    ("imp_ceval_opts_default", [P(CEvalOpts)], None),
    ("imp_ceval", [V, dptr, P(CTraj), P(CEvalOpts), P(CEvalResult)], c_int),
    ("imp_ceval_result_free", [P(CEvalResult)], None),
    ("imp_cmodel_rollout", [V, dptr, dptr, c_int, c_double, P(CEvalOpts), dptr], c_int),
    ("imp_cmodel_enable_contact", [V], c_int), ("imp_cmodel_init_contact_params", [V, dptr], None),
    ("imp_flat_csystem_contacts", [V], c_int), ("imp_flat_cmodel_contacts", [V], c_int),
    ("imp_flat_cmodel_contact_values", [V, dptr, dptr, dptr, dptr, dptr], c_int),
    ("imp_flat_cmodel_contact_names", [V, c_int, c_char_p, c_char_p, c_char_p, c_char_p, ctypes.c_size_t], c_int),
    ("imp_cmodel_rhs", [V, dptr, dptr, c_int, dptr, V], c_int),
    ("imp_cmodel_work_new", [V, c_int], V), ("imp_cmodel_work_free", [V], None),
    ("imp_impact_model_parse", [c_char_p, P(c_int), c_char_p], c_int),
    ("imp_impact_variant_parse", [c_char_p, P(c_int), c_char_p], c_int),
    ("imp_impact_table1", [c_int, P(c_double), P(c_double)], None),
    ("imp_impact_law_check", [P(ImpactLaw)], c_int),
    ("imp_impact_predict", [P(ImpactLaw), dptr, dptr, dptr], c_int),
    ("imp_impact_predict_fast", [P(ImpactLaw), dptr, dptr, dptr], c_int),
    ("imp_contact_make", [P(Contact), dptr, dptr, c_double, c_double, dptr, dptr], c_int),
    ("imp_impact_irb", [P(Contact), c_double, c_int, dptr, P(c_int)], c_int),
    ("imp_contact_impulse_error", [P(Contact), dptr, c_double], c_double),
    ("imp_ident_options_default", [], IdentOptions),
    ("imp_impact_identify_one", [P(ImpactLaw), P(Contact), dptr, P(IdentOptions), P(c_double)], c_int),
    ("imp_gp_options_default", [P(GpOptions)], None),
    ("imp_gp_fit", [P(V), dptr, dptr, c_size_t, c_size_t, P(GpOptions)], c_int),
    ("imp_gp_predict", [V, dptr, c_size_t, dptr, dptr], c_int),
    ("imp_gp_noise_var", [V], c_double), ("imp_gp_free", [V], None),
    ("imp_impact_load_any", [V, c_char_p], c_int), ("imp_impact_set_convention", [V, c_int], None),
    ("imp_impact_save_npz", [V, c_char_p], c_int), ("imp_impact_set_free", [V], None),
]:
    _sig(_n, _a, _r)

_sig("imp_cmodel_peek_kind", [c_char_p, c_char_p, c_size_t])
if hasattr(lib, "imp_impact_predict_batch"):
    _sig("imp_impact_predict_batch", [c_int, c_int, c_size_t, dptr, dptr, dptr, dptr, c_size_t, dptr,
                                      P(ctypes.c_int32), P(c_size_t)])
_sig("imp_impact_irb_batch", [c_int, c_size_t, dptr, dptr, dptr, dptr, c_double, c_double, c_double, dptr, dptr,
                              P(ctypes.c_int32), P(ctypes.c_int32), P(c_size_t)])
_sig("imp_impact_identify_batch", [c_int, c_int, c_size_t, dptr, dptr, dptr, c_double, c_double, dptr,
                                   P(IdentOptions), dptr, P(ctypes.c_int32), P(c_size_t)])
_sig("imp_flat_model_contact_law", [c_void_p, P(c_int), P(c_int), P(c_int), dptr, dptr])
_sig("imp_clear_error", [], None)
for _n, _a, _r in [
    ("imp_sweep_chnn_opts_default", [P(SweepChnnOpts)], None),
    ("imp_sweep_cdl_opts_default", [P(SweepCdlOpts)], None),
    ("imp_sweep_impact_opts_default", [P(SweepImpactOpts)], None),
    ("imp_sweep_plan_chnn", [P(SweepPlan), P(SweepChnnOpts)], c_int),
    ("imp_sweep_plan_cdl", [P(SweepPlan), P(SweepCdlOpts)], c_int),
    ("imp_sweep_plan_impact", [P(SweepPlan), P(SweepImpactOpts)], c_int),
    ("imp_sweep_your_data_opts_default", [P(SweepYourDataOpts)], None),
    ("imp_sweep_plan_your_data", [P(SweepPlan), P(SweepYourDataOpts)], c_int),
    ("imp_sweep_contact_opts_default", [P(SweepContactOpts)], None),
    ("imp_sweep_plan_contact", [P(SweepPlan), P(SweepContactOpts)], c_int),
    ("imp_sweep_contact_rows", [c_char_p, P(c_void_p)], c_int),
    ("imp_sweep_plan_parse", [P(SweepPlan), c_char_p, c_char_p], c_int),
    ("imp_sweep_plan_load", [P(SweepPlan), c_char_p], c_int),
    ("imp_sweep_plan_text", [P(SweepPlan), P(c_void_p)], c_int),
    ("imp_sweep_plan_free", [P(SweepPlan)], None),
    ("imp_sweep_prepare", [P(SweepPlan), c_char_p], c_int),
    ("imp_sweep_run_opts_default", [P(SweepRunOpts)], None),
    ("imp_sweep_run_plan", [P(SweepPlan), c_char_p, P(SweepRunOpts), P(SweepSummary)], c_int),
    ("imp_sweep_report", [c_char_p, P(c_void_p)], c_int),
]:
    _sig(_n, _a, _r)
libc_free = ctypes.CDLL(None).free
libc_free.argtypes, libc_free.restype = [c_void_p], None

lib.imp_blas_init()


def _blas_kernels() -> None:
    """OpenBLAS picks its kernels when it is loaded. When numpy loaded it
    before impulse (`import numpy; import impulse`), OPENBLAS_CORETYPE set
    above came too late and a virtual CPU may be left on the SSE3 'Prescott'
    kernels (2-3x slower): select the kernels again (the library's dynamic
    core selection, gotoblas_dynamic_quit/init, reads OPENBLAS_CORETYPE), or,
    where that is not possible, say so once, naming the fix."""
    want = os.environ.get("OPENBLAS_CORETYPE", "")
    have = lib.imp_blas_corename().decode()
    if not want or have.lower() == want.lower():
        return
    try:
        blas = ctypes.CDLL("libopenblas.so.0", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        quit_, init = blas.gotoblas_dynamic_quit, blas.gotoblas_dynamic_init
    except (OSError, AttributeError):
        quit_ = init = None
    if quit_ is not None:
        quit_.restype = init.restype = None
        quit_()
        init()
        have = lib.imp_blas_corename().decode()
    if have.lower() != want.lower():
        import warnings
        warnings.warn(f"impulse: OpenBLAS runs its '{have}' kernels, not the CPU's '{want}': it was loaded (by numpy) "
                      f"before impulse could choose them. Import impulse before numpy, or set "
                      f"OPENBLAS_CORETYPE={want} in the environment before Python starts.", RuntimeWarning,
                      stacklevel=4)


_blas_kernels()


def check(status: int) -> None:
    if status != 0:
        raise Error(lib.imp_last_error().decode("utf-8", "replace"))


class Result(dict):
    """A dict of results (evaluate(), ...) whose repr stays short: arrays
    appear as their shape and dtype, e.g. rel_err=<float64 (100, 100)>."""

    def __repr__(self) -> str:
        def short(v):
            if isinstance(v, np.ndarray) and v.size > 6:
                return f"<{v.dtype} {tuple(v.shape)}>"
            if isinstance(v, float):
                return f"{v:.6g}"
            return repr(v)
        return "{" + ", ".join(f"{k!r}: {short(v)}" for k, v in self.items()) + "}"

    def _repr_pretty_(self, p, cycle):  # IPython / Jupyter
        p.text(repr(self))


def unknown(what: str, value, known) -> str:
    """'what: unknown 'value' (did you mean 'x'?; known: a, b, ...)'."""
    import difflib
    close = difflib.get_close_matches(str(value), list(known), n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return f"{what}: unknown '{value}' ({hint}known: {', '.join(known)})"


def fspath(p, what: str) -> str:
    """os.fspath(p) with a message naming the argument."""
    if isinstance(p, (str, bytes, os.PathLike)):
        return os.fsdecode(os.fspath(p))
    raise Error(f"{what}: expected a file path (str or os.PathLike), got {type(p).__name__}")


def ptr(a: np.ndarray | None):
    """A double* to a C-contiguous float64 array (no copy), or NULL."""
    if a is None:
        return None
    assert a.dtype == np.float64 and a.flags["C_CONTIGUOUS"]
    return a.ctypes.data_as(dptr)


def f64(a, name: str, shape: tuple | None = None) -> np.ndarray:
    """A C-contiguous float64 view or copy of `a`, shape-checked (-1 = any)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    if shape is not None and (a.ndim != len(shape) or any(s != -1 and s != n for s, n in zip(shape, a.shape))):
        raise Error(f"{name}: shape {a.shape}, want {tuple('*' if s == -1 else s for s in shape)}")
    return a
