/* Training of the constrained-network models with the reference settings
 * ([F] section 7, [chnn] section 3): one random 5-state chunk per training
 * trajectory, RK4 (3/8 rule) with step dt through the chunk, L1 loss averaged
 * over every entry including t0, gradients straight through the solver,
 * AdamW with a cosine schedule stepped per epoch. */
#include "impulse/chnn_models.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void imp_ctrain_opts_default(imp_ctrain_opts *o)
{
    memset(o, 0, sizeof *o);
    o->epochs = 2000;
    o->lr = 3e-3;
    o->weight_decay = 1e-4;
    o->batch = 200;
    o->n_chunks = 800;
    o->chunk_steps = 4;
    o->seed = 0;
}

int imp_ctrain_make_chunks(const imp_ctraj *data, int n_chunks, int chunk_steps, imp_rng *rng,
                           double **chunks, int *n_out)
{
    if (!data || !data->z || !chunks || !n_out) return imp_fail(IMP_ERR_INVALID, "chunks: NULL argument");
    if (chunk_steps < 1) return imp_fail(IMP_ERR_INVALID, "chunk_steps: %d must be >= 1", chunk_steps);
    int L = chunk_steps + 1;
    if (data->T < L)
        return imp_fail(IMP_ERR_SHAPE, "data: trajectories of %d states are shorter than a chunk of %d",
                        data->T, L);
    if (n_chunks < 1) return imp_fail(IMP_ERR_INVALID, "n_chunks: %d must be >= 1", n_chunks);
    int n = n_chunks < data->n_traj ? n_chunks : data->n_traj;
    int n_win = data->T / L; /* non-overlapping windows, as the reference */
    size_t csz = (size_t)L * data->dim;
    double *c = malloc((size_t)n * csz * sizeof(double));
    if (!c) return imp_fail(IMP_ERR_NOMEM, "chunks: out of memory");
    for (int i = 0; i < n; i++) {
        int win = (int)imp_rng_below(rng, (size_t)n_win);
        const double *src = data->z + ((size_t)i * data->T + (size_t)win * L) * data->dim;
        memcpy(c + (size_t)i * csz, src, csz * sizeof(double));
    }
    *chunks = c;
    *n_out = n;
    return IMP_OK;
}

int imp_ctrain_chunk_loss(const imp_cmodel *m, const double *params, const double *chunks, int B,
                          int S, double dt, imp_cmodel_work *w, double *traj, double *traj_bar,
                          double *grad, double *loss)
{
    int dim = m->dim;
    size_t n = (size_t)B * dim;
    imp_cmodel_binding bind = {m, params, w};
    imp_ode ode;
    imp_cmodel_ode(&ode, &bind);
    /* y0 = first state of each chunk; traj is (S+1) x B x dim */
    for (int b = 0; b < B; b++)
        memcpy(traj + (size_t)b * dim, chunks + (size_t)b * (S + 1) * dim, (size_t)dim * sizeof(double));
    int st = imp_integrate_fixed(&imp_stepper_rk4, &ode, 0.0, dt, S, traj, B, traj);
    if (st) return st;
    double total = (double)(S + 1) * (double)n, acc = 0;
    for (int k = 0; k <= S; k++)
        for (int b = 0; b < B; b++) {
            const double *pr = traj + ((size_t)k * B + b) * dim;
            const double *tg = chunks + ((size_t)b * (S + 1) + k) * dim;
            double *gb = traj_bar + ((size_t)k * B + b) * dim;
            for (int i = 0; i < dim; i++) {
                double d = pr[i] - tg[i];
                acc += fabs(d);
                gb[i] = (d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0) / total;
            }
        }
    *loss = acc / total;
    if (!grad) return IMP_OK;
    double *y0bar = calloc(n, sizeof(double));
    if (!y0bar) return imp_fail(IMP_ERR_NOMEM, "train: out of memory");
    st = imp_integrate_fixed_vjp(&imp_stepper_rk4, &ode, 0.0, dt, S, traj, B, traj_bar, y0bar, grad);
    free(y0bar);
    return st;
}

