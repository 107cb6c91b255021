/* Training of the constrained-network models with the reference settings
 * ([F] section 7, [chnn] section 3): one random 5-state chunk per training
 * trajectory, RK4 (3/8 rule) with step dt through the chunk, L1 loss averaged
 * over every entry including t0, gradients straight through the solver,
 * AdamW with a cosine schedule stepped per epoch. A window whose data move
 * more than one unit (radian, in generalised coordinates) per sample
 * interval is integrated with r = ceil(max |qdot| dt) steps of dt / r per
 * interval instead (imp_ctrain_window_substeps), the loss still taken at the
 * samples and the gradient through every substep.
 *
 * Threads: a minibatch of B chunks is cut into T contiguous slices; slice t
 * runs the taped chunk loss (forward and reverse) in its own thread with its
 * own work buffers and gradient buffer, slice 0 in the calling thread. The
 * slices scale their loss gradients by the whole batch's entry count, so the
 * sum of their gradients, taken in slice order, is the whole-batch mean's
 * gradient; the only difference from one thread is the order of the
 * floating-point sums (over rows inside each slice's weight-gradient
 * products, then over slices). Same T, same result, bit for bit. */
#define _POSIX_C_SOURCE 200809L
#include "impulse/chnn_models.h"
#include "core/pool.h"
#include "impulse/io.h"
#include "io/meta.h"
#include "train_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    o->threads = 1;
    imp_train_hooks_default(&o->hooks);
    o->warmup_steps = -1;
    o->grad_clip = -1;
    o->single_products = -1;
}

double imp_ctrain_reference_lr(const char *system)
{
    return system && (!strcmp(system, "rotor") || !strcmp(system, "magnet-pendulum")) ? 1e-3 : 3e-3;
}

int imp_ctrain_warmup_steps(const imp_cmodel *m, const imp_ctrain_opts *o)
{
    if (o->warmup_steps >= 0) return o->warmup_steps;
    return m->kind == IMP_CMODEL_CHNN || m->kind == IMP_CMODEL_CLNN ? 0 : 20;
}

double imp_ctrain_grad_clip(const imp_cmodel *m, const imp_ctrain_opts *o)
{
    if (o->grad_clip >= 0) return o->grad_clip;
    return m->kind == IMP_CMODEL_CHNN || m->kind == IMP_CMODEL_CLNN ? 0.0 : 1.0;
}

int imp_ctrain_single_products(const imp_cmodel *m, const imp_ctrain_opts *o)
{
    if (o->single_products >= 0) return o->single_products != 0;
    return m->kind == IMP_CMODEL_CHNN;
}

