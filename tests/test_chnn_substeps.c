/* RK4 substeps for fast training windows of the constrained strand
 * (imp_ctrain_window_substeps): the rule itself, a finite-difference check
 * of the window loss with 3, 2 and 1 substeps per sample interval, the
 * forward rollout against the generic integrator with the finer step, r = 1
 * equal bit for bit to the loss without substeps, and training on rotor
 * windows near gimbal lock, which survives with substeps and not without. */
#include "impulse/chnn_models.h"
#include "impulse/chnn_systems.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_rule(void)
{
    /* two positions, two velocities per state; dt a power of two so that
     * |v| dt is exact */
    const double dt = 0.25;
    double win[5 * 4];
    for (int i = 0; i < 20; i++) win[i] = 0.1 * (i % 3);
    CHECK(imp_ctrain_window_substeps(win, 5, 4, dt) == 1);
    /* positions never count */
    win[4 * 2 + 0] = 1000.0;
    CHECK(imp_ctrain_window_substeps(win, 5, 4, dt) == 1);
    const double v[] = {4.0, 4.5, -12.0, 8.25, 40.0, 255.0, 1e9};
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        /* in the last state's second velocity: every state and entry count */
        win[4 * 4 + 3] = v[k];
        double x = fabs(v[k]) * dt;
        int want = x <= 1 ? 1 : x >= IMP_CTRAIN_MAX_SUBSTEPS ? IMP_CTRAIN_MAX_SUBSTEPS : (int)ceil(x);
        int got = imp_ctrain_window_substeps(win, 5, 4, dt);
        CHECK_MSG(got == want, "v %g: %d substeps, want %d", v[k], got, want);
    }
    /* the rule's values at its edges */
    win[4 * 4 + 3] = 4.0; /* exactly 1 rad per interval: no substeps */
    CHECK(imp_ctrain_window_substeps(win, 5, 4, dt) == 1);
    win[4 * 4 + 3] = 4.0 + 1e-9;
    CHECK(imp_ctrain_window_substeps(win, 5, 4, dt) == 2);
    win[4 * 4 + 3] = 1e9;
    CHECK(imp_ctrain_window_substeps(win, 5, 4, dt) == IMP_CTRAIN_MAX_SUBSTEPS);
    /* invalid arguments give 1 */
    CHECK(imp_ctrain_window_substeps(NULL, 5, 4, dt) == 1);
    CHECK(imp_ctrain_window_substeps(win, 5, 4, 0.0) == 1);
    CHECK(imp_ctrain_window_substeps(win, 5, 1, dt) == 1);
}

typedef struct fixture {
    imp_cmodel m;
    double *params;
} fixture;

static void make_model(fixture *f, imp_cmodel_kind kind, const char *sys, int hidden, uint64_t seed)
{
    imp_csystem cs;
    CHECK_OK(imp_csystem_from_name(&cs, sys));
    CHECK_OK(imp_cmodel_init(&f->m, kind, &cs, hidden, 3));
    f->params = malloc(f->m.n_params * sizeof(double));
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    imp_cmodel_init_params(&f->m, f->params, &rng);
    /* the mass network's output layer starts at zero: perturb it so that
     * every layer gets non-zero derivatives */
    for (size_t q = f->m.off_mass; q < f->m.n_params; q++) f->params[q] += 0.05 * imp_rng_normal(&rng);
}

/* The windows of a true-rotor data set in generalised coordinates (Euler
 * angles): n_traj trajectories of T states cut into (T / 5) windows each. */
static void rotor_windows(int n_traj, int T, uint64_t seed, imp_ctraj *gen)
{
    imp_csystem cs;
    CHECK_OK(imp_csystem_from_name(&cs, "rotor"));
    imp_ctraj cart;
    CHECK_OK(imp_cexp_train_data(&cs, n_traj, T, seed, &cart));
    CHECK_OK(imp_ctraj_to_generalised(&cs, &cart, gen));
    imp_ctraj_free(&cart);
}

/* loss and gradient of B windows (B x 5 x dim) with substeps r (NULL: none) */
static double window_loss(const fixture *f, const double *chunks, const int *r, int B, double dt, double *grad,
                          imp_cmodel_work *w)
{
    const int S = 4;
    size_t n = (size_t)B * (S + 1) * f->m.dim;
    double *traj = malloc(n * sizeof(double)), *tbar = malloc(n * sizeof(double)), loss = NAN;
    CHECK_OK(imp_ctrain_chunk_loss_substeps(&f->m, f->params, chunks, r, B, S, dt, w, traj, tbar, grad, &loss));
    free(traj);
    free(tbar);
    return loss;
}

