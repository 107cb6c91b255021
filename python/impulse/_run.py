"""What every training run shares: Ctrl-C handling and the per-epoch hooks
(callback, loss history, JSON-lines log, resumable state).
"""
from __future__ import annotations

import ctypes
import json
import os
import signal
import threading
import warnings
from typing import Callable

import numpy as np

from . import _lib
from ._lib import Error, ptr


class _Interrupt:
    """SIGINT during training sets a flag that the per-epoch callback reads."""

    def __init__(self):
        self.hit = False
        self.old = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            def handler(signum, frame):
                self.hit = True
            self.old = signal.signal(signal.SIGINT, handler)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)


EpochCallback = Callable[[int, dict], "bool | None"]
STOP_NAMES = ("finished", "stopped", "diverged", "failed")


class Loss(dict):
    """One epoch's losses: 'loss' (the epoch's training loss, the key of the
    CLI's JSON-lines log and `--json`), its terms, lr, seconds. 'total', the
    old name of 'loss', still reads it, with a DeprecationWarning."""

    def __missing__(self, key):
        if key == "total" and "loss" in self:
            warnings.warn("impulse: the per-epoch loss is now 'loss' (as in the CLI's log); 'total' is deprecated",
                          DeprecationWarning, stacklevel=2)
            return self["loss"]
        raise KeyError(key)


class _Hooks:
    """imp_train_hooks for one run: the Python callback (and Ctrl-C) through
    on_epoch, the loss history, the report, the JSON-lines log, resumable state."""

    def __init__(self, hooks, epochs, callback, intr, log=None, resume=None, state=None, checkpoint_every=0,
                 checkpoint_seconds=0.0, diverge_factor=None):
        self.callback, self.intr, self.history = callback, intr, []
        self.log = open(log, "a" if resume else "w") if log else None
        self.report = _lib.TrainReport()
        self.losses = np.full(max(epochs, 1), np.nan)
        self.fn = _lib.EPOCH_FN(self._on_epoch)
        self._keep = [os.fsencode(p) if p else None for p in (state, resume)]
        hooks.on_epoch, hooks.user_data = self.fn, None
        hooks.loss_history, hooks.report = ptr(self.losses), ctypes.pointer(self.report)
        if diverge_factor is not None:
            hooks.diverge_factor = diverge_factor
        hooks.state_path, hooks.resume_path = self._keep
        hooks.state_every, hooks.state_seconds = checkpoint_every, checkpoint_seconds
        if (checkpoint_every or checkpoint_seconds) and not state:
            raise Error("checkpoint_every/checkpoint_seconds: give state=PATH for the training state")

    def _on_epoch(self, info_p, user):
        info = info_p[0]
        loss = {"loss": info.loss}
        for i in range(1, info.n_parts):
            loss[info.parts[i].name.decode()] = info.parts[i].value
        entry = Loss(epoch=info.epoch, **loss, lr=info.lr, seconds=info.seconds, best_epoch=info.best_epoch)
        self.history.append(entry)
        if self.log:
            self.log.write(json.dumps({"epoch": info.epoch, "epochs": info.epochs, **loss, "lr": info.lr,
                                       "seconds": info.seconds, "best_epoch": info.best_epoch}) + "\n")
            self.log.flush()
        stop = False
        if self.callback is not None:
            try:
                stop = bool(self.callback(info.epoch, Loss(loss, lr=info.lr, seconds=info.seconds)))
            except BaseException as e:  # never unwind through C: report it and stop
                print(f"impulse: the training callback raised {e!r}; stopping")
                stop = True
        return 1 if stop or self.intr.hit else 0

    def finish(self, model):
        if self.log:
            self.log.close()
        r = self.report
        model.history = self.history
        model.loss_history = self.losses[:r.epochs_done].copy() if r.epochs_done > 0 else np.empty(0)
        model.report = {"end": STOP_NAMES[r.stop] if 0 <= r.stop < 4 else str(r.stop), "epochs_done": r.epochs_done,
                        "resumed_at": r.resumed_at, "best_epoch": r.best_epoch, "best_loss": r.best_loss,
                        "final_loss": r.final_loss, "seconds": r.seconds}
        model.stopped_early = r.stop == 1
        model.interrupted = self.intr.hit