int imp_ctrain_all_windows(const imp_ctraj *data, int n_chunks, int chunk_steps, double **chunks,
                           int *n_out)
{
    if (!data || !data->z || !chunks || !n_out) return imp_fail(IMP_ERR_INVALID, "chunks: NULL argument");
    if (chunk_steps < 1) return imp_fail(IMP_ERR_INVALID, "chunk_steps: %d must be >= 1", chunk_steps);
    if (n_chunks < 1) return imp_fail(IMP_ERR_INVALID, "n_chunks: %d must be >= 1", n_chunks);
    int L = chunk_steps + 1, n_win = data->T / L;
    if (n_win < 1)
        return imp_fail(IMP_ERR_SHAPE, "data: trajectories of %d states are shorter than a chunk of %d",
                        data->T, L);
    long total = (long)n_win * data->n_traj;
    int n = total < n_chunks ? (int)total : n_chunks;
    size_t csz = (size_t)L * data->dim;
    double *c = malloc((size_t)n * csz * sizeof(double));
    if (!c) return imp_fail(IMP_ERR_NOMEM, "chunks: out of memory");
    for (int i = 0; i < n; i++) {
        int traj = i / n_win, win = i % n_win;
        memcpy(c + (size_t)i * csz, data->z + ((size_t)traj * data->T + (size_t)win * L) * data->dim,
               csz * sizeof(double));
    }
    *chunks = c;
    *n_out = n;
    return IMP_OK;
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

/* The taped steps: an explicit Runge-Kutta tableau of at most 4 stages.
 * Kutta's 3/8 rule (torchdiffeq "rk4", used by the reference for training)
 * for the ODE models; for a discrete-time model (ResNet,
 * imp_cmodel_discrete) one forward-Euler stage, y + h f(y): its step as
 * it is defined. */
typedef struct tableau {
    int s;
    double a[4][4], b[4];
    const imp_stepper_type *stepper; /* the same method for the untaped path */
} tableau;
static const tableau rk38 = {4,
                             {{0, 0, 0, 0}, {1.0 / 3.0, 0, 0, 0}, {-1.0 / 3.0, 1.0, 0, 0}, {1.0, -1.0, 1.0, 0}},
                             {1.0 / 8.0, 3.0 / 8.0, 3.0 / 8.0, 1.0 / 8.0},
                             &imp_stepper_rk4};
static const tableau euler = {1, {{0}}, {1.0}, &imp_stepper_euler};

static const tableau *model_tableau(const imp_cmodel *m) { return imp_cmodel_discrete(m) ? &euler : &rk38; }

/* Taped rollout: traj (S+1) x B x dim from traj[0]; stage states Y
 * (S x 4 x B x dim) kept, network passes in slots 1 + 4k + i. With contact
 * (ystar not NULL: S x B x dim), each step's end state before the contact
 * map is kept there. */
static int taped_forward(const imp_cmodel *m, const double *params, int B, int S, double h,
                         imp_cmodel_work *w, double *traj, double *Y, double *K, double *ystar)
{
    const tableau *tb = model_tableau(m);
    size_t n = (size_t)B * m->dim;
    for (int k = 0; k < S; k++) {
        const double *y = traj + (size_t)k * n;
        double *Kk = K + (size_t)k * 4 * n;
        for (int i = 0; i < tb->s; i++) {
            double *Yi = Y + ((size_t)k * 4 + i) * n;
            memcpy(Yi, y, n * sizeof(double));
            for (int j = 0; j < i; j++) {
                double c = h * tb->a[i][j];
                const double *kj = Kk + (size_t)j * n;
                for (size_t q = 0; q < n; q++) Yi[q] += c * kj[q];
            }
            int st = imp_cmodel_rhs_slot(m, params, Yi, B, Kk + (size_t)i * n, w, 1 + 4 * k + i);
            if (st) return st;
        }
        double *y1 = traj + (size_t)(k + 1) * n;
        memcpy(y1, y, n * sizeof(double));
        for (int i = 0; i < tb->s; i++) {
            double c = h * tb->b[i];
            const double *ki = Kk + (size_t)i * n;
            for (size_t q = 0; q < n; q++) y1[q] += c * ki[q];
        }
        if (ystar) {
            /* the contact map after the step (the pre-contact state kept) */
            memcpy(ystar + (size_t)k * n, y1, n * sizeof(double));
            for (int b = 0; b < B; b++) {
                int st = imp_cmodel_contact_step(m, params, y + (size_t)b * m->dim, y1 + (size_t)b * m->dim, h, NULL);
                if (st) return st;
            }
        }
    }
    return IMP_OK;
}

/* Reverse sweep of taped_forward: the transpose of each linearised step. */
static int taped_backward(const imp_cmodel *m, const double *params, int B, int S, double h,
                          imp_cmodel_work *w, const double *Y, const double *traj_bar, double *grad,
                          double *a, double *kbar, double *Ybar, const double *traj, const double *ystar,
                          double *xkbar)
{
    const tableau *tab = model_tableau(m);
    size_t n = (size_t)B * m->dim;
    memcpy(a, traj_bar + (size_t)S * n, n * sizeof(double));
    for (int k = S - 1; k >= 0; k--) {
        if (ystar) {
            /* a <- dL/dy* through the contact map; its dependence on x_k aside */
            memset(xkbar, 0, n * sizeof(double));
            for (int b = 0; b < B; b++) {
                size_t o = (size_t)b * m->dim;
                int st = imp_cmodel_contact_step_vjp(m, params, traj + (size_t)k * n + o, ystar + (size_t)k * n + o,
                                                     h, a + o, xkbar + o, grad);
                if (st) return st;
            }
        }
        for (int i = 0; i < tab->s; i++)
            for (size_t q = 0; q < n; q++) kbar[(size_t)i * n + q] = h * tab->b[i] * a[q];
        /* a <- dL/dy_k: identity path plus every stage */
        for (int i = tab->s - 1; i >= 0; i--) {
            memset(Ybar, 0, n * sizeof(double));
            int st = imp_cmodel_rhs_vjp_slot(m, params, Y + ((size_t)k * 4 + i) * n, B, kbar + (size_t)i * n,
                                             Ybar, grad, w, 1 + 4 * k + i);
            if (st) return st;
            for (size_t q = 0; q < n; q++) a[q] += Ybar[q];
            for (int j = 0; j < i; j++) {
                double c = h * tab->a[i][j];
                if (c == 0.0) continue;
                for (size_t q = 0; q < n; q++) kbar[(size_t)j * n + q] += c * Ybar[q];
            }
        }
        const double *tb = traj_bar + (size_t)k * n;
        for (size_t q = 0; q < n; q++) a[q] += tb[q];
        if (ystar) for (size_t q = 0; q < n; q++) a[q] += xkbar[q];
    }
    return IMP_OK;
}

/* The chunk loss of B chunks, each integrated with R RK4 substeps of dt / R
 * per sample interval, with the loss normalised by `total` entries (the
 * whole batch's, when this is one group of it): *acc = sum |pred - true| at
 * the samples, traj_bar = sign / total there (0 between samples), grad (if
 * not NULL) += d(acc / total)/dtheta. traj, traj_bar: (S R + 1) B dim;
 * tape: (8 S R + 6) B dim doubles, used when w has 4 S R + 1 slots (always
 * the case for R > 1). With R = 1 this is the reference's arithmetic. */
static int group_loss(const imp_cmodel *m, const double *params, const double *chunks, int B, int S, int R,
                      double dt, imp_cmodel_work *w, double *traj, double *traj_bar, double *tape,
                      double total, double *grad, double *acc_out)
{
    int dim = m->dim, N = S * R;
    double h = R == 1 ? dt : dt / R;
    size_t n = (size_t)B * dim;
    int taped = imp_cmodel_work_slots(w) >= 4 * N + 1;
    if (!taped && R > 1) return imp_fail(IMP_ERR_INVALID, "train: substepped windows need a taped work");
    if (R > 1 && imp_cmodel_discrete(m))
        return imp_fail(IMP_ERR_INVALID, "substeps: %d per sample interval, but a %s takes one step per sample",
                        R, imp_cmodel_kind_name(m->kind));
    if (!taped && m->contact) return imp_fail(IMP_ERR_INVALID, "train: a model with contact needs a taped work");
    /* tape: Y, K (4 N n each), a, kbar (4 n), Ybar, then (contact) y* (N n) and x_k's gradient (n) */
    double *ystar = m->contact ? tape + 8 * (size_t)N * n + 6 * n : NULL;
    double *xkbar = m->contact ? ystar + (size_t)N * n : NULL;
    imp_cmodel_binding bind = {m, params, w};
    imp_ode ode;
    imp_cmodel_ode(&ode, &bind);
    /* y0 = first state of each chunk; traj is (N+1) x B x dim */
    for (int b = 0; b < B; b++)
        memcpy(traj + (size_t)b * dim, chunks + (size_t)b * (S + 1) * dim, (size_t)dim * sizeof(double));
    int st = taped ? taped_forward(m, params, B, N, h, w, traj, tape, tape + 4 * (size_t)N * n, ystar)
                   : imp_integrate_fixed(model_tableau(m)->stepper, &ode, 0.0, dt, S, traj, B, traj);
    if (st) return st;
    if (R > 1) memset(traj_bar, 0, (size_t)(N + 1) * n * sizeof(double));
    double acc = 0;
    for (int k = 0; k <= S; k++)
        for (int b = 0; b < B; b++) {
            const double *pr = traj + ((size_t)k * R * B + b) * dim;
            const double *tg = chunks + ((size_t)b * (S + 1) + k) * dim;
            double *gb = traj_bar + ((size_t)k * R * B + b) * dim;
            for (int i = 0; i < dim; i++) {
                double d = pr[i] - tg[i];
                acc += fabs(d);
                gb[i] = (d > 0 ? 1.0 : d < 0 ? -1.0 : 0.0) / total;
            }
        }
    *acc_out = acc;
    if (!isfinite(acc)) return imp_fail(IMP_ERR_NUMERIC, "train: loss is not finite (the rollout diverged)");
    if (!grad) return IMP_OK;
    if (taped) {
        double *a = tape + 8 * (size_t)N * n;
        return taped_backward(m, params, B, N, h, w, tape, traj_bar, grad, a, a + n, a + 5 * n, traj, ystar, xkbar);
    }
    double *y0bar = calloc(n, sizeof(double));
    if (!y0bar) return imp_fail(IMP_ERR_NOMEM, "train: out of memory");
    st = imp_integrate_fixed_vjp(model_tableau(m)->stepper, &ode, 0.0, dt, S, traj, B, traj_bar, y0bar, grad);
    free(y0bar);
    return st;
}

static size_t tape_size(int B, int S, int dim)
{
    /* Y and K (4 S n each), then a, kbar (4 n), Ybar for the reverse sweep,
     * then for a model with contact the pre-contact states (S n) and x_k's
     * gradient (n) */
    return (9 * (size_t)S + 7) * (size_t)B * (size_t)dim;
}

int imp_ctrain_window_substeps(const double *window, int n_states, int dim, double dt)
{
    if (!window || n_states < 1 || dim < 2 || !(dt > 0)) return 1;
    int half = dim / 2;
    double vmax = 0;
    for (int k = 0; k < n_states; k++)
        for (int i = half; i < dim; i++) {
            double v = fabs(window[(size_t)k * dim + i]);
            if (v > vmax) vmax = v;
        }
    double x = vmax * dt;
    if (!(x > 1.0)) return 1;
    if (x >= IMP_CTRAIN_MAX_SUBSTEPS) return IMP_CTRAIN_MAX_SUBSTEPS;
    return (int)ceil(x);
}

int imp_ctrain_contact_window(const imp_cmodel *m, const double *window, int n_states, double dt, int *near)
{
    if (!m || !window || !near) return imp_fail(IMP_ERR_INVALID, "contact window: NULL argument");
    if (n_states < 1 || !(dt > 0))
        return imp_fail(IMP_ERR_INVALID, "contact window: n_states %d must be >= 1 and dt %g > 0", n_states, dt);
    *near = 0;
    if (!m->contact) return IMP_OK;
    const imp_csys *s = &m->sys.full;
    int N = m->sys.n_points * m->sys.d;
    if (m->dim != 2 * N)
        return imp_fail(IMP_ERR_SHAPE, "contact window: state size %d is not 2 x %d positions", m->dim, N);
    for (int k = 0; k < n_states; k++) {
        const double *x = window + (size_t)k * m->dim, *v = x + N;
        for (int c = 0; c < s->n_contacts; c++) {
            double un, phi = imp_csys_contact_gap_rate(s, x, v, c, NULL, &un);
            if (phi <= 2 * dt * fabs(un)) {
                *near = 1;
                return IMP_OK;
            }
        }
    }
    return IMP_OK;
}

int imp_ctrain_contact_substeps(const imp_cmodel *m, const imp_ctrain_opts *o)
{
    if (!m || !m->contact || !o) return 1;
    return o->contact_substeps ? o->contact_substeps : IMP_CTRAIN_CONTACT_SUBSTEPS;
}

/* Scratch for the substepped windows, integrated one at a time: a work with
 * 4 S r_cap + 1 slots for one row and its rollout buffers, grown on demand. */
typedef struct sub_ctx {
    int r_cap, single;
    imp_cmodel_work *w;
    double *traj, *traj_bar, *tape;
} sub_ctx;

static void sub_free(sub_ctx *c)
{
    imp_cmodel_work_free(c->w);
    free(c->traj);
    free(c->traj_bar);
    free(c->tape);
    c->w = NULL;
    c->traj = c->traj_bar = c->tape = NULL;
    c->r_cap = 0;
}

static int sub_ensure(sub_ctx *c, const imp_cmodel *m, int S, int r)
{
    if (c->r_cap >= r) return IMP_OK;
    sub_free(c);
    int N = S * r;
    c->w = imp_cmodel_work_new_slots(m, 1, 4 * N + 1);
    c->traj = malloc((size_t)(N + 1) * m->dim * sizeof(double));
    c->traj_bar = malloc((size_t)(N + 1) * m->dim * sizeof(double));
    c->tape = malloc(tape_size(1, N, m->dim) * sizeof(double));
    if (!c->w || !c->traj || !c->traj_bar || !c->tape) {
        sub_free(c);
        return imp_fail(IMP_ERR_NOMEM, "train: out of memory (a window of %d substeps)", r);
    }
    int st = c->single ? imp_cmodel_work_set_single_products(c->w, 1) : IMP_OK;
    if (st) {
        sub_free(c);
        return st;
    }
    c->r_cap = r;
    return IMP_OK;
}

static int check_substeps(const int *r, int B)
{
    if (r)
        for (int b = 0; b < B; b++)
            if (r[b] < 1 || r[b] > IMP_CTRAIN_MAX_SUBSTEPS)
                return imp_fail(IMP_ERR_INVALID, "substeps[%d]: %d must be in 1..%d", b, r[b],
                                IMP_CTRAIN_MAX_SUBSTEPS);
    return IMP_OK;
}

/* The loss of B chunks with r[b] substeps for chunk b (r NULL: all 1): the
 * chunks with r = 1 in one group (when no chunk is substepped, the whole
 * batch as it is: the reference's arithmetic bit for bit), then each
 * substepped chunk on its own. gather: room for B chunks. */
static int mixed_loss(const imp_cmodel *m, const double *params, const double *chunks, const int *r, int B,
                      int S, double dt, imp_cmodel_work *w, double *traj, double *traj_bar, double *tape,
                      double *gather, sub_ctx *sub, double total, double *grad, double *acc_out)
{
    int n1 = 0;
    if (r)
        for (int b = 0; b < B; b++) n1 += r[b] == 1;
    if (!r || n1 == B)
        return group_loss(m, params, chunks, B, S, 1, dt, w, traj, traj_bar, tape, total, grad, acc_out);
    size_t csz = (size_t)(S + 1) * m->dim;
    double acc = 0, a = 0;
    int st;
    if (n1 > 0) {
        for (int b = 0, j = 0; b < B; b++)
            if (r[b] == 1) memcpy(gather + (size_t)j++ * csz, chunks + (size_t)b * csz, csz * sizeof(double));
        if ((st = group_loss(m, params, gather, n1, S, 1, dt, w, traj, traj_bar, tape, total, grad, &a)))
            return st;
        acc += a;
    }
    for (int b = 0; b < B; b++) {
        if (r[b] == 1) continue;
        if ((st = sub_ensure(sub, m, S, r[b]))) return st;
        st = group_loss(m, params, chunks + (size_t)b * csz, 1, S, r[b], dt, sub->w, sub->traj, sub->traj_bar,
                        sub->tape, total, grad, &a);
        if (st) return imp_fail_context(st, "window %d of the batch (%d RK4 substeps per sample)", b, r[b]);
        acc += a;
    }
    *acc_out = acc;
    return IMP_OK;
}

int imp_ctrain_chunk_loss_substeps(const imp_cmodel *m, const double *params, const double *chunks,
                                   const int *substeps, int B, int S, double dt, imp_cmodel_work *w,
                                   double *traj, double *traj_bar, double *grad, double *loss)
{
    if (!m || !params || !chunks || !w || !traj || !traj_bar || !loss)
        return imp_fail(IMP_ERR_INVALID, "chunk loss: NULL argument");
    int st = check_substeps(substeps, B);
    if (st) return st;
    double *tape = NULL, *gather = NULL;
    if (imp_cmodel_work_slots(w) >= 4 * S + 1) {
        tape = malloc(tape_size(B, S, m->dim) * sizeof(double));
        if (!tape) return imp_fail(IMP_ERR_NOMEM, "train: out of memory");
    }
    if (substeps && !(gather = malloc((size_t)B * (S + 1) * m->dim * sizeof(double)))) {
        free(tape);
        return imp_fail(IMP_ERR_NOMEM, "train: out of memory");
    }
    sub_ctx sub = {0};
    double total = (double)(S + 1) * (double)B * (double)m->dim, acc = 0;
    st = mixed_loss(m, params, chunks, substeps, B, S, dt, w, traj, traj_bar, tape, gather, &sub, total, grad,
                    &acc);
    sub_free(&sub);
    free(gather);
    free(tape);
    *loss = acc / total;
    return st;
}

int imp_ctrain_chunk_loss(const imp_cmodel *m, const double *params, const double *chunks, int B,
                          int S, double dt, imp_cmodel_work *w, double *traj, double *traj_bar,
                          double *grad, double *loss)
{
    return imp_ctrain_chunk_loss_substeps(m, params, chunks, NULL, B, S, dt, w, traj, traj_bar, grad, loss);
}

/* ---- the thread pool (the team of threads: src/core/pool.c) ---- */
typedef struct pool_worker {
    imp_cmodel_work *w;
    double *traj, *traj_bar, *tape, *grad; /* grad: n_params (unused by worker 0) */
    double *gather;                        /* the slice's unsubstepped chunks */
    sub_ctx sub;                           /* its substepped chunks */
    int b0, nb;                            /* this minibatch's slice */
    double acc;
    double cpu;                            /* thread CPU seconds of the last slice */
    int status;
    char msg[1024];
} pool_worker;

struct imp_ctrain_pool {
    const imp_cmodel *m;
    int threads, max_batch, S;
    pool_worker *workers;
    imp_pool *team;
    /* the current job */
    const double *params, *chunks;
    const int *substeps; /* per chunk, or NULL */
    double *grad0; /* slice 0's gradient: the caller's */
    double dt, total;
    int want_grad;
};

static double thread_cpu_now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)) return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_slice(imp_ctrain_pool *p, pool_worker *wk, double *grad)
{
    wk->acc = 0;
    wk->cpu = 0;
    wk->status = IMP_OK;
    if (wk->nb < 1) return;
    double c0 = thread_cpu_now();
    size_t csz = (size_t)(p->S + 1) * p->m->dim;
    wk->status = mixed_loss(p->m, p->params, p->chunks + (size_t)wk->b0 * csz,
                            p->substeps ? p->substeps + wk->b0 : NULL, wk->nb, p->S, p->dt, wk->w, wk->traj,
                            wk->traj_bar, wk->tape, wk->gather, &wk->sub, p->total, grad, &wk->acc);
    wk->cpu = thread_cpu_now() - c0;
    if (wk->status) {
        /* messages are thread-local: keep this one for the caller's thread */
        const char *e = imp_last_error();
        size_t len = strlen(e);
        if (len >= sizeof wk->msg) len = sizeof wk->msg - 1;
        memcpy(wk->msg, e, len);
        wk->msg[len] = '\0';
    }
}

