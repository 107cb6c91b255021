/* The IRB bound ([ISRR] eq 7, [CoRL] eq 7; reference sec 3): least-squares
 * impulse over the admissible set of rigid point contact, solved exactly as
 * a 2-D convex QCQP
 *   min ||A P - b||^2  s.t.  (P - c)^T W (P - c) <= r^2   (energy ellipse)
 *                           a^T P >= beta                  (un+ >= 0)
 * with c = -Mc u (plastic stick impulse), r^2 = u^T Mc u, a = (Wnt, Wnn),
 * beta = -un. Since the problem is convex, its minimiser is the
 * unconstrained one if feasible, else the best feasible point among: the
 * minimiser with only the ellipse (trust-region secular equation), the
 * minimiser on the line, and the two ends of the chord. */
#include "impulse/core.h"
#include "impulse/impact_analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *imp_irb_metric_name(imp_irb_metric m)
{
    return m == IMP_IRB_VELOCITY ? "velocity" : m == IMP_IRB_MOMENTUM ? "momentum" : NULL;
}

static void solve2(const double A[4], const double b[2], double x[2])
{
    double det = A[0] * A[3] - A[1] * A[2];
    x[0] = (A[3] * b[0] - A[1] * b[1]) / det;
    x[1] = (-A[2] * b[0] + A[0] * b[1]) / det;
}

typedef struct irb_problem {
    double H[4], h[2], k;    /* f(P) = P^T H P - 2 h^T P + k */
    double W[4], c[2], r2;   /* ellipse */
    double a[2], beta;       /* line */
} irb_problem;

static double irb_f(const irb_problem *q, const double P[2])
{
    return P[0] * (q->H[0] * P[0] + q->H[1] * P[1]) + P[1] * (q->H[2] * P[0] + q->H[3] * P[1]) -
           2 * (q->h[0] * P[0] + q->h[1] * P[1]) + q->k;
}

static double irb_e(const irb_problem *q, const double P[2])
{
    double d0 = P[0] - q->c[0], d1 = P[1] - q->c[1];
    return d0 * (q->W[0] * d0 + q->W[1] * d1) + d1 * (q->W[2] * d0 + q->W[3] * d1);
}

/* Minimiser of f with (H + lam W) P = h + lam W c. */
static void ellipse_point(const irb_problem *q, double lam, double P[2])
{
    double A[4], rhs[2];
    for (int i = 0; i < 4; i++) A[i] = q->H[i] + lam * q->W[i];
    rhs[0] = q->h[0] + lam * (q->W[0] * q->c[0] + q->W[1] * q->c[1]);
    rhs[1] = q->h[1] + lam * (q->W[2] * q->c[0] + q->W[3] * q->c[1]);
    solve2(A, rhs, P);
}

