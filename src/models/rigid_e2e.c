/* The end-to-end baseline of the cube tosses: a residual next-state network
 * over rigid-body states (include/impulse/rigid_models.h). Built from the
 * project's MLP kernels, Adam, cosine schedule and loss (src/nn/). */
#include "impulse/rigid_models.h"

#include "impulse/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void imp_rigid_e2e_opts_default(imp_rigid_e2e_opts *o)
{
    memset(o, 0, sizeof *o);
    o->hidden = 128;
    o->layers = 2;
    o->act = IMP_ACT_TANH;
    o->steps = 4000;
    o->batch = 256;
    o->lr = 1e-3;
    o->eval_every = 250;
    o->window = 1;
    o->noise = 1.0;
}

void imp_rigid_e2e_free(imp_rigid_e2e *m)
{
    if (!m) return;
    free(m->params);
    imp_mlp_work_free(m->work);
    m->params = NULL;
    m->work = NULL;
}

int imp_rigid_e2e_init(imp_rigid_e2e *m, const imp_rigid_e2e_opts *o)
{
    if (!m || !o) return imp_fail(IMP_ERR_INVALID, "end-to-end: NULL argument");
    memset(m, 0, sizeof *m);
    if (o->layers < 1 || o->layers > IMP_MLP_MAX_LAYERS - 1)
        return imp_fail(IMP_ERR_INVALID, "layers: %d, want 1 to %d", o->layers, IMP_MLP_MAX_LAYERS - 1);
    if (o->hidden < 1 || o->hidden > 4096) return imp_fail(IMP_ERR_INVALID, "hidden: %d, want 1 to 4096", o->hidden);
    int sizes[IMP_MLP_MAX_LAYERS + 1];
    sizes[0] = IMP_RIGID_E2E_IN;
    for (int l = 1; l <= o->layers; l++) sizes[l] = o->hidden;
    sizes[o->layers + 1] = IMP_RIGID_STATE;
    int st = imp_mlp_init(&m->net, o->layers + 1, sizes, o->act, IMP_ACT_IDENTITY, 1);
    if (st) return st;
    m->params = malloc(m->net.n_params * sizeof *m->params);
    m->work = imp_mlp_work_new(&m->net, 1);
    if (!m->params || !m->work) {
        imp_rigid_e2e_free(m);
        return imp_fail(IMP_ERR_NOMEM, "end-to-end: %zu parameters", m->net.n_params);
    }
    imp_rng rng;
    imp_rng_seed(&rng, o->seed);
    imp_mlp_init_params(&m->net, m->params, &rng);
    for (int i = 0; i < IMP_RIGID_E2E_IN; i++) m->in_scale[i] = 1.0;
    for (int i = 0; i < IMP_RIGID_STATE; i++) m->out_scale[i] = 1.0;
    return IMP_OK;
}

/* q with w >= 0: s = +1 or -1 */
static double quat_sign(const double x[13]) { return x[0] < 0 ? -1.0 : 1.0; }

/* the raw features: s q, z, w (body), v */
static void raw_features(const double x[13], double f[IMP_RIGID_E2E_IN])
{
    const double s = quat_sign(x);
    for (int i = 0; i < 4; i++) f[i] = s * x[i];
    f[4] = x[6];
    for (int i = 0; i < 6; i++) f[5 + i] = x[7 + i];
}

/* the raw change: the quaternion's in the sign of the features */
static void raw_change(const double x[13], const double xn[13], double d[13])
{
    const double s = quat_sign(x);
    for (int i = 0; i < 13; i++) d[i] = (i < 4 ? s : 1.0) * (xn[i] - x[i]);
}

void imp_rigid_e2e_features(const imp_rigid_e2e *m, const double x[13], double u[IMP_RIGID_E2E_IN])
{
    raw_features(x, u);
    for (int i = 0; i < IMP_RIGID_E2E_IN; i++) u[i] = (u[i] - m->in_mean[i]) / m->in_scale[i];
}

/* Mean and spread of n rows of k columns; a spread below floor (a constant
 * column) is floor. */
