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

/* Kutta's 3/8 rule (torchdiffeq "rk4", used by the reference for training). */
static const double rk38_a[4][4] = {
    {0, 0, 0, 0}, {1.0 / 3.0, 0, 0, 0}, {-1.0 / 3.0, 1.0, 0, 0}, {1.0, -1.0, 1.0, 0}};
static const double rk38_b[4] = {1.0 / 8.0, 3.0 / 8.0, 3.0 / 8.0, 1.0 / 8.0};

/* Taped RK4 rollout: traj (S+1) x B x dim from traj[0]; stage states Y
 * (S x 4 x B x dim) kept, network passes in slots 1 + 4k + i. */
static int taped_forward(const imp_cmodel *m, const double *params, int B, int S, double h,
                         imp_cmodel_work *w, double *traj, double *Y, double *K)
{
    size_t n = (size_t)B * m->dim;
    for (int k = 0; k < S; k++) {
        const double *y = traj + (size_t)k * n;
        double *Kk = K + (size_t)k * 4 * n;
        for (int i = 0; i < 4; i++) {
            double *Yi = Y + ((size_t)k * 4 + i) * n;
            memcpy(Yi, y, n * sizeof(double));
            for (int j = 0; j < i; j++) {
                double c = h * rk38_a[i][j];
                const double *kj = Kk + (size_t)j * n;
                for (size_t q = 0; q < n; q++) Yi[q] += c * kj[q];
            }
            int st = imp_cmodel_rhs_slot(m, params, Yi, B, Kk + (size_t)i * n, w, 1 + 4 * k + i);
            if (st) return st;
        }
        double *y1 = traj + (size_t)(k + 1) * n;
        memcpy(y1, y, n * sizeof(double));
        for (int i = 0; i < 4; i++) {
            double c = h * rk38_b[i];
            const double *ki = Kk + (size_t)i * n;
            for (size_t q = 0; q < n; q++) y1[q] += c * ki[q];
        }
    }
    return IMP_OK;
}

/* Reverse sweep of taped_forward: the transpose of each linearised step. */
static int taped_backward(const imp_cmodel *m, const double *params, int B, int S, double h,
                          imp_cmodel_work *w, const double *Y, const double *traj_bar, double *grad,
                          double *a, double *kbar, double *Ybar)
{
    size_t n = (size_t)B * m->dim;
    memcpy(a, traj_bar + (size_t)S * n, n * sizeof(double));
    for (int k = S - 1; k >= 0; k--) {
        for (int i = 0; i < 4; i++)
            for (size_t q = 0; q < n; q++) kbar[(size_t)i * n + q] = h * rk38_b[i] * a[q];
        /* a <- dL/dy_k: identity path plus every stage */
        for (int i = 3; i >= 0; i--) {
            memset(Ybar, 0, n * sizeof(double));
            int st = imp_cmodel_rhs_vjp_slot(m, params, Y + ((size_t)k * 4 + i) * n, B, kbar + (size_t)i * n,
                                             Ybar, grad, w, 1 + 4 * k + i);
            if (st) return st;
            for (size_t q = 0; q < n; q++) a[q] += Ybar[q];
            for (int j = 0; j < i; j++) {
                double c = h * rk38_a[i][j];
                if (c == 0.0) continue;
                for (size_t q = 0; q < n; q++) kbar[(size_t)j * n + q] += c * Ybar[q];
            }
        }
        const double *tb = traj_bar + (size_t)k * n;
        for (size_t q = 0; q < n; q++) a[q] += tb[q];
    }
    return IMP_OK;
}

int imp_ctrain_chunk_loss(const imp_cmodel *m, const double *params, const double *chunks, int B,
                          int S, double dt, imp_cmodel_work *w, double *traj, double *traj_bar,
                          double *grad, double *loss)
{
    int dim = m->dim;
    size_t n = (size_t)B * dim;
    int taped = imp_cmodel_work_slots(w) >= 4 * S + 1;
    imp_cmodel_binding bind = {m, params, w};
    imp_ode ode;
    imp_cmodel_ode(&ode, &bind);
    double *tape = NULL;
    if (taped) {
        /* Y and K (4 S n each), then a, kbar (4 n), Ybar for the reverse sweep */
        tape = malloc((8 * (size_t)S + 6) * n * sizeof(double));
        if (!tape) return imp_fail(IMP_ERR_NOMEM, "train: out of memory");
    }
    /* y0 = first state of each chunk; traj is (S+1) x B x dim */
    for (int b = 0; b < B; b++)
        memcpy(traj + (size_t)b * dim, chunks + (size_t)b * (S + 1) * dim, (size_t)dim * sizeof(double));
    int st = taped ? taped_forward(m, params, B, S, dt, w, traj, tape, tape + 4 * (size_t)S * n)
                   : imp_integrate_fixed(&imp_stepper_rk4, &ode, 0.0, dt, S, traj, B, traj);
    if (st) {
        free(tape);
        return st;
    }
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
    if (!isfinite(*loss)) {
        free(tape);
        return imp_fail(IMP_ERR_NUMERIC, "train: loss is not finite (the rollout diverged)");
    }
    if (!grad) {
        free(tape);
        return IMP_OK;
    }
    if (taped) {
        double *a = tape + 8 * (size_t)S * n;
        st = taped_backward(m, params, B, S, dt, w, tape, traj_bar, grad, a, a + n, a + 5 * n);
        free(tape);
        return st;
    }
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
    imp_cmodel_work *w = imp_cmodel_work_new_slots(m, B, 4 * S + 1);
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
