"""What every training run shares: Ctrl-C handling and the per-epoch hooks
(callback, loss history, JSON-lines log, resumable state).
"""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import sys
import threading
import time
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
TRAIN_FAR_ABOVE_BEST = 10.0  # include/impulse/train.h IMP_TRAIN_FAR_ABOVE_BEST


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


def _duration(s: float) -> str:
    s = max(0, int(round(s)))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class _Text:
    """Plain text for IPython's display (its repr is the text)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


class Progress:
    """The training progress display: one line (epoch, loss, best, rate, ETA)
    rewritten in place on a terminal (fitted to its width), a display updated
    in place in Jupyter, or a line every 30 s otherwise
    (IMPULSE_PROGRESS_SECONDS), as the CLI. train(progress=False) turns it off."""

    def __init__(self, mode: str, stream=None):
        self.mode, self.stream = mode, stream if stream is not None else sys.stderr
        self.t0 = time.monotonic()
        self.last = -1e9 if mode in ("terminal", "jupyter") else self.t0  # lines: the first after `every` s
        self.first = None
        self.handle = None
        self.shown = ""  # the terminal line on screen
        self.every = {"terminal": 0.1, "jupyter": 0.5}.get(mode, float(os.environ.get("IMPULSE_PROGRESS_SECONDS", 30)))

    @staticmethod
    def mode(progress) -> str | None:
        """progress=True/None (default: shown), False (off) -> 'terminal',
        'jupyter', 'lines' or None."""
        if progress is False:
            return None
        ip = sys.modules.get("IPython")
        shell = ip.get_ipython() if ip is not None and hasattr(ip, "get_ipython") else None
        if shell is not None and hasattr(shell, "kernel"):
            return "jupyter"
        isatty = getattr(sys.stderr, "isatty", None)
        return "terminal" if isatty is not None and isatty() else "lines"

    def line(self, info, width: int) -> str:
        n = info.epoch - (self.first or info.epoch) + 1
        elapsed = time.monotonic() - self.t0
        rate = n / elapsed if elapsed > 0 else 0.0
        eta = (info.epochs - info.epoch) / rate if rate > 0 else 0.0
        parts = [f"epoch {info.epoch}/{info.epochs}", f"loss {info.loss:.4g}",
                 f"best {info.best_loss:.4g} @ {info.best_epoch}",
                 f"{rate:.3g} epochs/s" if rate >= 1 else f"{1 / rate:.3g} s/epoch" if rate > 0 else "",
                 f"ETA {_duration(eta)}"]
        text = "  ".join(p for p in parts if p)
        while len(text) > width and len(parts) > 2:   # drop the middle items first, keep epoch, loss and ETA
            parts.pop(2 if len(parts) > 3 else 1)
            text = "  ".join(p for p in parts if p)
        return text[:width]

    def update(self, info) -> None:
        if self.first is None:
            self.first = info.epoch
        now = time.monotonic()
        if now - self.last < self.every and (info.epoch < info.epochs or self.mode == "lines"):
            return
        self.last = now
        if self.mode == "terminal":
            width = shutil.get_terminal_size((80, 24)).columns - 1
            self.shown = self.line(info, width).ljust(width)
            self.stream.write("\r" + self.shown)
        elif self.mode == "jupyter":
            text = _Text("impulse: " + self.line(info, 200))
            if self.handle is None:
                from IPython.display import display
                self.handle = display(text, display_id=True)
            else:
                self.handle.update(text)
            return
        else:
            self.stream.write("impulse: " + self.line(info, 200) + "\n")
        self.stream.flush()

    def hide(self) -> None:
        """Clear the terminal line, so that what a callback prints starts on a clean line."""
        if self.mode == "terminal" and self.shown:
            self.stream.write("\r" + " " * len(self.shown) + "\r")
            self.stream.flush()

    def show(self) -> None:
        if self.mode == "terminal" and self.shown:
            self.stream.write("\r" + self.shown)
            self.stream.flush()

    def close(self) -> None:
        if self.mode == "terminal" and self.shown:
            self.stream.write("\n")
            self.stream.flush()


class _Hooks:
    """imp_train_hooks for one run: the Python callback (and Ctrl-C) through
    on_epoch, the loss history, the report, the JSON-lines log, resumable state."""

    def __init__(self, hooks, epochs, callback, intr, log=None, resume=None, state=None, checkpoint_every=0,
                 checkpoint_seconds=0.0, diverge_factor=None, progress=True, keep="best"):
        self.callback, self.intr, self.history = callback, intr, []
        mode = Progress.mode(progress)
        self.progress = Progress(mode) if mode else None
        if log and resume:  # the log's lines of epochs after the state's would repeat
            epoch = ctypes.c_int(0)
            if _lib.lib.imp_train_state_epoch(os.fsencode(resume), ctypes.byref(epoch)) == 0:
                _lib.check(_lib.lib.imp_train_log_truncate(os.fsencode(log), epoch.value))
        self.log = open(log, "a" if resume else "w") if log else None
        self.report = _lib.TrainReport()
        self.losses = np.full(max(epochs, 1), np.nan)
        self.fn = _lib.EPOCH_FN(self._on_epoch)
        self._keep = [os.fsencode(p) if p else None for p in (state, resume)]
        hooks.on_epoch, hooks.user_data = self.fn, None
        hooks.loss_history, hooks.report = ptr(self.losses), ctypes.pointer(self.report)
        if diverge_factor is not None:
            hooks.diverge_factor = diverge_factor
        if keep not in ("best", "last"):
            raise Error(f"keep: '{keep}' is neither 'best' nor 'last'")
        hooks.keep = 1 if keep == "last" else 0
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
        if self.progress is not None:
            try:
                self.progress.update(info)
            except Exception:  # a display that fails must not stop training
                self.progress = None
        stop = False
        if self.callback is not None:
            if self.progress is not None:
                self.progress.hide()
            try:
                stop = bool(self.callback(info.epoch, Loss(loss, lr=info.lr, seconds=info.seconds)))
            except BaseException as e:  # never unwind through C: report it and stop
                print(f"impulse: the training callback raised {e!r}; stopping")
                stop = True
            if self.progress is not None:
                self.progress.show()
        return 1 if stop or self.intr.hit else 0

    def finish(self, model):
        if self.progress is not None:
            self.progress.close()
        if self.log:
            self.log.close()
        r = self.report
        model.history = self.history
        model.loss_history = self.losses[:r.epochs_done].copy() if r.epochs_done > 0 else np.empty(0)
        model.report = {"end": STOP_NAMES[r.stop] if 0 <= r.stop < 4 else str(r.stop), "epochs_done": r.epochs_done,
                        "resumed_at": r.resumed_at, "best_epoch": r.best_epoch, "best_loss": r.best_loss,
                        "final_loss": r.final_loss, "seconds": r.seconds, "kept_epoch": r.kept_epoch,
                        "far_above_best": bool(r.far_above_best)}
        model.stopped_early = r.stop == 1
        model.interrupted = self.intr.hit