/* task t of imp_pool_run: slice t, slice 0 straight into the caller's gradient */
static void slice_task(void *ctx, int t)
{
    imp_ctrain_pool *p = ctx;
    pool_worker *wk = &p->workers[t];
    double *grad = NULL;
    if (p->want_grad && t == 0) grad = p->grad0;
    if (p->want_grad && t > 0) {
        if (wk->nb > 0) memset(wk->grad, 0, p->m->n_params * sizeof(double));
        grad = wk->grad;
    }
    run_slice(p, wk, grad);
}

void imp_ctrain_pool_free(imp_ctrain_pool *p)
{
    if (!p) return;
    imp_pool_free(p->team);
    if (p->workers)
        for (int t = 0; t < p->threads; t++) {
            pool_worker *wk = &p->workers[t];
            imp_cmodel_work_free(wk->w);
            free(wk->traj);
            free(wk->traj_bar);
            free(wk->tape);
            free(wk->grad);
            free(wk->gather);
            sub_free(&wk->sub);
        }
    free(p->workers);
    free(p);
}

int imp_ctrain_pool_new(imp_ctrain_pool **out, const imp_cmodel *m, int max_batch, int chunk_steps,
                        int threads)
{
    if (!out || !m) return imp_fail(IMP_ERR_INVALID, "pool: NULL argument");
    *out = NULL;
    if (threads < 1 || threads > IMP_CTRAIN_MAX_THREADS)
        return imp_fail(IMP_ERR_INVALID, "threads: %d must be in 1..%d", threads, IMP_CTRAIN_MAX_THREADS);
    if (max_batch < 1) return imp_fail(IMP_ERR_INVALID, "batch: %d must be >= 1", max_batch);
    if (chunk_steps < 1) return imp_fail(IMP_ERR_INVALID, "chunk_steps: %d must be >= 1", chunk_steps);
    imp_ctrain_pool *p = calloc(1, sizeof *p);
    if (!p) return imp_fail(IMP_ERR_NOMEM, "pool: out of memory");
    p->m = m;
    p->threads = threads;
    p->max_batch = max_batch;
    p->S = chunk_steps;
    p->workers = calloc((size_t)threads, sizeof *p->workers);
    if (!p->workers) goto nomem;
    /* every slice has at most ceil(max_batch / threads) chunks */
    int slice = (max_batch + threads - 1) / threads;
    size_t csz = (size_t)(chunk_steps + 1) * m->dim;
    for (int t = 0; t < threads; t++) {
        pool_worker *wk = &p->workers[t];
        wk->w = imp_cmodel_work_new_slots(m, slice, 4 * chunk_steps + 1);
        wk->traj = malloc((size_t)slice * csz * sizeof(double));
        wk->traj_bar = malloc((size_t)slice * csz * sizeof(double));
        wk->tape = malloc(tape_size(slice, chunk_steps, m->dim) * sizeof(double));
        wk->grad = t > 0 ? malloc(m->n_params * sizeof(double)) : NULL;
        wk->gather = malloc((size_t)slice * csz * sizeof(double));
        if (!wk->w || !wk->traj || !wk->traj_bar || !wk->tape || (t > 0 && !wk->grad) || !wk->gather) goto nomem;
    }
    int st = imp_pool_new(&p->team, threads);
    if (st) {
        imp_ctrain_pool_free(p);
        return st;
    }
    *out = p;
    return IMP_OK;
nomem:
    imp_ctrain_pool_free(p);
    return imp_fail(IMP_ERR_NOMEM, "pool: out of memory (%d threads, batch %d)", threads, max_batch);
}