int imp_ctrain(const imp_cmodel *m, double *params, const imp_ctraj *data,
               const imp_ctrain_opts *o, imp_ctrain_result *res)
{
    if (!m || !params || !data || !o || !res) return imp_fail(IMP_ERR_INVALID, "train: NULL argument");
    if (data->dim != m->dim)
        return imp_fail(IMP_ERR_SHAPE, "data: state size %d does not match the model's %d", data->dim, m->dim);
    if (o->epochs < 0) return imp_fail(IMP_ERR_INVALID, "epochs: %d must be >= 0", o->epochs);
    if (o->batch < 1) return imp_fail(IMP_ERR_INVALID, "batch: %d must be >= 1", o->batch);
    if (!(o->lr > 0) || !isfinite(o->lr)) return imp_fail(IMP_ERR_INVALID, "lr: %g must be positive", o->lr);
    if (!(o->weight_decay >= 0)) return imp_fail(IMP_ERR_INVALID, "weight_decay: %g must be >= 0", o->weight_decay);
    if (!(data->dt > 0)) return imp_fail(IMP_ERR_INVALID, "data.dt: %g must be positive", data->dt);
    memset(res, 0, sizeof *res);
    imp_rng rng;
    imp_rng_seed(&rng, o->seed);
    double *chunks = NULL;
    int n_chunks = 0;
    int st = imp_ctrain_make_chunks(data, o->n_chunks, o->chunk_steps, &rng, &chunks, &n_chunks);
    if (st) return st;
    int S = o->chunk_steps, dim = m->dim;
    int B = o->batch < n_chunks ? o->batch : n_chunks;
    size_t csz = (size_t)(S + 1) * dim;
    imp_cmodel_work *w = imp_cmodel_work_new(m, B);
    double *grad = malloc(m->n_params * sizeof(double));
    double *batch = malloc((size_t)B * csz * sizeof(double));
    double *traj = malloc((size_t)B * csz * sizeof(double));
    double *traj_bar = malloc((size_t)B * csz * sizeof(double));
    size_t *perm = malloc((size_t)n_chunks * sizeof(size_t));
    imp_adam opt;
    int have_opt = 0;
    if (!w || !grad || !batch || !traj || !traj_bar || !perm) {
        st = imp_fail(IMP_ERR_NOMEM, "train: out of memory");
        goto done;
    }
    st = imp_adam_init(&opt, m->n_params, o->lr, 0.9, 0.999, 1e-8, o->weight_decay);
    if (st) goto done;
    have_opt = 1;
    for (int i = 0; i < n_chunks; i++) perm[i] = (size_t)i;
    double t_start = imp_time_now();
    for (int ep = 0; ep < o->epochs; ep++) {
        /* CosineAnnealingLR(T_max = epochs, eta_min = 0), stepped per epoch */
        double lr = imp_cosine_lr(o->lr, 0.0, ep, o->epochs);
        imp_rng_shuffle(&rng, perm, (size_t)n_chunks);
        double ep_loss = 0;
        int n_batches = 0;
        for (int s0 = 0; s0 < n_chunks; s0 += B) {
            int bs = n_chunks - s0 < B ? n_chunks - s0 : B;
            for (int b = 0; b < bs; b++)
                memcpy(batch + (size_t)b * csz, chunks + perm[s0 + b] * csz, csz * sizeof(double));
            memset(grad, 0, m->n_params * sizeof(double));
            double loss;
            st = imp_ctrain_chunk_loss(m, params, batch, bs, S, data->dt, w, traj, traj_bar, grad, &loss);
            if (st) {
                imp_fail_context(st, "epoch %d", ep);
                goto done;
            }
            st = imp_check_finite(grad, m->n_params, "gradient");
            if (st) {
                imp_fail_context(st, "epoch %d", ep);
                goto done;
            }
            imp_adam_step(&opt, params, grad, lr);
            ep_loss += loss;
            n_batches++;
        }
        res->final_loss = ep_loss / n_batches;
        res->epochs = ep + 1;
        if (o->progress) o->progress(o->progress_user, ep, res->final_loss, imp_time_now() - t_start);
    }
    res->seconds = imp_time_now() - t_start;
done:
    if (have_opt) imp_adam_free(&opt);
    imp_cmodel_work_free(w);
    free(grad);
    free(batch);
    free(traj);
    free(traj_bar);
    free(perm);
    free(chunks);
    return st;
}