/* Three rotor windows with 3, 2 and 1 substeps: the gradient against
 * central differences, each window's loss against the generic RK4
 * integrator with step dt / r, and r = 1 against the loss without substeps. */
static void test_window_loss(imp_cmodel_kind kind)
{
    fixture f;
    make_model(&f, kind, "rotor", 16, 11);
    const int B = 3, S = 4, dim = f.m.dim;
    const double dt = 0.05;
    imp_ctraj d;
    rotor_windows(4, 10, 3, &d);
    size_t csz = (size_t)(S + 1) * dim;
    double *chunks = malloc((size_t)B * csz * sizeof(double));
    for (int b = 0; b < B; b++) memcpy(chunks + b * csz, d.z + (size_t)b * d.T * dim, csz * sizeof(double));
    const int r[3] = {3, 2, 1};
    imp_cmodel_work *w = imp_cmodel_work_new_slots(&f.m, B, 4 * S + 1);
    double *grad = calloc(f.m.n_params, sizeof(double));
    double loss = window_loss(&f, chunks, r, B, dt, grad, w);
    CHECK(isfinite(loss) && loss > 0);

    /* forward: each window with the generic integrator (dt / r, S r steps) */
    imp_cmodel_work *w1 = imp_cmodel_work_new(&f.m, 1);
    imp_cmodel_binding bind = {&f.m, f.params, w1};
    imp_ode ode;
    imp_cmodel_ode(&ode, &bind);
    double acc = 0, *tr = malloc((size_t)(S * 3 + 1) * dim * sizeof(double));
    for (int b = 0; b < B; b++) {
        CHECK_OK(imp_integrate_fixed(&imp_stepper_rk4, &ode, 0.0, dt / r[b], S * r[b], chunks + b * csz, 1, tr));
        for (int k = 0; k <= S; k++)
            for (int i = 0; i < dim; i++) acc += fabs(tr[(size_t)k * r[b] * dim + i] - chunks[b * csz + k * dim + i]);
    }
    double ref = acc / ((double)B * (S + 1) * dim);
    CHECK_MSG(fabs(loss - ref) <= 1e-13 * ref, "%s: substepped loss %.17g, generic integrator %.17g",
              imp_cmodel_kind_name(kind), loss, ref);
    /* the substeps change the result by more than that tolerance (the
     * check above can fail) */
    const int ones[3] = {1, 1, 1};
    double l1 = window_loss(&f, chunks, ones, B, dt, NULL, w);
    CHECK_MSG(fabs(l1 - loss) > 1e-12 * loss, "%s: 3, 2, 1 substeps give the loss of 1, 1, 1 (%.17g, %.17g)",
              imp_cmodel_kind_name(kind), loss, l1);

    /* gradient against central differences */
    imp_rng rng;
    imp_rng_seed(&rng, 23);
    const double h = 1e-6;
    double an[48], nu[48];
    int np = 0;
    for (int u = 0; u < 48; u++) {
        /* half in the potential (or NODE) network, half in the mass network */
        size_t na = f.m.off_mass < f.m.n_params ? f.m.off_mass : f.m.n_params, nb = f.m.n_params - na;
        size_t p = na == 0 || nb == 0 ? imp_rng_below(&rng, f.m.n_params)
                   : u < 24           ? imp_rng_below(&rng, na)
                                      : na + imp_rng_below(&rng, nb);
        double keep = f.params[p];
        f.params[p] = keep + h;
        double lp = window_loss(&f, chunks, r, B, dt, NULL, w);
        f.params[p] = keep - h;
        double lm = window_loss(&f, chunks, r, B, dt, NULL, w);
        f.params[p] = keep;
        nu[np] = (lp - lm) / (2 * h);
        an[np++] = grad[p];
    }
    double e = test_grad_rel_err(an, nu, np, 1e-4);
    CHECK_MSG(e < 1e-5, "%s: substepped window-loss gradient rel err %g", imp_cmodel_kind_name(kind), e);

    /* all r = 1: bit for bit the loss without substeps, taped and generic */
    imp_cmodel_work *works[2] = {w, imp_cmodel_work_new(&f.m, B)};
    for (int k = 0; k < 2; k++) {
        double *g0 = calloc(f.m.n_params, sizeof(double)), *g1 = calloc(f.m.n_params, sizeof(double));
        double a0 = window_loss(&f, chunks, NULL, B, dt, g0, works[k]);
        double a1 = window_loss(&f, chunks, ones, B, dt, g1, works[k]);
        CHECK(a0 == a1);
        CHECK(!memcmp(g0, g1, f.m.n_params * sizeof(double)));
        free(g0);
        free(g1);
    }
    /* a mixed batch: the r = 1 windows as a batch of their own plus the
     * substepped one; the pool gives the same on 1 thread (bit for bit) and
     * 2 threads (to rounding) */
    const int mixed[3] = {1, 3, 1};
    double *gm = calloc(f.m.n_params, sizeof(double));
    double lmix = window_loss(&f, chunks, mixed, B, dt, gm, w);
    double pair[2 * 5 * 12];
    memcpy(pair, chunks, csz * sizeof(double));
    memcpy(pair + csz, chunks + 2 * csz, csz * sizeof(double));
    double lpair = window_loss(&f, pair, NULL, 2, dt, NULL, w);
    const int three[1] = {3};
    double lone = window_loss(&f, chunks + csz, three, 1, dt, NULL, w);
    CHECK_CLOSE(lmix, (2 * lpair + lone) / 3, 1e-14, 0);
    for (int T = 1; T <= 2; T++) {
        imp_ctrain_pool *p = NULL;
        CHECK_OK(imp_ctrain_pool_new(&p, &f.m, B, S, T));
        double *gp = calloc(f.m.n_params, sizeof(double)), lp = NAN;
        CHECK_OK(imp_ctrain_pool_loss_substeps(p, f.params, chunks, mixed, B, dt, gp, &lp));
        double dmax = 0, gmax = 0;
        for (size_t q = 0; q < f.m.n_params; q++) {
            dmax = fmax(dmax, fabs(gp[q] - gm[q]));
            gmax = fmax(gmax, fabs(gm[q]));
        }
        if (T == 1) CHECK(lp == lmix && dmax == 0);
        CHECK_MSG(dmax <= 1e-12 * gmax && fabs(lp - lmix) <= 1e-14 * lmix,
                  "pool of %d threads: loss %.17g vs %.17g, gradient off by %g of %g", T, lp, lmix, dmax, gmax);
        const int bad[3] = {1, 0, 1};
        CHECK_FAILS(imp_ctrain_pool_loss_substeps(p, f.params, chunks, bad, B, dt, gp, &lp), IMP_ERR_INVALID);
        free(gp);
        imp_ctrain_pool_free(p);
    }
    free(gm);
    imp_cmodel_work_free(works[1]);
    imp_cmodel_work_free(w1);
    imp_cmodel_work_free(w);
    imp_ctraj_free(&d);
    free(tr);
    free(chunks);
    free(grad);
    free(f.params);
}

