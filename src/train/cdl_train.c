/* Training of the CD-Lagrange strand's models: every window of horizon H
 * (stride 1, as the reference code) of every trajectory, shuffled into
 * mini-batches each epoch, Adam on state MSE + contact BCE + L2 ([P] 3.2). */
#include "impulse/cdl.h"
#include "impulse/io.h"
#include "io/meta.h"
#include "train/cdl_pool.h"
#include "train/cdl_refit.h"
#include "train_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void imp_train_opts_default(imp_train_opts *o, int code_settings)
{
    memset(o, 0, sizeof *o);
    o->horizon = 10;
    o->batch = 32;
    o->epochs = 3000;
    o->lr = code_settings ? 1e-2 : 1e-3;
    o->l2 = code_settings ? 5e-3 : 0.05;
    o->single_contact = 1;
    o->single_potential = 1;
    o->threads = 1;
    o->lr_schedule = IMP_LR_AUTO; /* constant on impulse's own data, cosine on other data */
    imp_train_hooks_default(&o->hooks);
    imp_law_refit_opts_default(&o->refit);
}

int imp_lr_schedule_from_name(const char *name, int *schedule)
{
    static const char *const names[] = {"auto", "constant", "cosine"};
    for (int i = 0; name && i < 3; i++)
        if (!strcmp(name, names[i])) {
            if (schedule) *schedule = i;
            return IMP_OK;
        }
    return imp_fail(IMP_ERR_INVALID, "lr schedule: '%s' is not constant, cosine or auto", name ? name : "(null)");
}

const char *imp_lr_schedule_name(int schedule)
{
    return schedule == IMP_LR_AUTO       ? "auto"
           : schedule == IMP_LR_CONSTANT ? "constant"
           : schedule == IMP_LR_COSINE   ? "cosine"
                                         : NULL;
}

int imp_train_default_lr_schedule(const imp_trajset *data)
{
    /* the impact law's test of "made by impulse's event-driven simulators" */
    return imp_cdl_default_impact_law(data) == IMP_CDL_IMPACT_PAPER ? IMP_LR_CONSTANT : IMP_LR_COSINE;
}

double imp_train_epoch_lr(int schedule, double lr, int epoch, int epochs)
{
    if (schedule == IMP_LR_CONSTANT) return lr;
    if (schedule == IMP_LR_COSINE) return imp_cosine_lr(lr, 0.0, (long)epoch - 1, epochs);
    return NAN;
}

int imp_cdl_check_loss_opts(const imp_train_opts *o, const imp_trajset *d)
{
    if (o->horizon < 1) return imp_fail(IMP_ERR_INVALID, "horizon: %d must be >= 1", o->horizon);
    if (o->horizon >= d->n_steps)
        return imp_fail(IMP_ERR_INVALID, "horizon: %d must be shorter than the trajectories (%d steps)",
                        o->horizon, d->n_steps);
    if (!(o->l2 >= 0.0) || !isfinite(o->l2)) return imp_fail(IMP_ERR_INVALID, "l2: %g must be >= 0", o->l2);
    if (o->threads < 0 || o->threads > 64) return imp_fail(IMP_ERR_INVALID, "threads: %d must be in 1..64", o->threads);
    return IMP_OK;
}

static int check_opts(const imp_train_opts *o, const imp_trajset *d)
{
    if (o->epochs < 0) return imp_fail(IMP_ERR_INVALID, "epochs: %d must be >= 0", o->epochs);
    if (o->batch < 1) return imp_fail(IMP_ERR_INVALID, "batch: %d must be >= 1", o->batch);
    if (!(o->lr > 0.0) || !isfinite(o->lr)) return imp_fail(IMP_ERR_INVALID, "lr: %g must be positive", o->lr);
    if (!imp_lr_schedule_name(o->lr_schedule))
        return imp_fail(IMP_ERR_INVALID, "lr_schedule: %d is not IMP_LR_AUTO, IMP_LR_CONSTANT or IMP_LR_COSINE",
                        o->lr_schedule);
    return imp_cdl_check_loss_opts(o, d);
}