int imp_impact_irb(const imp_contact *c, double kg, imp_irb_metric metric, double P[2], int *active)
{
    if (metric != IMP_IRB_VELOCITY && metric != IMP_IRB_MOMENTUM)
        return imp_fail(IMP_ERR_INVALID, "irb metric: unknown value %d", (int)metric);
    if (!(kg > 0)) return imp_fail(IMP_ERR_INVALID, "kg: must be > 0 (got %g)", kg);
    if (!(c->u[1] < 0)) return imp_fail(IMP_ERR_INVALID, "u: normal contact velocity %g >= 0, not an impact", c->u[1]);
    /* A (3x2) and b (3) of the metric */
    double A[6], b[3], dv[3];
    for (int k = 0; k < 3; k++) dv[k] = c->v_post[k] - c->v_pre[k];
    for (int k = 0; k < 3; k++) {
        double s, mk = 1.0 / c->minv[k];
        if (metric == IMP_IRB_VELOCITY) {
            s = k == 2 ? kg : 1.0;
            A[2 * k] = s * c->minv[k] * c->J[k];
            A[2 * k + 1] = s * c->minv[k] * c->J[3 + k];
            b[k] = s * dv[k];
        } else {
            A[2 * k] = c->J[k];
            A[2 * k + 1] = c->J[3 + k];
            b[k] = mk * dv[k];
        }
    }
    irb_problem q;
    memset(&q, 0, sizeof q);
    for (int k = 0; k < 3; k++) {
        q.H[0] += A[2 * k] * A[2 * k];
        q.H[1] += A[2 * k] * A[2 * k + 1];
        q.H[3] += A[2 * k + 1] * A[2 * k + 1];
        q.h[0] += A[2 * k] * b[k];
        q.h[1] += A[2 * k + 1] * b[k];
        q.k += b[k] * b[k];
    }
    q.H[2] = q.H[1];
    memcpy(q.W, c->W, sizeof q.W);
    imp_contact_plastic_stick(c, q.c);
    q.r2 = -(q.c[0] * c->u[0] + q.c[1] * c->u[1]); /* u^T Mc u */
    q.a[0] = c->W[2];
    q.a[1] = c->W[3];
    q.beta = -c->u[1];
    const double tol = 1e-12;
    double P0[2];
    solve2(q.H, q.h, P0);
    double lineres0 = q.a[0] * P0[0] + q.a[1] * P0[1] - q.beta;
    int in_e = irb_e(&q, P0) <= q.r2 * (1 + tol), in_l = lineres0 >= -tol * q.beta;
    if (in_e && in_l) {
        memcpy(P, P0, sizeof P0);
        if (active) *active = 0;
        return IMP_OK;
    }
    double best = INFINITY, cand[2];
    int act = -1;
    /* 1. ellipse only (if the unconstrained point is outside it) */
    if (!in_e) {
        double lo = 0, hi = 1;
        while (ellipse_point(&q, hi, cand), irb_e(&q, cand) > q.r2) {
            lo = hi;
            hi *= 4;
            if (hi > 1e30) break;
        }
        for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; it++) {
            double mid = 0.5 * (lo + hi);
            ellipse_point(&q, mid, cand);
            if (irb_e(&q, cand) > q.r2) lo = mid;
            else hi = mid;
        }
        ellipse_point(&q, hi, cand);
        if (q.a[0] * cand[0] + q.a[1] * cand[1] - q.beta >= -tol * q.beta) {
            double f = irb_f(&q, cand);
            if (f < best) { best = f; memcpy(P, cand, sizeof cand); act = 1; }
        }
    }
    /* 2. on the line a^T P = beta: P = P0 + Hinv a t */
    {
        double Ha[2];
        solve2(q.H, q.a, Ha);
        double t = -lineres0 / (q.a[0] * Ha[0] + q.a[1] * Ha[1]);
        cand[0] = P0[0] + t * Ha[0];
        cand[1] = P0[1] + t * Ha[1];
        if (irb_e(&q, cand) <= q.r2 * (1 + tol)) {
            double f = irb_f(&q, cand);
            if (f < best) { best = f; memcpy(P, cand, sizeof cand); act = 2; }
        }
    }
    /* 3. the ends of the chord (the line passes through the centre c) */
    {
        double tdir[2] = {q.a[1], -q.a[0]};
        double twt = tdir[0] * (q.W[0] * tdir[0] + q.W[1] * tdir[1]) + tdir[1] * (q.W[2] * tdir[0] + q.W[3] * tdir[1]);
        double s = sqrt(q.r2 / twt);
        for (int k = 0; k < 2; k++) {
            double sg = k ? -s : s;
            cand[0] = q.c[0] + sg * tdir[0];
            cand[1] = q.c[1] + sg * tdir[1];
            double f = irb_f(&q, cand);
            if (f < best) { best = f; memcpy(P, cand, sizeof cand); act = 3; }
        }
    }
    if (act < 0) return imp_fail(IMP_ERR_NUMERIC, "irb: no feasible candidate");
    if (active) *active = act;
    return IMP_OK;
}

double imp_contact_impulse_error(const imp_contact *c, const double P[2], double kg)
{
    double v[3];
    imp_contact_velocity_after(c, P, v);
    return imp_impact_velocity_error(v, c->v_post, kg);
}