/* A training set of rotor windows, one per "trajectory": the n_fast
 * fastest windows (5 states on the non-overlapping grid) of the data, those
 * with the most substeps, then the first n_slow that need none. */
static void rotor_set(int n_fast, int n_slow, imp_ctraj *out, int *r_min, int *r_max)
{
    imp_ctraj d;
    rotor_windows(400, 100, 0, &d);
    int dim = d.dim, n_win = d.n_traj * (d.T / 5), ns = 0;
    size_t csz = (size_t)5 * dim;
    int *r = malloc((size_t)n_win * sizeof(int));
    for (int w = 0; w < n_win; w++)
        r[w] = imp_ctrain_window_substeps(d.z + ((size_t)(w / (d.T / 5)) * d.T + (size_t)(w % (d.T / 5)) * 5) * dim,
                                          5, dim, d.dt);
    out->n_traj = n_fast + n_slow;
    out->T = 5;
    out->dim = dim;
    out->dt = d.dt;
    out->z = malloc((size_t)out->n_traj * csz * sizeof(double));
#define WIN(w) (d.z + ((size_t)((w) / (d.T / 5)) * d.T + (size_t)((w) % (d.T / 5)) * 5) * dim)
    *r_min = IMP_CTRAIN_MAX_SUBSTEPS;
    *r_max = 1;
    for (int f = 0; f < n_fast; f++) {
        int best = -1;
        for (int w = 0; w < n_win; w++)
            if (r[w] > 1 && (best < 0 || r[w] > r[best])) best = w;
        CHECK_MSG(best >= 0, "rotor data: only %d fast windows, want %d", f, n_fast);
        if (best < 0) break;
        memcpy(out->z + (size_t)f * csz, WIN(best), csz * sizeof(double));
        if (r[best] < *r_min) *r_min = r[best];
        if (r[best] > *r_max) *r_max = r[best];
        r[best] = 0; /* taken */
    }
    for (int w = 0; w < n_win && ns < n_slow; w++)
        if (r[w] == 1) memcpy(out->z + (size_t)(n_fast + ns++) * csz, WIN(w), csz * sizeof(double));
#undef WIN
    CHECK_MSG(ns == n_slow, "rotor data: %d slow windows, want %d", ns, n_slow);
    free(r);
    imp_ctraj_free(&d);
}