/* Sample i (of trajectory-major n_traj x n_steps) lies inside a multi-sample impact. */
static int interior(const imp_trajset *d, size_t i)
{
    return d->interior && d->interior[i] != 0.0;
}

/* Sample i rests on a contact: with the onset handling (one label per
 * impact), a label of body k whose previous sample in the trajectory is
 * labelled too. An impulse at every step cannot hold a body at rest
 * (docs/cdl.md, "Resting contact"): such a target is left out of the state
 * loss, as an interior one is. */
static int resting(const imp_trajset *d, size_t i)
{
    if (!d->has_contact || strcmp(d->labels, "onset") || i % (size_t)d->n_steps == 0) return 0;
    const int K = d->geom.n_bodies;
    for (int k = 0; k < K; k++)
        if (d->contact[i * K + k] != 0.0 && d->contact[(i - 1) * K + k] != 0.0) return 1;
    return 0;
}

size_t imp_cdl_windows(const imp_trajset *d, int H, size_t *starts)
{
    const int per_traj = d->n_steps - H;
    size_t n = 0;
    for (size_t i = 0; i < (size_t)d->n_traj * per_traj; i++)
        if (!interior(d, i / per_traj * d->n_steps + i % per_traj)) {
            if (starts) starts[n] = i;
            n++;
        }
    return n;
}

void imp_cdl_fill_window(const imp_model *m, const imp_trajset *d, int H, size_t win, double *x0, double *target,
                         double *labels, double *weight)
{
    const int D = m->D, K = m->K, S = 2 * D, per_traj = d->n_steps - H;
    /* resting targets: CD-Lagrange's impulse law cannot hold a body at rest (a
     * ResNetContact can learn it) */
    const int rest_out = m->cfg.kind == IMP_MODEL_CDL;
    size_t base = win / per_traj * d->n_steps, t0 = win % per_traj;
    memcpy(x0, d->q + (base + t0) * D, D * sizeof(double));
    memcpy(x0 + D, d->qdot + (base + t0) * D, D * sizeof(double));
    for (int k = 0; k < H; k++) {
        size_t t = base + t0 + 1 + k;
        memcpy(target + (size_t)k * S, d->q + t * D, D * sizeof(double));
        memcpy(target + (size_t)k * S + D, d->qdot + t * D, D * sizeof(double));
        memcpy(labels + (size_t)k * K, d->contact + t * K, K * sizeof(double));
        weight[k] = interior(d, t) || (rest_out && resting(d, t)) ? 0.0 : 1.0;
    }
}

/* Everything the rest of a run depends on besides the state itself: the
 * options, the model's layout and a checksum of the data. */
static int fingerprint(const imp_model *m, const imp_trajset *d, const imp_train_opts *o, int schedule, imp_json *j)
{
    size_t nq = (size_t)d->n_traj * d->n_steps * m->D, nc = (size_t)d->n_traj * d->n_steps * m->K;
    uint64_t h = imp_fnv1a(d->q, nq * sizeof(double), IMP_FNV_START);
    h = imp_fnv1a(d->qdot, nq * sizeof(double), h);
    if (d->contact) h = imp_fnv1a(d->contact, nc * sizeof(double), h);
    if (d->interior) h = imp_fnv1a(d->interior, (size_t)d->n_traj * d->n_steps * sizeof(double), h);
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    imp_json_begin_object(j);
    imp_json_kv_string(j, "model", imp_model_kind_name(m->cfg.kind));
    imp_json_kv_int(j, "n_params", (long long)m->n_params);
    imp_json_kv_int(j, "hidden", m->cfg.hidden);
    imp_json_kv_int(j, "hidden_layers", m->cfg.hidden_layers);
    imp_json_kv_string(j, "activation", imp_activation_name(m->cfg.act));
    imp_json_kv_int(j, "contact_hidden", m->cfg.contact_hidden);
    imp_json_kv_int(j, "touch", m->cfg.touch);
    imp_json_kv_int(j, "projection", m->cfg.projection);
    imp_json_kv_int(j, "learn_damping", m->cfg.learn_damping);
    imp_json_kv_int(j, "learn_mass", m->cfg.learn_mass);
    imp_json_kv_int(j, "learn_restitution", m->cfg.learn_restitution);
    imp_json_kv_int(j, "friction", m->cfg.friction);
    if (m->cfg.impact_timing) imp_json_kv_string(j, "impact_timing", "event"); /* absent: step, as before */
    imp_json_kv_int(j, "horizon", o->horizon);
    imp_json_kv_int(j, "batch", o->batch);
    imp_json_kv_number(j, "lr", o->lr);
    imp_json_kv_number(j, "l2", o->l2);
    /* the schedule's position is the epoch (in the state's counters); a
     * cosine's rate also depends on the run's length. Only when annealed, so
     * that the state files of constant-rate runs keep their fingerprint. */
    if (schedule != IMP_LR_CONSTANT) {
        imp_json_kv_string(j, "lr_schedule", imp_lr_schedule_name(schedule));
        imp_json_kv_int(j, "epochs", o->epochs);
    }
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", o->seed);
    imp_json_kv_string(j, "seed", seed);
    imp_json_kv_int(j, "single_contact", o->single_contact);
    imp_json_kv_int(j, "single_potential", o->single_potential);
    imp_json_kv_int(j, "n_traj", d->n_traj);
    imp_json_kv_int(j, "n_steps", d->n_steps);
    imp_json_kv_string(j, "data_fnv1a", hex);
    imp_json_end_object(j);
    return imp_json_text(j) ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "training: out of memory");
}

