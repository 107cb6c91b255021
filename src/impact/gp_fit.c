/* GP hyperparameter search: maximise the log marginal likelihood [R&W eq
 * 5.8] over theta = log hyperparameters with a box-projected L-BFGS (Nocedal
 * & Wright alg. 7.4, two-loop recursion) and an Armijo backtracking line
 * search, from one default start plus `restarts` seeded random starts; the
 * best optimum wins. Box limits (standardised units) keep the search away
 * from degenerate kernels: a failed Cholesky counts as an infinite cost, so
 * the line search backs off. */
#include "impulse/gp.h"
#include "impulse/core.h"
#include "gp_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LBFGS_M 7

void imp_gp_options_default(imp_gp_options *opt)
{
    opt->max_iter = 60;
    opt->restarts = 2;
    opt->seed = 1;
    opt->standardize = 1;
    opt->min_noise = 1e-4;
}

typedef struct gp_search {
    const double *x, *y;
    size_t n, d, p;
    double *K, *alpha;
    const double *lo, *hi;
} gp_search;

/* f = -lml and its gradient; returns 0 on success, nonzero if K failed. */
static int search_eval(gp_search *s, const double *theta, double *f, double *g)
{
    double lml;
    int st = imp_gp__lml_work(s->x, s->y, s->n, s->d, theta, &lml, g, NULL, s->K, s->alpha);
    if (st) return st;
    *f = -lml;
    for (size_t i = 0; i < s->p; i++) g[i] = -g[i];
    return IMP_OK;
}

/* Zero the components of a direction that would leave the box at a bound. */
static void project_direction(const gp_search *s, const double *theta, double *dir)
{
    for (size_t i = 0; i < s->p; i++) {
        if (theta[i] <= s->lo[i] && dir[i] < 0.0) dir[i] = 0.0;
        if (theta[i] >= s->hi[i] && dir[i] > 0.0) dir[i] = 0.0;
    }
}

/* One L-BFGS run from theta (updated in place); returns the final cost in *fbest
 * or a failure status if the start itself cannot be evaluated. */
static int lbfgs_run(gp_search *s, double *theta, int max_iter, double *fbest)
{
    const size_t p = s->p;
    double S[LBFGS_M][IMP_GP__MAX_DIM + 2], Y[LBFGS_M][IMP_GP__MAX_DIM + 2], rho[LBFGS_M];
    double g[IMP_GP__MAX_DIM + 2], gn[IMP_GP__MAX_DIM + 2], dir[IMP_GP__MAX_DIM + 2];
    double tn[IMP_GP__MAX_DIM + 2], a[LBFGS_M];
    int mem = 0, head = 0, small = 0;
    double f;
    int st = search_eval(s, theta, &f, g);
    if (st) return st;
    for (int it = 0; it < max_iter; it++) {
        /* two-loop recursion: dir = -H g */
        for (size_t i = 0; i < p; i++) dir[i] = -g[i];
        for (int k = 0; k < mem; k++) {
            int j = (head - 1 - k + LBFGS_M) % LBFGS_M;
            double t = 0.0;
            for (size_t i = 0; i < p; i++) t += S[j][i] * dir[i];
            a[k] = rho[j] * t;
            for (size_t i = 0; i < p; i++) dir[i] -= a[k] * Y[j][i];
        }
        if (mem > 0) {
            int j = (head - 1 + LBFGS_M) % LBFGS_M;
            double sy = 0.0, yy = 0.0;
            for (size_t i = 0; i < p; i++) {
                sy += S[j][i] * Y[j][i];
                yy += Y[j][i] * Y[j][i];
            }
            for (size_t i = 0; i < p; i++) dir[i] *= sy / yy;
        }
        for (int k = mem - 1; k >= 0; k--) {
            int j = (head - 1 - k + LBFGS_M) % LBFGS_M;
            double t = 0.0;
            for (size_t i = 0; i < p; i++) t += Y[j][i] * dir[i];
            double b = rho[j] * t;
            for (size_t i = 0; i < p; i++) dir[i] += (a[k] - b) * S[j][i];
        }
        project_direction(s, theta, dir);
        double slope = 0.0;
        for (size_t i = 0; i < p; i++) slope += g[i] * dir[i];
        if (!(slope < 0.0)) { /* not a descent direction: restart from steepest descent */
            mem = 0;
            for (size_t i = 0; i < p; i++) dir[i] = -g[i];
            project_direction(s, theta, dir);
            slope = 0.0;
            for (size_t i = 0; i < p; i++) slope += g[i] * dir[i];
            if (!(slope < 0.0)) break; /* projected gradient is zero: a KKT point */
        }
        double step = 1.0;
        if (mem == 0) { /* first step: move at most one unit in log space */
            double dmax = 0.0;
            for (size_t i = 0; i < p; i++) dmax = fabs(dir[i]) > dmax ? fabs(dir[i]) : dmax;
            if (dmax > 1.0) step = 1.0 / dmax;
        }
        int accepted = 0;
        double fn = f;
        for (int ls = 0; ls < 40; ls++) {
            double dec = 0.0;
            for (size_t i = 0; i < p; i++) {
                double v = theta[i] + step * dir[i];
                tn[i] = v < s->lo[i] ? s->lo[i] : (v > s->hi[i] ? s->hi[i] : v);
                dec += g[i] * (tn[i] - theta[i]);
            }
            if (search_eval(s, tn, &fn, gn) == IMP_OK && isfinite(fn) && fn <= f + 1e-4 * dec) {
                accepted = 1;
                break;
            }
            step *= 0.5;
        }
        imp_clear_error(); /* failed trial points are part of the search */
        if (!accepted) break;
        double sy = 0.0, df = f - fn;
        for (size_t i = 0; i < p; i++) {
            S[head][i] = tn[i] - theta[i];
            Y[head][i] = gn[i] - g[i];
            sy += S[head][i] * Y[head][i];
        }
        if (sy > 1e-12) { /* keep the curvature pair only if it is positive */
            rho[head] = 1.0 / sy;
            head = (head + 1) % LBFGS_M;
            if (mem < LBFGS_M) mem++;
        }
        memcpy(theta, tn, p * sizeof *theta);
        memcpy(g, gn, p * sizeof *g);
        f = fn;
        /* stop once two successive steps gain less than 1e-6 (1 + |lml|):
         * the remaining creep of irrelevant length scales changes nothing */
        small = df <= 1e-6 * (1.0 + fabs(f)) ? small + 1 : 0;
        if (small >= 2) break;
    }
    *fbest = f;
    return IMP_OK;
}