/* Windows of a teacher model from the first states of the rotor's n
 * fastest windows: RK4 with 256 steps per sample interval (exact to
 * rounding at these rates), 5 states each. */
static void teacher_windows(const fixture *t, int n, imp_ctraj *out)
{
    imp_ctraj set;
    int r_min, r_max;
    rotor_set(n, 0, &set, &r_min, &r_max);
    int dim = set.dim;
    const int sub = 256, S = 4;
    imp_cmodel_work *w = imp_cmodel_work_new(&t->m, 1);
    imp_cmodel_binding bind = {&t->m, t->params, w};
    imp_ode ode;
    imp_cmodel_ode(&ode, &bind);
    double *tr = malloc((size_t)(sub * S + 1) * dim * sizeof(double));
    for (int i = 0; i < n; i++) {
        double *win = set.z + (size_t)i * 5 * dim;
        /* start at the window's fastest state */
        int kmax = 0;
        double vmax = 0;
        for (int k = 0; k < 5; k++)
            for (int j = dim / 2; j < dim; j++)
                if (fabs(win[k * dim + j]) > vmax) vmax = fabs(win[k * dim + j]), kmax = k;
        memmove(win, win + kmax * dim, dim * sizeof(double));
        CHECK_OK(imp_integrate_fixed(&imp_stepper_rk4, &ode, 0.0, set.dt / sub, sub * S, win, 1, tr));
        for (int k = 1; k <= S; k++) memcpy(win + (size_t)k * dim, tr + (size_t)k * sub * dim, dim * sizeof(double));
    }
    free(tr);
    imp_cmodel_work_free(w);
    *out = set;
}

/* Training near gimbal lock: a student of a teacher HNN on the rotor,
 * trained on the teacher's windows from the fastest states of the rotor
 * data (Euler rates up to ~200 rad/s, 9-20 substeps), with the defaults
 * (bench/chnn_survival.sh's criterion: no error and a last loss below 10)
 * survives with substeps and not without. */
static void test_rotor_survival(void)
{
    fixture t;
    make_model(&t, IMP_CMODEL_HNN, "rotor", 16, 0);
    const int n = 8;
    imp_ctraj set;
    teacher_windows(&t, n, &set);
    int want_max = 1, want_n = 0;
    for (int i = 0; i < n; i++) {
        int r = imp_ctrain_window_substeps(set.z + (size_t)i * 5 * set.dim, 5, set.dim, set.dt);
        want_n += r > 1;
        if (r > want_max) want_max = r;
    }
    CHECK(want_n == n);
    double *student = malloc(t.m.n_params * sizeof(double));
    for (int sub = 0; sub <= 1; sub++) {
        imp_rng rng;
        imp_rng_seed(&rng, 5);
        for (size_t q = 0; q < t.m.n_params; q++) student[q] = t.params[q] + 1e-3 * imp_rng_normal(&rng);
        imp_ctrain_opts o;
        imp_ctrain_opts_default(&o);
        o.epochs = 6;
        o.batch = 4;
        o.lr = imp_ctrain_reference_lr("rotor");
        o.max_substeps = sub ? 0 : 1;
        imp_train_report rep;
        memset(&rep, 0, sizeof rep);
        o.hooks.report = &rep;
        imp_ctrain_result res;
        int st = imp_ctrain(&t.m, student, &set, &o, &res);

        int survived = st == IMP_OK && rep.final_loss < 10;
        printf("rotor teacher windows, %s substeps: status %d, %d epochs, last loss %.3g, %d substepped (max %d)\n",
               sub ? "with" : "without", st, rep.epochs_done, rep.final_loss, res.substepped_windows,
               res.max_substeps);
        if (sub) {
            CHECK_MSG(survived, "with substeps: status %d, last loss %g", st, rep.final_loss);
            CHECK(res.substepped_windows == want_n && res.max_substeps == want_max);
        } else {
            CHECK_MSG(!survived, "without substeps the rollouts should not follow (last loss %g)", rep.final_loss);
            CHECK(res.substepped_windows == 0 && res.max_substeps == 1);
        }
    }
    free(student);
    imp_ctraj_free(&set);
    free(t.params);
}

