"""`train` and `load_model`, for both model families.
"""
from __future__ import annotations

import ctypes
import difflib
import inspect
import os


from . import _lib
from ._lib import Error, lib
from ._run import EpochCallback
from .constrained import CONSTRAINED_MODELS, ConstrainedModel, _is_constrained_checkpoint, _train_constrained
from .contact import CONTACT_MODELS, Model, _train_contact
from .data import _as_dataset


_RUN_OPTIONS = ("log", "resume", "state", "checkpoint_every", "checkpoint_seconds", "diverge_factor", "progress", "keep")


def train(model: str, data, *, output: str | os.PathLike | None = None, epochs: int | None = None,
          seed: int = 0, lr: float | None = None, callback: EpochCallback | None = None, **options):
    """Train a model on a Dataset (or a .npz path), as `impulse train`.

    model: cdl | vin | resnet | resnet-contact (contact systems) or
        chnn | clnn | hnn | delan | node | resnet (constrained systems; resnet
        is the constrained family's on a constrained system's data: next
        state = state + dt MLP(state) with node's network).
    output: also write the checkpoint there (the command line's format).
    callback(epoch, loss) is called after every epoch with loss a dict of
        floats: loss (the epoch's training loss, as 'loss' in the CLI's log
        and --json; 'total' is its deprecated alias), its terms (contact
        family: state, contact, l2), lr and seconds; return True to stop training after
        this epoch. Ctrl-C stops training at the end of the current epoch. A
        run returns its best model (lowest epoch loss), whether it finished,
        was stopped or diverged; keep='last' returns a finished run's last
        epoch instead. report['kept_epoch'] says which epoch was returned, and
        report['far_above_best'] is True when a finished run's final loss is
        more than 10 times its best (impulse.TRAIN_FAR_ABOVE_BEST; the CLI's
        exit status 3).
    Run options (both families, as the CLI's): log (path of a JSON-lines
        per-epoch log, the CLI's format; `impulse plot-log` draws it), state
        (path of a resumable training state, written every checkpoint_every
        epochs and/or checkpoint_seconds seconds and at the end), resume
        (continue from such a state: bit-identical to an uninterrupted run),
        diverge_factor (stop when an epoch's loss exceeds this many times the
        best, keeping the best model; default 1e3), keep ('best', the
        default, or 'last'), progress (True, the
        default: epoch, loss, best, rate and ETA on one line rewritten in
        place on a terminal, a display updated in place in Jupyter, a line
        every 30 s otherwise (IMPULSE_PROGRESS_SECONDS); False: nothing).
    Options of the contact family (defaults: the reference code's settings):
        settings ('code' or 'paper'), epochs (2000), horizon (10), batch (32),
        lr, l2, activation ('tanh', 'softplus', 'relu'), hidden (500),
        layers (1), touch (True), projection, damping, learn_mass (False),
        contact_precision, potential_precision ('single' or 'double');
        cdl only: restitution ('learn', the default, or 'fixed': the data's
        meta value), restitution_init ('data', 'meta' or a number; default:
        the meta value if the data has one, else the data estimate),
        friction (False; True: Coulomb friction with learned mu at pairs
        with a tangent), friction_init ('data' or a number), impact_law
        ('auto', the default: 'paper' for impulse's event-driven simulators,
        'newton' for other data; as the CLI's --impact-law), impact_timing
        ('step', the default, or 'event': each impact at its time inside the
        step, Newton's law there; as the CLI's --impact-timing);
        contact_labels ('auto', 'as-given', 'onset': how touch labels are
        turned into impulses; 'geometry': labels derived from the motion near
        the contact pairs, for data without them; as the CLI's
        --contact-labels); lr_schedule
        ('auto', the default: 'constant' for impulse's event-driven
        simulators, 'cosine' for other data; 'constant' or 'cosine', the rate
        annealed to 0 over the epochs; as the CLI's --lr-schedule);
        contact_tol (cdl: the gap within which a gated step puts a contact
        pair in reach; None, the default: 3 x the data's noise; as the
        CLI's --contact-tol); law_refit (cdl: False, the default; True:
        after the last epoch each contact pair's mu on the sticking plateau
        (the loss's gradient in it exactly 0) is searched on the training
        loss with everything else fixed and kept where it lowers the loss,
        report['law_refit'] lists every pair's change; as the CLI's
        --law-refit), law_refit_all (every pair searched, whatever its
        gradient), law_refit_e (e too), law_refit_grid (16),
        law_refit_mu_max (2), law_refit_min_steps (5); law_identify (cdl:
        every pair's e and mu read from its impacts after the last epoch,
        on one-step windows with each window's RMS error summed; as the
        CLI's --law-identify; takes law_refit_grid, _mu_max, _min_steps).
    Options of the constrained family: epochs (2000), lr (3e-3), wd (1e-4),
        batch (200), chunks (800), hidden (256), threads (2, as the CLI),
        precision ('auto', the default: 'single' for chnn, 'double' for the
        others; 'single' runs the network's hidden-to-hidden products in float),
        max_substeps (64; 1: no RK4 substeps for fast windows, as the CLI's
        --max-substeps), skip_factor (0: off; as the CLI's --skip-factor),
        contact (chnn, clnn: learn e and mu per contact; None, the default:
        when the system declares contacts; False: the flow alone, as the
        CLI's --no-contact), contact_substeps (with contact: RK4 substeps per
        sample, each followed by the contact map, of the windows near a
        contact; 1: none; as the CLI's --contact-substeps).
    Returns a Model or ConstrainedModel with .history (one dict per epoch),
    .loss_history (numpy array, epoch loss), .report (end: finished, stopped
    or diverged; epochs_done, best_epoch, best_loss, final_loss, seconds,
    kept_epoch, far_above_best;
    constrained models also substepped_windows, max_substeps, skipped_batches,
    and with contact contact_substeps, contact_windows),
    .stopped_early and .interrupted (Ctrl-C). A diverged run raises
    impulse.Error.
    """
    run = {k: options.pop(k) for k in _RUN_OPTIONS if k in options}
    if model in CONSTRAINED_MODELS and model in CONTACT_MODELS:  # resnet: the family of the data
        try:
            constrained = _as_dataset(data).kind == "constrained"
        except Error:
            constrained = False  # the contact family's loader names the problem
    else:
        constrained = model in CONSTRAINED_MODELS
    family = _train_constrained if constrained else _train_contact if model in CONTACT_MODELS else None
    if family is not None:
        known = [k for k, p in inspect.signature(family).parameters.items() if p.default is not p.empty]
        for k in options:
            if k not in known:
                close = difflib.get_close_matches(k, known + list(_RUN_OPTIONS), n=1)
                raise TypeError(f"train('{model}'): unknown option '{k}'"
                                + (f" (did you mean '{close[0]}'?)" if close else "")
                                + f"; {model} takes {', '.join(sorted(known + list(_RUN_OPTIONS)))}")
    if constrained:
        return _train_constrained(model, data, output, epochs, seed, lr, callback, run, **options)
    if model in CONTACT_MODELS:
        return _train_contact(model, data, output, epochs, seed, lr, callback, run, **options)
    raise Error(_lib.unknown("model", model, CONTACT_MODELS + tuple(m for m in CONSTRAINED_MODELS
                                                                    if m not in CONTACT_MODELS)))


def load_model(path: str | os.PathLike):
    """Load any checkpoint of `impulse train` (Model or ConstrainedModel)."""
    path = _lib.fspath(path, "path")
    buf = ctypes.create_string_buffer(64)
    kind = buf.value.decode() if lib.imp_cmodel_peek_kind(os.fsencode(path), buf, 64) == 0 else ""
    lib.imp_clear_error()
    constrained = kind in CONSTRAINED_MODELS and (kind not in CONTACT_MODELS or _is_constrained_checkpoint(path))
    return ConstrainedModel(path) if constrained else Model(path)