int imp_gp_fit(imp_gp **out, const double *x, const double *y, size_t n, size_t d,
               const imp_gp_options *opt_in)
{
    if (!out) return imp_fail(IMP_ERR_INVALID, "gp: out: NULL");
    *out = NULL;
    int st = imp_gp__check_data(x, y, n, d);
    if (st) return st;
    imp_gp_options opt;
    if (opt_in) opt = *opt_in;
    else imp_gp_options_default(&opt);
    if (opt.max_iter < 0) return imp_fail(IMP_ERR_INVALID, "gp: max_iter: %d < 0", opt.max_iter);
    if (opt.restarts < 0) return imp_fail(IMP_ERR_INVALID, "gp: restarts: %d < 0", opt.restarts);
    if (!(opt.min_noise > 0.0) || !isfinite(opt.min_noise))
        return imp_fail(IMP_ERR_INVALID, "gp: min_noise: %g must be positive", opt.min_noise);

    const size_t p = d + 2;
    imp_gp *gp = imp_gp__alloc(n, d);
    double *ys = malloc(n * sizeof *ys);
    double *K = malloc(n * n * sizeof *K);
    double *alpha = malloc(n * sizeof *alpha);
    if (!gp || !ys || !K || !alpha) {
        imp_gp_free(gp);
        free(ys);
        free(K);
        free(alpha);
        return imp_fail(IMP_ERR_NOMEM, "gp: cannot allocate fit for n=%zu", n);
    }
    imp_gp__standardize(gp, x, y, opt.standardize, ys);

    /* Box in log space; with standardised data unit scales are natural. */
    double lo[IMP_GP__MAX_DIM + 2], hi[IMP_GP__MAX_DIM + 2];
    for (size_t i = 0; i < d; i++) {
        lo[i] = log(1e-2);
        hi[i] = log(1e3);
    }
    lo[d] = log(1e-2);
    hi[d] = log(1e2);
    lo[d + 1] = log(opt.min_noise);
    hi[d + 1] = log(1e1);
    gp_search s = {gp->x, ys, n, d, p, K, alpha, lo, hi};

    imp_rng rng;
    imp_rng_seed(&rng, opt.seed);
    double best[IMP_GP__MAX_DIM + 2], theta[IMP_GP__MAX_DIM + 2];
    double fbest = INFINITY;
    for (int r = 0; r <= opt.restarts; r++) {
        if (r == 0) { /* default start: unit scales, 10% noise */
            for (size_t i = 0; i < d; i++) theta[i] = 0.0;
            theta[d] = 0.0;
            theta[d + 1] = log(0.1);
        } else {
            for (size_t i = 0; i < d; i++) theta[i] = imp_rng_uniform_range(&rng, log(0.2), log(5.0));
            theta[d] = imp_rng_uniform_range(&rng, log(0.5), log(2.0));
            theta[d + 1] = imp_rng_uniform_range(&rng, log(1e-2), log(0.5));
        }
        for (size_t i = 0; i < p; i++) theta[i] = theta[i] < lo[i] ? lo[i] : (theta[i] > hi[i] ? hi[i] : theta[i]);
        double f;
        if (lbfgs_run(&s, theta, opt.max_iter, &f) != IMP_OK) continue;
        if (f < fbest) {
            fbest = f;
            memcpy(best, theta, p * sizeof *best);
        }
    }
    free(K);
    free(alpha);
    if (!isfinite(fbest)) {
        free(ys);
        imp_gp_free(gp);
        return imp_fail(IMP_ERR_NUMERIC, "gp: no start gave a positive-definite kernel matrix");
    }
    imp_clear_error();
    memcpy(gp->log_theta, best, p * sizeof *best);
    st = imp_gp__condition(gp, ys);
    free(ys);
    if (st) {
        imp_gp_free(gp);
        return st;
    }
    *out = gp;
    return IMP_OK;
}