int imp_ctrain_pool_threads(const imp_ctrain_pool *p) { return p ? p->threads : 0; }

int imp_ctrain_pool_set_single_products(imp_ctrain_pool *p, int on)
{
    if (!p) return imp_fail(IMP_ERR_INVALID, "pool: NULL");
    for (int t = 0; t < p->threads; t++) {
        pool_worker *wk = &p->workers[t];
        int st = imp_cmodel_work_set_single_products(wk->w, on);
        if (!st && wk->sub.w) st = imp_cmodel_work_set_single_products(wk->sub.w, on);
        if (st) return st;
        wk->sub.single = on != 0;
    }
    return IMP_OK;
}

double imp_ctrain_pool_slice_cpu(const imp_ctrain_pool *p, int t)
{
    return p && t >= 0 && t < p->threads ? p->workers[t].cpu : 0.0;
}

int imp_ctrain_pool_loss(imp_ctrain_pool *p, const double *params, const double *chunks, int B, double dt,
                         double *grad, double *loss)
{
    return imp_ctrain_pool_loss_substeps(p, params, chunks, NULL, B, dt, grad, loss);
}

int imp_ctrain_pool_loss_substeps(imp_ctrain_pool *p, const double *params, const double *chunks,
                                  const int *substeps, int B, double dt, double *grad, double *loss)
{
    if (!p || !params || !chunks || !loss) return imp_fail(IMP_ERR_INVALID, "pool: NULL argument");
    if (B < 1 || B > p->max_batch)
        return imp_fail(IMP_ERR_INVALID, "B: batch %d outside [1, %d] of the pool", B, p->max_batch);
    int st = check_substeps(substeps, B);
    if (st) return st;
    p->substeps = substeps;
    int T = p->threads, S = p->S;
    p->params = params;
    p->chunks = chunks;
    p->dt = dt;
    p->total = (double)(S + 1) * (double)B * (double)p->m->dim;
    p->want_grad = grad != NULL;
    /* contiguous slices, the first B % T one chunk longer */
    int b0 = 0;
    for (int t = 0; t < T; t++) {
        int nb = B / T + (t < B % T ? 1 : 0);
        p->workers[t].b0 = b0;
        p->workers[t].nb = nb;
        b0 += nb;
    }
    p->grad0 = grad;
    imp_pool_run(p->team, slice_task, p);
    /* first failure in slice order, its message moved to this thread */
    for (int t = 0; t < T; t++) {
        pool_worker *wk = &p->workers[t];
        if (wk->status) {
            if (T == 1) return imp_fail(wk->status, "%s", wk->msg);
            return imp_fail(wk->status, "minibatch chunks %d..%d (thread %d of %d): %s", wk->b0,
                            wk->b0 + wk->nb - 1, t + 1, T, wk->msg);
        }
    }
    double acc = 0;
    for (int t = 0; t < T; t++) {
        pool_worker *wk = &p->workers[t];
        acc += wk->acc;
        if (grad && t > 0 && wk->nb > 0)
            for (size_t q = 0; q < p->m->n_params; q++) grad[q] += wk->grad[q];
    }
    *loss = acc / p->total;
    return IMP_OK;
}

