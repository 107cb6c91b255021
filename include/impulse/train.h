/* Control of a training run, shared by every model family (imp_model_train
 * for the CD-Lagrange strand, imp_ctrain for the constrained networks): a
 * per-epoch callback that can stop the run, the loss history, a divergence
 * guard that keeps the best model so far, and resumable training states.
 *
 * Plain C structs of scalars and pointers (no varargs), callable through
 * ctypes. Zero-initialise an imp_train_hooks (or use the training options'
 * _default function, which does) and set what you need.
 *
 * The best model: the parameters at the end of the epoch with the lowest
 * mean training loss so far (epoch 0 = the initial parameters, whose loss is
 * estimated by the first minibatch). When a run ends normally the
 * parameters are the last epoch's; when it is stopped (callback) or
 * diverges they are the best model's. */
#ifndef IMPULSE_TRAIN_H
#define IMPULSE_TRAIN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IMP_TRAIN_MAX_PARTS 4

typedef struct imp_loss_part {
    const char *name;     /* "total", "state", "contact", "l2", "l1", ... */
    double value;         /* mean over the epoch's minibatches */
} imp_loss_part;

/* What the callback sees after each epoch (valid during the call only). */
typedef struct imp_epoch_info {
    int epoch;            /* epochs completed: 1 .. epochs */
    int epochs;           /* epochs of the whole run */
    double loss;          /* mean training loss of this epoch (= parts[0].value) */
    int n_parts;          /* parts[0] is the total, then its terms */
    imp_loss_part parts[IMP_TRAIN_MAX_PARTS];
    double lr;            /* learning rate used in this epoch */
    double seconds;       /* training wall time so far, earlier sessions of a
                             resumed run included */
    int best_epoch;       /* epoch of the best model so far (0: the initial one) */
    double best_loss;
} imp_epoch_info;

/* Called after every epoch, in the thread that called the training
 * function; return 0 to go on, non-zero to stop the run cleanly after this
 * epoch (the parameters become the best model's, the training state is
 * written if one is kept, and the report says IMP_TRAIN_STOPPED). */
typedef int (*imp_epoch_fn)(const imp_epoch_info *info, void *user_data);

enum imp_train_stop {
    IMP_TRAIN_FINISHED = 0, /* every epoch ran */
    IMP_TRAIN_STOPPED = 1,  /* the callback asked to stop */
    IMP_TRAIN_DIVERGED = 2, /* the divergence guard stopped it (status IMP_ERR_NUMERIC) */
    IMP_TRAIN_FAILED = 3    /* another error */
};

/* A finished run whose final loss is more than this many times its best
 * epoch's loss ended far above its best (imp_train_report.far_above_best;
 * the command line's exit status 3): the rate was probably too high. */
#define IMP_TRAIN_FAR_ABOVE_BEST 10.0

/* Which model a run returns: the best epoch's (lowest epoch loss; the
 * default, and always for stopped and diverged runs) or, for a run that
 * finished, the last epoch's. */
enum imp_train_keep { IMP_KEEP_BEST = 0, IMP_KEEP_LAST = 1 };

/* How a run ended; written at return (also on failure) when requested. */
typedef struct imp_train_report {
    int stop;             /* enum imp_train_stop */
    int epochs_done;      /* epochs completed (resumed ones included) */
    int resumed_at;       /* epoch the run continued from (0: a fresh run) */
    int best_epoch;       /* 0: the initial parameters */
    double best_loss;
    double final_loss;    /* mean loss of the last completed epoch */
    double seconds;       /* training wall time, earlier sessions included */
    int kept_epoch;       /* the epoch whose parameters were returned (0: the initial ones) */
    int far_above_best;   /* 1: finished with final_loss > IMP_TRAIN_FAR_ABOVE_BEST x best_loss */
} imp_train_report;

typedef struct imp_train_hooks {
    imp_epoch_fn on_epoch;     /* NULL: none */
    void *user_data;           /* passed to on_epoch */
    double *loss_history;      /* NULL, or room for `epochs` doubles: history[e - 1] = mean
                                  loss of epoch e (restored epochs of a resumed run too;
                                  entries after the last completed epoch are left alone) */
    imp_train_report *report;  /* NULL, or filled at return */
    double diverge_factor;     /* stop when an epoch's loss exceeds this many times the best
                                  loss so far (default 1e3); <= 0: only a non-finite loss stops */
    /* Resumable training: the whole training state (parameters, optimiser
     * moments and step, RNG, shuffling order, epoch, schedule position, best
     * model, loss history, elapsed time) written atomically to state_path
     * every state_every epochs and/or every state_seconds seconds (0: not by
     * that measure) and after the last epoch; a run given resume_path
     * continues from such a file and produces bit-identical parameters to an
     * uninterrupted run (same options, data, and thread count). */
    const char *state_path;
    int state_every;
    double state_seconds;
    const char *resume_path;
    int keep;                  /* enum imp_train_keep (default IMP_KEEP_BEST) */
} imp_train_hooks;

/* The epoch a training state file (state_path above, the CLI's
 * OUT.state.npz) holds: the epochs completed when it was written. */
int imp_train_state_epoch(const char *state_path, int *epoch);

/* The per-epoch log of a run about to resume from a state of `epoch` (JSON
 * lines with an "epoch" member, as the CLI and the Python package write
 * them): keeps its leading lines of epochs up to `epoch` and drops the rest
 * (epochs run after that state was written, which the resumed run runs
 * again, and a line torn by a kill); rewritten atomically when anything
 * is dropped. A log that does not exist is left so (IMP_OK). */
int imp_train_log_truncate(const char *log_path, int epoch);

/* Zero hooks with the default divergence factor. */
void imp_train_hooks_default(imp_train_hooks *h);

/* Name of a stop reason ("finished", "stopped", "diverged", "failed"). */
const char *imp_train_stop_name(int stop);

#ifdef __cplusplus
}
#endif
#endif