int imp_model_train(imp_model *m, const imp_trajset *data, const imp_train_opts *opts,
                    imp_loss_parts *final_loss)
{
    int st = check_opts(opts, data);
    if (st) return st;
    if (data->geom.n_bodies != m->K || data->geom.dim != m->geom.dim)
        return imp_fail(IMP_ERR_SHAPE, "data: %d bodies x %d dims, the model expects %d x %d",
                        data->geom.n_bodies, data->geom.dim, m->K, m->geom.dim);
    if (fabs(data->dt - m->dt) > 1e-12 * m->dt)
        return imp_fail(IMP_ERR_INVALID, "data: dt %g differs from the model's %g", data->dt, m->dt);
    size_t nq = (size_t)data->n_traj * data->n_steps * m->D;
    if ((st = imp_check_finite(data->q, nq, "q")) || (st = imp_check_finite(data->qdot, nq, "qdot")))
        return st;
    if (opts->law_refit && (st = imp_law_refit_check(m, data, opts))) return st;
    snprintf(m->system, sizeof m->system, "%s", data->system);
    if (m->cfg.contact_tol == IMP_CONTACT_TOL_AUTO) m->cfg.contact_tol = imp_cdl_default_contact_tol(data);
    m->gravity = data->gravity;
    m->length = data->length;

    const int H = opts->horizon, D = m->D, K = m->K, S = 2 * D;
    const int schedule = opts->lr_schedule == IMP_LR_AUTO ? imp_train_default_lr_schedule(data) : opts->lr_schedule;
    /* every window, except those starting inside a multi-sample impact
     * (data->interior): its state is mid-impact, not one the model steps from */
    size_t n_windows = imp_cdl_windows(data, H, NULL);
    if (n_windows == 0) return imp_fail(IMP_ERR_INVALID, "data: every window starts inside an impact (interior)");
    /* a batch larger than the data is the whole data: no larger buffers */
    const int B = (size_t)opts->batch > n_windows ? (int)n_windows : opts->batch;
    size_t *order = malloc(n_windows * sizeof *order), *starts = malloc(n_windows * sizeof *starts);
    double *x0 = malloc((size_t)B * S * sizeof(double));
    double *target = malloc((size_t)B * H * S * sizeof(double));
    double *labels = malloc((size_t)B * H * K * sizeof(double));
    double *weight = malloc((size_t)B * H * sizeof(double));
    double *grad = malloc(m->n_params * sizeof(double));
    imp_cdl_pool *pool = NULL; /* work spaces (in the training precisions) and threads: train/cdl_pool.c */
    imp_adam opt = {0};
    imp_track tr = {0};
    imp_json fp;
    imp_json_init(&fp);
    if (!order || !starts || !x0 || !target || !labels || !weight || !grad) {
        st = imp_fail(IMP_ERR_NOMEM, "training: out of memory");
        goto done;
    }
    if ((st = imp_track_init(&tr, &opts->hooks, opts->epochs, m->params, m->n_params))) goto done;
    if ((st = imp_cdl_pool_new(&pool, m, B, H, opts->threads > 0 ? opts->threads : 1, opts->single_contact,
                               opts->single_potential)))
        goto done;
    if ((st = imp_adam_init(&opt, m->n_params, opts->lr, 0.9, 0.999, 1e-7, 0.0))) goto done;
    for (size_t i = 0; i < n_windows; i++) order[i] = i;
    imp_cdl_windows(data, H, starts);
    imp_rng rng;
    imp_rng_seed(&rng, opts->seed ^ 0x5EEDF00Dull);
    imp_train_state ts = {"cdl", NULL, &opt, &rng, order, n_windows, m->params};
    if (tr.h.state_path || tr.h.resume_path) {
        if ((st = fingerprint(m, data, opts, schedule, &fp))) goto done;
        ts.fingerprint = imp_json_text(&fp);
    }
    if (tr.h.resume_path && (st = imp_train_state_load(&tr, &ts))) goto done;
    imp_loss_parts mean = {0};
    if (tr.epoch > 0) mean.total = tr.final_loss;
    for (int epoch = tr.epoch + 1; epoch <= opts->epochs; epoch++) {
        const double lr = imp_train_epoch_lr(schedule, opts->lr, epoch, opts->epochs);
        imp_rng_shuffle(&rng, order, n_windows);
        memset(&mean, 0, sizeof mean);
        size_t n_batches = 0;
        for (size_t start = 0; start < n_windows; start += B) {
            int bs = (int)(n_windows - start < (size_t)B ? n_windows - start : (size_t)B);
            for (int b = 0; b < bs; b++)
                imp_cdl_fill_window(m, data, H, starts[order[start + b]], x0 + (size_t)b * S,
                                    target + (size_t)b * H * S, labels + (size_t)b * H * K, weight + (size_t)b * H);
            memset(grad, 0, m->n_params * sizeof(double));
            imp_loss_parts lp;
            st = imp_cdl_pool_loss(pool, m->params, x0, target, labels, weight, bs, opts->l2, grad, &lp);
            if (!st) st = imp_check_finite(grad, m->n_params, "gradient");
            if (st) {
                st = imp_track_batch_failed(&tr, st);
                goto done;
            }
            if (n_batches == 0) imp_track_initial_loss(&tr, lp.total);
            imp_adam_step(&opt, m->params, grad, lr);
            mean.state += lp.state, mean.contact += lp.contact, mean.l2 += lp.l2, mean.total += lp.total;
            n_batches++;
        }
        mean.state /= n_batches, mean.contact /= n_batches, mean.l2 /= n_batches, mean.total /= n_batches;
        imp_loss_part parts[4] = {{"total", mean.total}, {"state", mean.state}, {"contact", mean.contact}, {"l2", mean.l2}};
        int stop = 0;
        if ((st = imp_track_epoch(&tr, m->params, parts, 4, lr, &stop))) goto done;
        if (opts->on_progress && opts->progress > 0 && (epoch % opts->progress == 0 || epoch == opts->epochs))
            opts->on_progress(opts->user, epoch, &mean);
        if (imp_track_state_due(&tr) && (st = imp_train_state_save(&tr, &ts))) goto done;
        if (stop) break;
    }
    if ((st = imp_check_finite(m->params, m->n_params, "parameters"))) {
        st = imp_track_batch_failed(&tr, st);
        goto done;
    }
    if (final_loss) *final_loss = mean;
done:
    if (tr.best) imp_track_end(&tr, st, m->params);
    /* the law refit on the model kept (docs/derivations/contact.md sec 13) */
    if (!st && tr.best && opts->law_refit && tr.stop == IMP_TRAIN_FINISHED)
        st = imp_model_law_refit(m, data, opts, opts->refit_report);
    imp_track_free(&tr);
    imp_json_free(&fp);
    imp_adam_free(&opt);
    imp_cdl_pool_free(pool);
    free(order), free(starts), free(x0), free(target), free(labels), free(weight), free(grad);
    return st;
}