static void column_stats(const double *a, size_t n, int k, double *mean, double *scale, double floor)
{
    for (int i = 0; i < k; i++) {
        double s = 0, s2 = 0;
        for (size_t r = 0; r < n; r++) s += a[r * k + i];
        const double mu = s / (double)n;
        for (size_t r = 0; r < n; r++) s2 += (a[r * k + i] - mu) * (a[r * k + i] - mu);
        const double sd = sqrt(s2 / (double)n);
        mean[i] = mu;
        scale[i] = sd > floor ? sd : floor;
    }
}

/* The consecutive pairs of the episodes: first states (n x 13) and next
 * states. */
static int collect_pairs(const imp_rigid_traj *t, const int *episodes, int n_episodes, double **x, double **xn,
                         size_t *n_pairs)
{
    size_t n = 0;
    for (int i = 0; i < n_episodes; i++) {
        int k = episodes[i];
        if (k < 0 || k >= t->n_episodes)
            return imp_fail(IMP_ERR_INVALID, "end-to-end: episode %d of %d", k, t->n_episodes);
        n += (size_t)t->lengths[k] - 1;
    }
    if (n == 0) return imp_fail(IMP_ERR_INVALID, "end-to-end: the training episodes have no consecutive samples");
    *x = malloc(n * IMP_RIGID_STATE * sizeof **x);
    *xn = malloc(n * IMP_RIGID_STATE * sizeof **xn);
    if (!*x || !*xn) {
        free(*x), free(*xn);
        *x = *xn = NULL;
        return imp_fail(IMP_ERR_NOMEM, "end-to-end: %zu pairs", n);
    }
    size_t r = 0;
    for (int i = 0; i < n_episodes; i++) {
        const double *s = t->states + imp_rigid_traj_offset(t, episodes[i]) * IMP_RIGID_STATE;
        size_t len = (size_t)t->lengths[episodes[i]];
        memcpy(*x + r * IMP_RIGID_STATE, s, (len - 1) * IMP_RIGID_STATE * sizeof **x);
        memcpy(*xn + r * IMP_RIGID_STATE, s + IMP_RIGID_STATE, (len - 1) * IMP_RIGID_STATE * sizeof **x);
        r += len - 1;
    }
    *n_pairs = n;
    return IMP_OK;
}

int imp_rigid_e2e_set_scaling(imp_rigid_e2e *m, const imp_rigid_traj *t, const int *episodes, int n_episodes)
{
    if (!m || !t || !episodes) return imp_fail(IMP_ERR_INVALID, "end-to-end scaling: NULL argument");
    double *x = NULL, *xn = NULL;
    size_t n = 0;
    int st = collect_pairs(t, episodes, n_episodes, &x, &xn, &n);
    if (st) return st;
    double *f = malloc(n * IMP_RIGID_STATE * sizeof *f);
    if (!f) {
        free(x), free(xn);
        return imp_fail(IMP_ERR_NOMEM, "end-to-end: %zu pairs", n);
    }
    for (size_t r = 0; r < n; r++) raw_features(x + r * 13, f + r * IMP_RIGID_E2E_IN);
    column_stats(f, n, IMP_RIGID_E2E_IN, m->in_mean, m->in_scale, 1e-3);
    for (size_t r = 0; r < n; r++) raw_change(x + r * 13, xn + r * 13, f + r * 13);
    column_stats(f, n, 13, m->out_mean, m->out_scale, 1e-6);
    free(f), free(x), free(xn);
    return IMP_OK;
}

/* One step of B states x -> xn at params (w caches the network's pass);
 * nq[b] receives the norm of the quaternion before normalising. */