/* Everything the rest of a run depends on besides the state itself (the
 * thread count changes only the rounding and is left out). */
static int fingerprint(const imp_cmodel *m, const imp_ctraj *d, const imp_ctrain_opts *o, int n_sub, int r_max,
                       imp_json *j)
{
    uint64_t h = imp_fnv1a(d->z, (size_t)d->n_traj * d->T * d->dim * sizeof(double), IMP_FNV_START);
    h = imp_fnv1a(&d->dt, sizeof d->dt, h);
    char hex[17], seed[32];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    snprintf(seed, sizeof seed, "%llu", o->seed);
    imp_json_begin_object(j);
    imp_json_kv_string(j, "model", imp_cmodel_kind_name(m->kind));
    imp_json_kv_string(j, "system", m->sys.name);
    imp_json_kv_int(j, "hidden", m->hidden);
    imp_json_kv_int(j, "depth", m->depth);
    imp_json_kv_int(j, "n_params", (long long)m->n_params);
    imp_json_kv_int(j, "epochs", o->epochs);
    imp_json_kv_number(j, "lr", o->lr);
    imp_json_kv_number(j, "weight_decay", o->weight_decay);
    imp_json_kv_int(j, "batch", o->batch);
    imp_json_kv_int(j, "n_chunks", o->n_chunks);
    imp_json_kv_int(j, "chunk_steps", o->chunk_steps);
    imp_json_kv_int(j, "warmup_steps", imp_ctrain_warmup_steps(m, o));
    /* only when on, so that the state files of runs without clipping (CHNN
     * and CLNN by default) keep their fingerprint */
    if (imp_ctrain_grad_clip(m, o) > 0) imp_json_kv_number(j, "grad_clip", imp_ctrain_grad_clip(m, o));
    imp_json_kv_string(j, "windows", o->all_windows ? "all" : "one");
    /* only when single, so that the states of double runs keep their fingerprint */
    if (imp_ctrain_single_products(m, o)) imp_json_kv_string(j, "precision", "single");
    /* only when some window is substepped, so that the state files of runs
     * without (CHNN, CLNN, every system but the rotor) keep their fingerprint */
    if (n_sub > 0) {
        imp_json_kv_int(j, "substepped_windows", n_sub);
        imp_json_kv_int(j, "max_substeps", r_max);
    }
    if (o->skip_factor > 0) imp_json_kv_number(j, "skip_factor", o->skip_factor);
    /* only when on, so that the state files of runs without keep their fingerprint */
    if (imp_ctrain_contact_substeps(m, o) > 1) imp_json_kv_int(j, "contact_substeps", imp_ctrain_contact_substeps(m, o));
    imp_json_kv_string(j, "seed", seed);
    imp_json_kv_int(j, "n_traj", d->n_traj);
    imp_json_kv_int(j, "T", d->T);
    imp_json_kv_string(j, "data_fnv1a", hex);
    imp_json_end_object(j);
    return imp_json_text(j) ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "training: out of memory");
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
    if (isnan(o->grad_clip) || isinf(o->grad_clip))
        return imp_fail(IMP_ERR_INVALID, "grad_clip: %g must be finite (0: off, negative: the default)", o->grad_clip);
    if (!(o->weight_decay >= 0)) return imp_fail(IMP_ERR_INVALID, "weight_decay: %g must be >= 0", o->weight_decay);
    if (!(data->dt > 0)) return imp_fail(IMP_ERR_INVALID, "data.dt: %g must be positive", data->dt);
    if (o->threads < 1 || o->threads > IMP_CTRAIN_MAX_THREADS)
        return imp_fail(IMP_ERR_INVALID, "threads: %d must be in 1..%d", o->threads, IMP_CTRAIN_MAX_THREADS);
    if (!(o->skip_factor == 0 || (o->skip_factor > 1 && isfinite(o->skip_factor))))
        return imp_fail(IMP_ERR_INVALID, "skip_factor: %g must be 0 (off) or finite and > 1", o->skip_factor);
    if (o->max_substeps < 0 || o->max_substeps > IMP_CTRAIN_MAX_SUBSTEPS)
        return imp_fail(IMP_ERR_INVALID, "max_substeps: %d must be in 0..%d (0: %d, 1: no substeps)",
                        o->max_substeps, IMP_CTRAIN_MAX_SUBSTEPS, IMP_CTRAIN_MAX_SUBSTEPS);
    if (o->contact_substeps < 0 || o->contact_substeps > IMP_CTRAIN_MAX_SUBSTEPS)
        return imp_fail(IMP_ERR_INVALID, "contact_substeps: %d must be in 0..%d (0: the default %d, 1: none)",
                        o->contact_substeps, IMP_CTRAIN_MAX_SUBSTEPS, IMP_CTRAIN_CONTACT_SUBSTEPS);
    if (o->max_substeps > 1 && imp_cmodel_discrete(m))
        return imp_fail(IMP_ERR_INVALID, "max_substeps: %d, but a %s takes one step per sample interval (0 or 1; "
                        "--max-substeps in the CLI)", o->max_substeps, imp_cmodel_kind_name(m->kind));
    memset(res, 0, sizeof *res);
    imp_rng rng;
    imp_rng_seed(&rng, o->seed);
    double *chunks = NULL;
    int n_chunks = 0;
    int st = o->all_windows ? imp_ctrain_all_windows(data, o->n_chunks, o->chunk_steps, &chunks, &n_chunks)
                            : imp_ctrain_make_chunks(data, o->n_chunks, o->chunk_steps, &rng, &chunks, &n_chunks);
    if (st) return st;
    int S = o->chunk_steps, dim = m->dim;
    int B = o->batch < n_chunks ? o->batch : n_chunks;
    size_t csz = (size_t)(S + 1) * dim;
    imp_ctrain_pool *pool = NULL;
    double *grad = malloc(m->n_params * sizeof(double));
    double *batch = malloc((size_t)B * csz * sizeof(double));
    size_t *perm = malloc((size_t)n_chunks * sizeof(size_t));
    int *win_r = malloc((size_t)n_chunks * sizeof(int)), *batch_r = malloc((size_t)B * sizeof(int));
    imp_adam opt;
    int have_opt = 0;
    imp_track tr = {0};
    imp_json fp;
    imp_json_init(&fp);
    if (!grad || !batch || !perm || !win_r || !batch_r) {
        st = imp_fail(IMP_ERR_NOMEM, "train: out of memory");
        goto done;
    }
    /* RK4 substeps per sample interval of each window, from its data */
    int r_cap = o->max_substeps ? o->max_substeps : IMP_CTRAIN_MAX_SUBSTEPS, n_sub = 0, r_max = 1;
    int r_contact = imp_ctrain_contact_substeps(m, o), n_contact = 0;
    for (int i = 0; i < n_chunks; i++) {
        /* a discrete-time model's step is the sample interval itself */
        int r = imp_cmodel_discrete(m) ? 1 : imp_ctrain_window_substeps(chunks + (size_t)i * csz, S + 1, dim, data->dt);
        win_r[i] = r < r_cap ? r : r_cap;
        /* a window near a contact: at least r_contact maps per sample */
        if (r_contact > 1) {
            int near = 0;
            if ((st = imp_ctrain_contact_window(m, chunks + (size_t)i * csz, S + 1, data->dt, &near))) goto done;
            if (near) {
                n_contact++;
                if (win_r[i] < r_contact) win_r[i] = r_contact;
            }
        }
        n_sub += win_r[i] > 1;
        if (win_r[i] > r_max) r_max = win_r[i];
    }
    res->contact_windows = n_contact;
    res->substepped_windows = n_sub;
    res->max_substeps = r_max;
    st = imp_ctrain_pool_new(&pool, m, B, S, o->threads);
    if (st) goto done;
    if (imp_ctrain_single_products(m, o) && (st = imp_ctrain_pool_set_single_products(pool, 1))) goto done;
    st = imp_adam_init(&opt, m->n_params, o->lr, 0.9, 0.999, 1e-8, o->weight_decay);
    if (st) goto done;
    have_opt = 1;
    if ((st = imp_track_init(&tr, &o->hooks, o->epochs, params, m->n_params))) goto done;
    /* the baselines' guard lets one epoch above the bound pass: one window
     * whose rollout blows up (the rotor's Euler angles near gimbal lock)
     * makes its minibatch's loss, and the epoch's mean, huge without the
     * model having diverged; a second such epoch in a row stops the run */
    tr.tolerate = m->kind == IMP_CMODEL_CHNN || m->kind == IMP_CMODEL_CLNN ? 0 : 1;
    tr.remedy = "try a smaller learning rate (lr), a longer warm-up (warmup_steps), a smaller gradient-norm "
                "bound (grad_clip) or another seed; in the CLI --lr, --warmup, --clip, --seed";
    for (int i = 0; i < n_chunks; i++) perm[i] = (size_t)i;
    imp_train_state ts = {"cmodel", NULL, &opt, &rng, perm, (size_t)n_chunks, params};
    if (tr.h.state_path || tr.h.resume_path) {
        if ((st = fingerprint(m, data, o, n_sub, r_max, &fp))) goto done;
        ts.fingerprint = imp_json_text(&fp);
    }
    if (tr.h.resume_path && (st = imp_train_state_load(&tr, &ts))) goto done;
    if (tr.epoch > 0) res->final_loss = tr.final_loss, res->epochs = tr.epoch;
    double t_start = imp_time_now(), cpu_start = thread_cpu_now(), cpu_extra = 0;
    int warmup = imp_ctrain_warmup_steps(m, o);
    double clip = imp_ctrain_grad_clip(m, o);
    /* the warm-up counts minibatches from the start of training (a resumed
     * run continues the count) */
    long step = (long)tr.epoch * ((n_chunks + B - 1) / B);
    for (int ep = tr.epoch; ep < o->epochs; ep++) {
        /* CosineAnnealingLR(T_max = epochs, eta_min = 0), stepped per epoch */
        double lr = imp_cosine_lr(o->lr, 0.0, ep, o->epochs);
        imp_rng_shuffle(&rng, perm, (size_t)n_chunks);
        double ep_loss = 0, skip_loss = 0;
        int n_batches = 0, n_skipped = 0;
        /* the reference of the spike filter: the best epoch's mean loss so far
         * (as the divergence guard's) */
        double ref = o->skip_factor > 0 && res->epochs > 0 && isfinite(tr.best_loss) ? tr.best_loss : 0;
        for (int s0 = 0; s0 < n_chunks; s0 += B) {
            int bs = n_chunks - s0 < B ? n_chunks - s0 : B;
            for (int b = 0; b < bs; b++) {
                memcpy(batch + (size_t)b * csz, chunks + perm[s0 + b] * csz, csz * sizeof(double));
                batch_r[b] = win_r[perm[s0 + b]];
            }
            memset(grad, 0, m->n_params * sizeof(double));
            double loss = INFINITY; /* when the rollout fails */
            st = imp_ctrain_pool_loss_substeps(pool, params, batch, n_sub ? batch_r : NULL, bs, data->dt, grad,
                                               &loss);
            /* the slowest slice instead of this thread's own */
            double slowest = 0;
            for (int t = 0; t < o->threads; t++) slowest = fmax(slowest, imp_ctrain_pool_slice_cpu(pool, t));
            cpu_extra += slowest - imp_ctrain_pool_slice_cpu(pool, 0);
            if (!st) st = imp_check_finite(grad, m->n_params, "gradient");
            /* the spike filter: a minibatch whose rollout overflowed or whose
             * loss is far above the best epoch's mean is not stepped */
            if (o->skip_factor > 0 && (st == IMP_ERR_NUMERIC || (!st && ref > 0 && loss > o->skip_factor * ref))) {
                st = IMP_OK;
                n_skipped++;
                res->skipped_batches++;
                skip_loss += loss;
                step++;
                continue;
            }
            if (st) {
                st = imp_track_batch_failed(&tr, st);
                goto done;
            }
            if (n_batches == 0) imp_track_initial_loss(&tr, loss);
            double lr_step = step < warmup ? lr * (double)(step + 1) / warmup : lr;
            step++;
            if (clip > 0) imp_clip_grad_norm(grad, m->n_params, clip);
            imp_adam_step(&opt, params, grad, lr_step);
            ep_loss += loss;
            n_batches++;
        }
        /* the mean over the minibatches stepped (over the skipped ones when
         * every one was skipped, so that the guard sees it) */
        res->final_loss = n_batches ? ep_loss / n_batches : skip_loss / n_skipped;
        res->epochs = ep + 1;
        imp_loss_part parts[1] = {{"l1", res->final_loss}};
        int stop = 0;
        if ((st = imp_track_epoch(&tr, params, parts, 1, lr, &stop))) goto done;
        if (o->progress) o->progress(o->progress_user, ep, res->final_loss, imp_time_now() - t_start);
        if (imp_track_state_due(&tr) && (st = imp_train_state_save(&tr, &ts))) goto done;
        if (stop) break;
    }
    res->seconds = imp_time_now() - t_start;
    res->critical_seconds = thread_cpu_now() - cpu_start + cpu_extra;
done:
    if (tr.best) imp_track_end(&tr, st, params);
    imp_track_free(&tr);
    imp_json_free(&fp);
    if (have_opt) imp_adam_free(&opt);
    imp_ctrain_pool_free(pool);
    free(grad);
    free(batch);
    free(perm);
    free(win_r);
    free(batch_r);
    free(chunks);
    return st;
}
