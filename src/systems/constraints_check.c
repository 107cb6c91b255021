/* Whole-set checks of a constraint description (what a system file gets
 * when it is read): redundant, degenerate and unsatisfiable constraints,
 * found one constraint at a time so that the message names the first
 * offending one and its line. */
#include "impulse/constrained.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void imp_csys_nominal_state(const imp_csys *s, double *xv)
{
    int N = imp_csys_ndof(s), d = s->d;
    double *x = xv, *v = xv + N;
    memset(xv, 0, 2 * (size_t)N * sizeof(double));
    for (int b = 0; b < s->n_bodies; b++) {
        const imp_cbody *body = &s->bodies[b];
        for (int p = 0; p <= body->n_axes; p++)
            for (int k = 0; k < d; k++) {
                x[(body->first_point + p) * d + k] = body->x0[k] + (p > 0 && k == p - 1 ? 1.0 : 0.0);
                v[(body->first_point + p) * d + k] = body->v0[k];
            }
    }
}

static int con_fail(const imp_ccon *c, const char *what)
{
    if (c->line > 0) return imp_fail(IMP_ERR_INVALID, "constraint '%s' (line %d): %s", c->label, c->line, what);
    return imp_fail(IMP_ERR_INVALID, "constraint '%s': %s", c->label, what);
}

/* Smallest relative residual of Gram-Schmidt on the rows of DPhi(x)
 * (Euclidean): 1 for orthogonal rows, 0 for dependent ones. */
static double row_independence(const imp_csys *sub, const double *x)
{
    int N = imp_csys_ndof(sub), C = sub->n_rows;
    double *J = malloc((size_t)C * N * sizeof(double)), worst = 1.0;
    if (!J) return 0.0;
    imp_csys_jacobian(sub, x, J);
    for (int c = 0; c < C; c++) {
        double *q = J + (size_t)c * N, n0 = 0, n1 = 0;
        for (int k = 0; k < N; k++) n0 += q[k] * q[k];
        for (int pass = 0; pass < 2; pass++)
            for (int e = 0; e < c; e++) {
                const double *qe = J + (size_t)e * N;
                double dot = 0;
                for (int k = 0; k < N; k++) dot += q[k] * qe[k];
                for (int k = 0; k < N; k++) q[k] -= dot * qe[k];
            }
        for (int k = 0; k < N; k++) n1 += q[k] * q[k];
        double r = n0 > 0 ? sqrt(n1 / n0) : 0.0;
        worst = fmin(worst, r);
        if (n1 > 0)
            for (int k = 0; k < N; k++) q[k] /= sqrt(n1);
    }
    free(J);
    return worst;
}

/* Project x0 + scale * (a fixed pseudo-random direction) onto the prefix
 * system; *rank_ok tells whether the rows are independent at the start. */
static int try_prefix(const imp_csys *sub, const double *x0, double scale, uint64_t seed, imp_csys_work *w,
                      double *x, int *rank_ok, double *residual)
{
    int N = imp_csys_ndof(sub);
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    for (int q = 0; q < N; q++) x[q] = x0[q] + scale * imp_rng_normal(&rng);
    *rank_ok = imp_csys_check_rank(sub, x, w) == IMP_OK;
    imp_csys_project_opts o = {1e-10, 200};
    int st = imp_csys_project(sub, x, NULL, &o, w);
    double phi[IMP_CSYS_MAX_ROWS];
    imp_csys_phi(sub, x, phi);
    *residual = 0;
    for (int c = 0; c < sub->n_rows; c++) *residual = fmax(*residual, fabs(phi[c]));
    return st;
}

int imp_csys_check_constraints(const imp_csys *s)
{
    if (!s) return imp_fail(IMP_ERR_INVALID, "system: NULL");
    if (s->n_cons == 0) return IMP_OK;
    int N = imp_csys_ndof(s);
    imp_csys *sub = malloc(sizeof *sub);
    double *xv = malloc(2 * (size_t)N * sizeof(double)), *x = malloc((size_t)N * sizeof(double));
    if (!sub || !xv || !x) {
        free(sub), free(xv), free(x);
        return imp_fail(IMP_ERR_NOMEM, "constraint check: out of memory");
    }
    imp_csys_nominal_state(s, xv);
    *sub = *s;
    int st = IMP_OK;
    for (int k = 1; k <= s->n_cons && !st; k++) {
        const imp_ccon *c = &s->cons[k - 1];
        sub->n_cons = k;
        sub->n_rows = c->first_row + c->n_rows;
        imp_csys_work *w = imp_csys_work_new(sub);
        if (!w) {
            st = imp_fail(IMP_ERR_NOMEM, "constraint check: out of memory");
            break;
        }
        /* two generic starts near the nominal state, then a wide one: the
         * constraint passes if any of them lands on a regular point of the
         * prefix's manifold */
        static const double scales[3] = {0.05, 0.3, 1.0};
        int passed = 0, rank_anywhere = 0, met = 0;
        double best = INFINITY;
        for (int t = 0; t < 3 && !passed; t++) {
            int rank_ok;
            double res;
            int pst = try_prefix(sub, xv, scales[t], 0x5c0ffeeULL + (uint64_t)t, w, x, &rank_ok, &res);
            rank_anywhere |= rank_ok;
            /* a regular point: rows clearly independent (two constraints
             * that only touch, e.g. a link exactly as long as two tethers
             * allow, meet at a point where they are dependent) */
            if (!pst && row_independence(sub, x) > 1e-4) passed = 1;
            if (!pst) met = 1;
            else if (isfinite(res)) best = fmin(best, res);
        }
        imp_csys_work_free(w);
        if (passed) continue;
        imp_clear_error();
        if (!rank_anywhere) {
            /* dependent on the earlier rows at every start tried: structural */
            st = con_fail(c, "redundant with the constraints before it (its rows depend on theirs), "
                             "or degenerate (zero gradient); remove it");
        } else if (met) {
            st = con_fail(c, "its rows depend on those of the constraints before it wherever they all hold "
                             "(redundant with them, or met only at a singular configuration); remove it or "
                             "change its length or anchor");
        } else {
            char what[200];
            snprintf(what, sizeof what,
                     "cannot be met together with the constraints before it (closest |Phi| found %.3g); "
                     "check its length or anchor",
                     best);
            st = con_fail(c, what);
        }
    }
    free(sub), free(xv), free(x);
    return st;
}