static void advance(const imp_rigid_e2e *m, const double *params, const double *x, double *xn, double *nq, int B,
                    double *u, double *y, imp_mlp_work *w)
{
    for (int b = 0; b < B; b++) imp_rigid_e2e_features(m, x + (size_t)b * 13, u + (size_t)b * IMP_RIGID_E2E_IN);
    imp_mlp_forward(&m->net, params, u, B, y, w);
    for (int b = 0; b < B; b++) {
        const double *xb = x + (size_t)b * 13, *yb = y + (size_t)b * 13;
        double *o = xn + (size_t)b * 13;
        const double s = quat_sign(xb);
        for (int i = 0; i < 13; i++) o[i] = xb[i] + (i < 4 ? s : 1.0) * (m->out_mean[i] + m->out_scale[i] * yb[i]);
        double n = sqrt(o[0] * o[0] + o[1] * o[1] + o[2] * o[2] + o[3] * o[3]);
        nq[b] = n;
        for (int i = 0; i < 4; i++) o[i] /= n;
    }
}

double imp_rigid_e2e_window_loss(const imp_rigid_e2e *m, const double *params, const double *x0, const double *target,
                                 int B, int H, double *grad, imp_mlp_work **w)
{
    const size_t S = (size_t)B * 13, nin = (size_t)B * IMP_RIGID_E2E_IN;
    /* the network's inputs of every step stay alive: its backward pass reads them */
    double *buf = malloc(((size_t)(H + 1) * S + (size_t)H * B + 4 * S + (size_t)(H + 1) * nin) * sizeof *buf);
    if (!buf) return (void)imp_fail(IMP_ERR_NOMEM, "end-to-end loss: batch %d x %d", B, H), NAN;
    double *xs = buf, *nq = xs + (size_t)(H + 1) * S, *gx = nq + (size_t)H * B, *gn = gx + S, *y = gn + S,
           *gy = y + S, *du = gy + S, *u = du + nin;
    memcpy(xs, x0, S * sizeof *xs);
    double L = 0;
    const double c = 1.0 / ((double)S * H);
    for (int k = 0; k < H; k++) {
        advance(m, params, xs + (size_t)k * S, xs + (size_t)(k + 1) * S, nq + (size_t)k * B, B, u + (size_t)k * nin, y,
                w[k]);
        for (int b = 0; b < B; b++)
            for (int i = 0; i < 13; i++) {
                double e = (xs[(size_t)(k + 1) * S + (size_t)b * 13 + i] - target[((size_t)b * H + k) * 13 + i]) /
                           m->out_scale[i];
                L += c * e * e;
            }
    }
    if (grad) {
        memset(gx, 0, S * sizeof *gx);
        for (int k = H - 1; k >= 0; k--) {
            const double *x = xs + (size_t)k * S, *xn = xs + (size_t)(k + 1) * S;
            /* gn: dL/d(state k+1), then through the normalisation to the step's output */
            for (int b = 0; b < B; b++) {
                const double *tb = target + ((size_t)b * H + k) * 13, *xb = xn + (size_t)b * 13;
                double *g = gn + (size_t)b * 13, *gxb = gx + (size_t)b * 13;
                for (int i = 0; i < 13; i++)
                    g[i] = gxb[i] + 2.0 * c * (xb[i] - tb[i]) / (m->out_scale[i] * m->out_scale[i]);
                double dot = 0;
                for (int i = 0; i < 4; i++) dot += xb[i] * g[i];
                for (int i = 0; i < 4; i++) g[i] = (g[i] - xb[i] * dot) / nq[(size_t)k * B + b];
                /* the residual: state k's own path, and the network's output */
                const double s = quat_sign(x + (size_t)b * 13);
                for (int i = 0; i < 13; i++) {
                    gxb[i] = g[i];
                    gy[(size_t)b * 13 + i] = (i < 4 ? s : 1.0) * m->out_scale[i] * g[i];
                }
            }
            memset(du, 0, nin * sizeof *du);
            imp_mlp_backward(&m->net, params, gy, B, grad, du, w[k]);
            /* through the features: (s q, z, w, v) standardised */
            for (int b = 0; b < B; b++) {
                const double s = quat_sign(x + (size_t)b * 13);
                const double *d = du + (size_t)b * IMP_RIGID_E2E_IN;
                double *gxb = gx + (size_t)b * 13;
                for (int i = 0; i < 4; i++) gxb[i] += s * d[i] / m->in_scale[i];
                gxb[6] += d[4] / m->in_scale[4];
                for (int i = 0; i < 6; i++) gxb[7 + i] += d[5 + i] / m->in_scale[5 + i];
            }
        }
    }
    free(buf);
    return L;
}