void imp_gp_multi_free(imp_gp_multi *mg)
{
    if (!mg) return;
    for (size_t j = 0; j < mg->k; j++) imp_gp_free(mg->gp[j]);
    free(mg->gp);
    free(mg);
}

int imp_gp_multi_fit(imp_gp_multi **out, const double *x, const double *y, size_t n, size_t d,
                     size_t k, const imp_gp_options *opt)
{
    if (!out) return imp_fail(IMP_ERR_INVALID, "gp: out: NULL");
    *out = NULL;
    if (k == 0) return imp_fail(IMP_ERR_SHAPE, "gp: k: no outputs");
    if (!y) return imp_fail(IMP_ERR_INVALID, "gp: y: NULL");
    if (n == 0) return imp_fail(IMP_ERR_SHAPE, "gp: n: no training samples");
    imp_gp_multi *mg = calloc(1, sizeof *mg);
    double *col = malloc(n * sizeof *col);
    if (mg) mg->gp = calloc(k, sizeof *mg->gp);
    if (!mg || !mg->gp || !col) {
        imp_gp_multi_free(mg);
        free(col);
        return imp_fail(IMP_ERR_NOMEM, "gp: cannot allocate %zu outputs", k);
    }
    mg->k = k;
    for (size_t j = 0; j < k; j++) {
        for (size_t a = 0; a < n; a++) col[a] = y[a * k + j];
        int st = imp_gp_fit(&mg->gp[j], x, col, n, d, opt);
        if (st) {
            free(col);
            imp_gp_multi_free(mg);
            return imp_fail_context(st, "output %zu", j);
        }
    }
    free(col);
    *out = mg;
    return IMP_OK;
}

int imp_gp_multi_predict(const imp_gp_multi *mg, const double *xs, size_t m, double *mean,
                         double *var)
{
    if (!mg) return imp_fail(IMP_ERR_INVALID, "gp: model: NULL");
    if (m == 0) return IMP_OK;
    if (!mean) return imp_fail(IMP_ERR_INVALID, "gp: mean: NULL");
    const size_t k = mg->k;
    double *mu = malloc(2 * m * sizeof *mu);
    if (!mu) return imp_fail(IMP_ERR_NOMEM, "gp: predict: cannot allocate %zu", m);
    double *vv = mu + m;
    for (size_t j = 0; j < k; j++) {
        int st = imp_gp_predict(mg->gp[j], xs, m, mu, var ? vv : NULL);
        if (st) {
            free(mu);
            return st;
        }
        for (size_t a = 0; a < m; a++) {
            mean[a * k + j] = mu[a];
            if (var) var[a * k + j] = vv[a];
        }
    }
    free(mu);
    return IMP_OK;
}
