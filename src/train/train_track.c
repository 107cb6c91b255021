/* The epoch bookkeeping of every training loop: loss history, the best
 * model so far, the divergence guard, the per-epoch callback and the final
 * report (see include/impulse/train.h). */
#include "train_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void imp_train_hooks_default(imp_train_hooks *h)
{
    memset(h, 0, sizeof *h);
    h->diverge_factor = 1e3;
}

const char *imp_train_stop_name(int stop)
{
    switch (stop) {
    case IMP_TRAIN_FINISHED: return "finished";
    case IMP_TRAIN_STOPPED: return "stopped";
    case IMP_TRAIN_DIVERGED: return "diverged";
    default: return "failed";
    }
}

int imp_track_init(imp_track *t, const imp_train_hooks *hooks, int epochs, const double *params, size_t n)
{
    memset(t, 0, sizeof *t);
    if (hooks) t->h = *hooks;
    if (!(t->h.diverge_factor == t->h.diverge_factor))
        return imp_fail(IMP_ERR_INVALID, "diverge_factor: NaN");
    if (t->h.keep != IMP_KEEP_BEST && t->h.keep != IMP_KEEP_LAST)
        return imp_fail(IMP_ERR_INVALID, "keep: %d is neither best (0) nor last (1)", t->h.keep);
    if (t->h.state_every < 0) return imp_fail(IMP_ERR_INVALID, "state_every: %d must be >= 0", t->h.state_every);
    if (!(t->h.state_seconds >= 0) || !isfinite(t->h.state_seconds))
        return imp_fail(IMP_ERR_INVALID, "state_seconds: %g must be >= 0", t->h.state_seconds);
    t->epochs = epochs;
    t->n = n;
    t->best = malloc((n ? n : 1) * sizeof(double));
    t->history = calloc(epochs > 0 ? (size_t)epochs : 1, sizeof(double));
    if (!t->best || !t->history) {
        imp_track_free(t);
        return imp_fail(IMP_ERR_NOMEM, "training: out of memory (best model)");
    }
    memcpy(t->best, params, n * sizeof(double));
    t->best_loss = t->best_epoch_loss = INFINITY;
    t->t0 = t->last_state = imp_time_now();
    return IMP_OK;
}

void imp_track_free(imp_track *t)
{
    free(t->best);
    free(t->history);
    t->best = t->history = NULL;
}

double imp_track_seconds(const imp_track *t) { return t->seconds_before + imp_time_now() - t->t0; }

void imp_track_initial_loss(imp_track *t, double loss)
{
    if (t->epoch == 0 && isfinite(loss) && loss < t->best_loss) t->best_loss = loss;
}

/* The loss of the best model: its epoch's, or before an epoch completes the
 * initial parameters' estimate (a minibatch's loss, not an epoch's mean:
 * a completed epoch replaces it as the best model whatever its loss). */
static double best_model_loss(const imp_track *t) { return t->best_epoch > 0 ? t->best_epoch_loss : t->best_loss; }

static int diverged(imp_track *t, const char *what)
{
    t->stop = IMP_TRAIN_DIVERGED;
    return imp_fail(IMP_ERR_NUMERIC,
                    "training diverged at epoch %d of %d: %s; the best model (epoch %d, loss %.6g) is kept; %s",
                    t->epoch + 1, t->epochs, what, t->best_epoch, best_model_loss(t),
                    t->remedy ? t->remedy : "try a smaller learning rate");
}