int imp_rigid_e2e_step(imp_rigid_e2e *m, const double x[13], double xn[13])
{
    double u[IMP_RIGID_E2E_IN], y[IMP_RIGID_STATE];
    imp_rigid_e2e_features(m, x, u);
    imp_mlp_forward(&m->net, m->params, u, 1, y, m->work);
    const double s = quat_sign(x);
    for (int i = 0; i < 13; i++) xn[i] = x[i] + (i < 4 ? s : 1.0) * (m->out_mean[i] + m->out_scale[i] * y[i]);
    double nq = sqrt(xn[0] * xn[0] + xn[1] * xn[1] + xn[2] * xn[2] + xn[3] * xn[3]);
    if (!(nq > 1e-12) || !isfinite(nq)) return imp_fail(IMP_ERR_NUMERIC, "end-to-end: the quaternion vanished");
    for (int i = 0; i < 4; i++) xn[i] /= nq;
    for (int i = 4; i < 13; i++)
        if (!isfinite(xn[i])) return imp_fail(IMP_ERR_NUMERIC, "end-to-end: the state became non-finite");
    return IMP_OK;
}

int imp_rigid_e2e_rollout(const double x0[13], size_t n, void *ctx, double *out)
{
    imp_rigid_e2e *m = ctx;
    if (n == 0) return IMP_OK;
    memcpy(out, x0, 13 * sizeof *out);
    for (size_t k = 1; k < n; k++) {
        int st = imp_rigid_e2e_step(m, out + (k - 1) * 13, out + k * 13);
        if (st) return imp_fail_context(st, "step %zu", k);
    }
    return IMP_OK;
}