/* The spike filter (opts.skip_factor): 10 copies of one rotor window, one
 * whose targets are 1000 off and one whose rollout overflows, each window
 * its own minibatch. With the filter (factor 5: the far window's loss is
 * ~11 times the first epoch's mean, the copies' about equal to it) the far
 * window is skipped from the second epoch on and the overflowing one in
 * every epoch, and the later epochs' loss is the copies'; off, the
 * overflow stops training, and without it the far window's loss stays in
 * every epoch's. The divergence guard is off (only a non-finite loss
 * stops), so that it does not stop the runs with the far window. */
static void test_spike_filter(void)
{
    fixture f;
    make_model(&f, IMP_CMODEL_HNN, "rotor", 16, 4);
    imp_ctraj set;
    int r_min, r_max;
    const int n = 10;
    rotor_set(0, 1, &set, &r_min, &r_max);
    size_t csz = (size_t)5 * set.dim;
    set.z = realloc(set.z, (size_t)(n + 2) * csz * sizeof(double));
    for (int i = 1; i < n + 2; i++) memcpy(set.z + i * csz, set.z, csz * sizeof(double));
    double *far = set.z + n * csz, *inf = set.z + (n + 1) * csz;
    for (size_t q = set.dim; q < csz; q++) far[q] += 1000.0;
    for (int i = set.dim / 2; i < set.dim; i++) inf[i] = 1e300;
    double *p0 = malloc(f.m.n_params * sizeof(double));
    memcpy(p0, f.params, f.m.n_params * sizeof(double));
    const int epochs = 4;
    for (int mode = 0; mode < 3; mode++) {
        /* 0: filter on, all; 1: off, all; 2: off, without the overflow */
        set.n_traj = mode == 2 ? n + 1 : n + 2;
        memcpy(f.params, p0, f.m.n_params * sizeof(double));
        imp_ctrain_opts o;
        imp_ctrain_opts_default(&o);
        o.epochs = epochs;
        o.batch = 1;
        o.lr = 1e-3;
        o.skip_factor = mode == 0 ? 5 : 0;
        o.hooks.diverge_factor = 0;
        double hist[4];
        imp_train_report rep;
        memset(&rep, 0, sizeof rep);
        o.hooks.report = &rep;
        o.hooks.loss_history = hist;
        imp_ctrain_result res;
        int st = imp_ctrain(&f.m, f.params, &set, &o, &res);
        printf("spike filter mode %d: status %d, skipped %d, epoch losses", mode, st, res.skipped_batches);
        for (int e = 0; e < rep.epochs_done; e++) printf(" %.3g", hist[e]);
        printf("\n");
        if (mode == 0) {
            CHECK_OK(st);
            CHECK_MSG(res.skipped_batches == 2 * epochs - 1, "skipped %d minibatches, want %d",
                      res.skipped_batches, 2 * epochs - 1);
            /* epoch 1 holds the far window's loss (~800 / 11), the others only the copies' */
            CHECK(rep.epochs_done == epochs && hist[0] > 50);
            for (int e = 1; e < rep.epochs_done; e++)
                CHECK_MSG(hist[e] < 1, "epoch %d loss %g", e + 1, hist[e]);
        } else if (mode == 1) {
            CHECK(st == IMP_ERR_NUMERIC);
            CHECK(res.skipped_batches == 0);
        } else {
            CHECK_OK(st);
            CHECK(res.skipped_batches == 0 && rep.epochs_done == epochs);
            for (int e = 0; e < rep.epochs_done; e++)
                CHECK_MSG(hist[e] > 50, "epoch %d loss %g", e + 1, hist[e]);
        }
    }
    imp_ctrain_opts o;
    imp_ctrain_opts_default(&o);
    imp_ctrain_result res;
    const double bad[] = {0.5, 1.0, -1.0, NAN, INFINITY};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        o.skip_factor = bad[k];
        CHECK_FAILS(imp_ctrain(&f.m, f.params, &set, &o, &res), IMP_ERR_INVALID);
    }
    free(p0);
    imp_ctraj_free(&set);
    free(f.params);
}

int main(void)
{
    imp_blas_init();
    test_rule();
    test_window_loss(IMP_CMODEL_HNN);
    test_window_loss(IMP_CMODEL_DELAN);
    test_window_loss(IMP_CMODEL_NODE);
    test_rotor_survival();
    test_spike_filter();
    TEST_MAIN_END();
}