int imp_track_epoch(imp_track *t, const double *params, const imp_loss_part *parts, int n_parts, double lr,
                    int *stop)
{
    *stop = 0;
    double loss = parts[0].value;
    char what[160];
    if (!isfinite(loss)) {
        snprintf(what, sizeof what, "the loss is %g", loss);
        return diverged(t, what);
    }
    /* the reference: the best epoch so far, or before the first epoch the
     * initial parameters' loss */
    double f = t->h.diverge_factor;
    if (f > 0 && t->best_loss > 0 && isfinite(t->best_loss) && loss > f * t->best_loss) {
        if (t->over < t->tolerate) {
            t->over++;
        } else {
            if (t->over)
                snprintf(what, sizeof what, "loss %.6g is more than %g times the best for %d epochs in a row", loss,
                         f, t->over + 1);
            else
                snprintf(what, sizeof what, "loss %.6g is more than %g times the best", loss, f);
            return diverged(t, what);
        }
    } else {
        t->over = 0;
    }
    int e = ++t->epoch;
    t->have_epoch = 1;
    t->final_loss = loss;
    t->history[e - 1] = loss;
    if (t->h.loss_history) t->h.loss_history[e - 1] = loss;
    if (loss < t->best_loss) t->best_loss = loss;
    if (loss < t->best_epoch_loss) {
        t->best_epoch_loss = loss;
        t->best_epoch = e;
        memcpy(t->best, params, t->n * sizeof(double));
    }
    if (t->h.on_epoch) {
        imp_epoch_info info;
        memset(&info, 0, sizeof info);
        info.epoch = e;
        info.epochs = t->epochs;
        info.loss = loss;
        info.n_parts = n_parts < IMP_TRAIN_MAX_PARTS ? n_parts : IMP_TRAIN_MAX_PARTS;
        for (int i = 0; i < info.n_parts; i++) info.parts[i] = parts[i];
        info.lr = lr;
        info.seconds = imp_track_seconds(t);
        info.best_epoch = t->best_epoch;
        info.best_loss = best_model_loss(t);
        if (t->h.on_epoch(&info, t->h.user_data)) {
            *stop = 1;
            t->stop = IMP_TRAIN_STOPPED;
        }
    }
    return IMP_OK;
}

int imp_track_batch_failed(imp_track *t, int st)
{
    if (st != IMP_ERR_NUMERIC) {
        t->stop = IMP_TRAIN_FAILED;
        return imp_fail_context(st, "epoch %d", t->epoch + 1);
    }
    char what[200];
    snprintf(what, sizeof what, "%s", imp_last_error());
    return diverged(t, what);
}

int imp_track_state_due(const imp_track *t)
{
    if (!t->h.state_path || !t->h.state_path[0]) return 0;
    if (t->epoch >= t->epochs || t->stop == IMP_TRAIN_STOPPED) return 1;
    if (t->h.state_every > 0 && t->epoch % t->h.state_every == 0) return 1;
    return t->h.state_seconds > 0 && imp_time_now() - t->last_state >= t->h.state_seconds;
}

int imp_track_end(imp_track *t, int st, double *params)
{
    if (st && t->stop == IMP_TRAIN_FINISHED) t->stop = IMP_TRAIN_FAILED;
    /* the best model, unless a finished run was asked for its last one (a
     * failed run's parameters are whatever they were) */
    int best = t->stop == IMP_TRAIN_STOPPED || t->stop == IMP_TRAIN_DIVERGED ||
               (t->stop == IMP_TRAIN_FINISHED && t->h.keep != IMP_KEEP_LAST);
    if (best && params) memcpy(params, t->best, t->n * sizeof(double));
    if (t->h.report) {
        imp_train_report *r = t->h.report;
        memset(r, 0, sizeof *r);
        r->stop = t->stop;
        r->epochs_done = t->epoch;
        r->resumed_at = t->resumed_at;
        r->best_epoch = t->best_epoch;
        r->best_loss = best_model_loss(t);
        r->final_loss = t->final_loss;
        r->seconds = imp_track_seconds(t);
        r->kept_epoch = best ? t->best_epoch : t->epoch;
        /* epochs' means against each other (not the initial estimate) */
        r->far_above_best = t->stop == IMP_TRAIN_FINISHED && t->best_epoch > 0 && t->best_epoch_loss > 0 &&
                            t->final_loss > IMP_TRAIN_FAR_ABOVE_BEST * t->best_epoch_loss;
    }
    return st;
}