int imp_rigid_e2e_train(imp_rigid_e2e *m, const imp_rigid_traj *t, const int *train, int n_train, const int *valid,
                        int n_valid, const imp_rigid_e2e_opts *o, imp_rigid_e2e_report *rep)
{
    if (!m || !t || !train || !o || !rep || (n_valid > 0 && !valid))
        return imp_fail(IMP_ERR_INVALID, "end-to-end training: NULL argument");
    if (!(o->noise >= 0) || !isfinite(o->noise)) return imp_fail(IMP_ERR_INVALID, "noise: %g, want >= 0", o->noise);
    if (o->steps < 1 || o->batch < 1 || o->eval_every < 1 || !(o->lr > 0) || o->window < 1 || o->window > 1000)
        return imp_fail(IMP_ERR_INVALID, "end-to-end training: steps %d, batch %d, eval_every %d, lr %g, window %d",
                        o->steps, o->batch, o->eval_every, o->lr, o->window);
    const double t0 = imp_time_now();
    memset(rep, 0, sizeof *rep);
    rep->valid_score = NAN;
    int st = imp_rigid_e2e_init(m, o);
    if (st) return st;
    if ((st = imp_rigid_e2e_set_scaling(m, t, train, n_train))) {
        imp_rigid_e2e_free(m);
        return st;
    }
    /* the windows: starts r (row of the training tosses' stacked states) with H samples after them */
    const int H = o->window;
    size_t n_rows = 0, n = 0;
    for (int i = 0; i < n_train && !st; i++) {
        if (train[i] < 0 || train[i] >= t->n_episodes)
            st = imp_fail(IMP_ERR_INVALID, "end-to-end: episode %d of %d", train[i], t->n_episodes);
        else
            n_rows += (size_t)t->lengths[train[i]], n += (size_t)t->lengths[train[i]] > (size_t)H ? (size_t)t->lengths[train[i]] - (size_t)H : 0;
    }
    if (!st && n == 0) st = imp_fail(IMP_ERR_INVALID, "end-to-end: no training toss has more than %d samples (window)", H);
    size_t *starts = st ? NULL : malloc(n * sizeof *starts);
    double *rows = st ? NULL : malloc(n_rows * 13 * sizeof *rows);
    if (!st && (!starts || !rows)) st = imp_fail(IMP_ERR_NOMEM, "end-to-end training: %zu samples", n_rows);
    for (size_t i = 0, r = 0, k = 0; !st && i < (size_t)n_train; i++) {
        size_t len = (size_t)t->lengths[train[i]];
        memcpy(rows + r * 13, t->states + imp_rigid_traj_offset(t, train[i]) * 13, len * 13 * sizeof *rows);
        for (size_t j = 0; j + (size_t)H < len; j++) starts[k++] = r + j;
        r += len;
    }
    const int B = !st && (size_t)o->batch < n ? o->batch : (int)n;
    const size_t P = m->net.n_params;
    double *grad = malloc(P * sizeof *grad), *best = malloc(P * sizeof *best);
    double *bx = malloc((size_t)B * 13 * (size_t)(H + 1) * sizeof *bx);
    imp_mlp_work **w = calloc((size_t)H, sizeof *w);
    for (int k = 0; w && k < H; k++) w[k] = imp_mlp_work_new(&m->net, B > 0 ? B : 1);
    imp_adam opt = {0};
    if (!st && (!grad || !best || !bx || !w || !w[H - 1]))
        st = imp_fail(IMP_ERR_NOMEM, "end-to-end training: %zu parameters", P);
    if (!st) st = imp_adam_init(&opt, P, o->lr, 0.9, 0.999, 1e-8, 0.0);
    imp_rng rng;
    imp_rng_seed(&rng, o->seed ^ 0x9e3779b97f4a7c15ULL);
    double best_score = INFINITY;
    if (!st) memcpy(best, m->params, P * sizeof *best);
    for (int step = 1; step <= o->steps && !st; step++) {
        double *tg = bx + (size_t)B * 13;
        for (int b = 0; b < B; b++) {
            size_t r = starts[imp_rng_below(&rng, n)];
            double *xb = bx + (size_t)b * 13;
            memcpy(xb, rows + r * 13, 13 * sizeof *bx);
            memcpy(tg + (size_t)b * H * 13, rows + (r + 1) * 13, (size_t)H * 13 * sizeof *bx);
            if (o->noise > 0) {
                for (int i = 0; i < 13; i++) xb[i] += o->noise * m->out_scale[i] * imp_rng_normal(&rng);
                double nq = sqrt(xb[0] * xb[0] + xb[1] * xb[1] + xb[2] * xb[2] + xb[3] * xb[3]);
                for (int i = 0; i < 4; i++) xb[i] /= nq;
            }
        }
        memset(grad, 0, P * sizeof *grad);
        double L = imp_rigid_e2e_window_loss(m, m->params, bx, tg, B, H, grad, w);
        if (!isfinite(L)) {
            st = imp_fail(IMP_ERR_NUMERIC, "end-to-end training: loss %g at step %d", L, step);
            break;
        }
        rep->train_loss = L;
        imp_adam_step(&opt, m->params, grad, imp_cosine_lr(o->lr, o->lr / 10, step - 1, o->steps));
        if (n_valid > 0 && (step % o->eval_every == 0 || step == o->steps)) {
            imp_rigid_metrics vm;
            double score = INFINITY;
            if (!imp_rigid_eval_rollouts(t, valid, n_valid, imp_rigid_e2e_rollout, m, t->ground_height, &vm))
                score = vm.position_error_pct + vm.rotation_error_deg;
            else
                imp_clear_error(); /* a diverging rollout scores worst */
            if (score < best_score) {
                best_score = score;
                rep->best_step = step;
                memcpy(best, m->params, P * sizeof *best);
            }
        }
    }
    if (!st && n_valid > 0 && rep->best_step > 0) {
        memcpy(m->params, best, P * sizeof *best);
        rep->valid_score = best_score;
    } else if (!st) {
        rep->best_step = o->steps;
    }
    imp_adam_free(&opt);
    for (int k = 0; w && k < H; k++) imp_mlp_work_free(w[k]);
    free(w);
    free(grad), free(best), free(bx), free(starts), free(rows);
    if (st) imp_rigid_e2e_free(m);
    rep->seconds = imp_time_now() - t0;
    return st;
}
