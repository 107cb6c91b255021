/* Constrained dynamics and projection onto the constraint manifold:
 * the constrained Hamiltonian flow ([F] eq 6), its Lagrange-multiplier
 * form ([F] eq 7), Gauss-Newton projection of positions and the exact
 * mass-metric projection of velocities. The systems are small (N <= 192),
 * so the linear algebra is dense, unblocked and local. */
#include "impulse/constrained.h"
#include "core/dense.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct imp_csys_work {
    int N, C;
    double *J, *Jdot, *MinvJt; /* C x N, C x N, C x N (rows are M^-1 J_c^T) */
    double *S, *A;             /* C x C; 2C x 2C */
    int *piv;                  /* 2C */
    double *u, *tmp, *tmp2;    /* 2N each */
    double *b, *mu;            /* 2C each */
    double *x_try;             /* N */
};

imp_csys_work *imp_csys_work_new(const imp_csys *s)
{
    if (!s) return NULL;
    int N = imp_csys_ndof(s), C = s->n_rows > 0 ? s->n_rows : 1;
    imp_csys_work *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->N = N;
    w->C = s->n_rows;
    size_t nd = (size_t)3 * C * N + (size_t)C * C + (size_t)4 * C * C + 6 * (size_t)N + 4 * (size_t)C + N;
    double *buf = calloc(nd, sizeof(double));
    w->piv = calloc((size_t)2 * C, sizeof(int));
    if (!buf || !w->piv) {
        free(buf);
        free(w->piv);
        free(w);
        return NULL;
    }
    w->J = buf;
    w->Jdot = w->J + (size_t)C * N;
    w->MinvJt = w->Jdot + (size_t)C * N;
    w->S = w->MinvJt + (size_t)C * N;
    w->A = w->S + (size_t)C * C;
    w->u = w->A + (size_t)4 * C * C;
    w->tmp = w->u + 2 * N;
    w->tmp2 = w->tmp + 2 * N;
    w->b = w->tmp2 + 2 * N;
    w->mu = w->b + 2 * C;
    w->x_try = w->mu + 2 * C;
    return w;
}

void imp_csys_work_free(imp_csys_work *w)
{
    if (!w) return;
    free(w->J);
    free(w->piv);
    free(w);
}

static int check_work(const imp_csys *s, const imp_csys_work *w)
{
    if (!s || !w) return imp_fail(IMP_ERR_INVALID, "constrained system: NULL system or work");
    if (w->N != imp_csys_ndof(s) || w->C != s->n_rows)
        return imp_fail(IMP_ERR_INVALID, "constrained work: made for another system");
    return IMP_OK;
}

/* J, M^-1 J^T rows, and S = J M^-1 J^T at x. */
static void build_schur(const imp_csys *s, const double *x, imp_csys_work *w)
{
    int N = w->N, C = w->C;
    imp_csys_jacobian(s, x, w->J);
    for (int c = 0; c < C; c++)
        imp_csys_mass_inv_mul(s, w->J + (size_t)c * N, w->MinvJt + (size_t)c * N);
    for (int a = 0; a < C; a++)
        for (int b = 0; b < C; b++) {
            double acc = 0;
            const double *ja = w->J + (size_t)a * N, *mb = w->MinvJt + (size_t)b * N;
            for (int q = 0; q < N; q++) acc += ja[q] * mb[q];
            w->S[a * C + b] = acc;
        }
}

static int con_line_fail(const imp_csys *s, int row, const char *what)
{
    const imp_ccon *c = &s->cons[s->rows[row].con];
    if (c->line > 0)
        return imp_fail(IMP_ERR_NUMERIC,
                        "constraint '%s' (line %d): %s", c->label, c->line, what);
    return imp_fail(IMP_ERR_NUMERIC, "constraint '%s': %s", c->label, what);
}

int imp_csys_check_rank(const imp_csys *s, const double *x, imp_csys_work *w)
{
    int st = check_work(s, w);
    if (st) return st;
    int N = w->N, C = w->C;
    /* Gram-Schmidt on the rows of DPhi: a row whose residual vanishes
     * depends on the earlier rows. Independence does not depend on the
     * metric; the Euclidean one keeps extreme masses (1e-308) from
     * overflowing the M^-1 weighting. */
    imp_csys_jacobian(s, x, w->J);
    double *Q = w->MinvJt; /* orthonormalised rows, reused */
    for (int c = 0; c < C; c++) {
        double *q = Q + (size_t)c * N;
        memcpy(q, w->J + (size_t)c * N, (size_t)N * sizeof(double));
        double norm0 = 0;
        for (int k = 0; k < N; k++) norm0 += q[k] * q[k];
        norm0 = sqrt(norm0);
        if (!(norm0 > 0.0)) return con_line_fail(s, c, "its gradient vanishes at this state (degenerate, e.g. zero length)");
        for (int pass = 0; pass < 2; pass++)
            for (int e = 0; e < c; e++) {
                const double *qe = Q + (size_t)e * N;
                double dot = 0;
                for (int k = 0; k < N; k++) dot += q[k] * qe[k];
                for (int k = 0; k < N; k++) q[k] -= dot * qe[k];
            }
        double norm = 0;
        for (int k = 0; k < N; k++) norm += q[k] * q[k];
        norm = sqrt(norm);
        if (!(norm > 1e-8 * norm0))
            return con_line_fail(s, c, "redundant with earlier constraints (singular constraint set)");
        for (int k = 0; k < N; k++) q[k] /= norm;
    }
    return IMP_OK;
}

static int factor_schur(const imp_csys *s, const double *x, imp_csys_work *w)
{
    if (imp_lu_factor(w->C, w->S, w->piv, 1e-13)) {
        int st = imp_csys_check_rank(s, x, w);
        if (st) return st;
        return imp_fail(IMP_ERR_NUMERIC, "constraints: DPhi M^-1 DPhi^T is singular at this state");
    }
    return IMP_OK;
}

int imp_csys_lagrange_accel(const imp_csys *s, const double *x, const double *v, double *a,
                            double *lambda, imp_csys_work *w)
{
    int st = check_work(s, w);
    if (st) return st;
    int N = w->N, C = w->C;
    /* a0 = M^-1 (-grad V) */
    imp_csys_potential_grad(s, x, w->tmp);
    for (int q = 0; q < N; q++) w->tmp[q] = -w->tmp[q];
    imp_csys_mass_inv_mul(s, w->tmp, a);
    if (C == 0) return IMP_OK;
    build_schur(s, x, w);
    imp_csys_jacobian_dot(s, v, w->Jdot);
    /* S lambda = J a0 + Jdot v ([F] eq 7 with f_c = 0) */
    for (int c = 0; c < C; c++) {
        const double *jc = w->J + (size_t)c * N, *jd = w->Jdot + (size_t)c * N;
        double acc = 0;
        for (int q = 0; q < N; q++) acc += jc[q] * a[q] + jd[q] * v[q];
        w->b[c] = acc;
    }
    if ((st = factor_schur(s, x, w))) return st;
    imp_lu_solve(C, w->S, w->piv, w->b);
    for (int c = 0; c < C; c++) {
        const double *mc = w->MinvJt + (size_t)c * N;
        for (int q = 0; q < N; q++) a[q] -= mc[q] * w->b[c];
    }
    if (lambda) memcpy(lambda, w->b, (size_t)C * sizeof(double));
    return IMP_OK;
}

int imp_csys_hamilton_rhs(const imp_csys *s, const double *z, double *zdot, imp_csys_work *w)
{
    int st = check_work(s, w);
    if (st) return st;
    int N = w->N, C = w->C;
    const double *x = z, *p = z + N;
    double *v = w->tmp2;
    imp_csys_mass_inv_mul(s, p, v);
    /* u = J grad H = (dH/dp, -dH/dx) = (v, -grad V) */
    memcpy(w->u, v, (size_t)N * sizeof(double));
    imp_csys_potential_grad(s, x, w->u + N);
    for (int q = 0; q < N; q++) w->u[N + q] = -w->u[N + q];
    if (C == 0) {
        memcpy(zdot, w->u, (size_t)2 * N * sizeof(double));
        return IMP_OK;
    }
    /* G columns: g_c = (DPhi_c^T, 0) and g_{C+c} = (dPhidot_c/dx^T, M^-1 DPhi_c^T).
     * G^T Jsym G (entries a_i.b_j - b_i.a_j over the x and p parts) has the
     * block form [[0, S], [-S, W]] with S = DPhi M^-1 DPhi^T and
     * W_ij = Jdot_i . M^-1 J_j - M^-1 J_i . Jdot_j, so (G^T Jsym G) mu = G^T u
     * needs only S: S mu2 = r1, mu1 = S^-1 (W mu2 - r2). */
    build_schur(s, x, w);
    imp_csys_jacobian_dot(s, v, w->Jdot);
    double *r1 = w->b, *r2 = w->b + C, *mu1 = w->mu, *mu2 = w->mu + C;
    for (int i = 0; i < C; i++) {
        const double *ji = w->J + (size_t)i * N, *jd = w->Jdot + (size_t)i * N,
                     *mi = w->MinvJt + (size_t)i * N;
        double a1 = 0, a2 = 0;
        for (int q = 0; q < N; q++) {
            a1 += ji[q] * w->u[q];
            a2 += jd[q] * w->u[q] + mi[q] * w->u[N + q];
        }
        r1[i] = a1;
        r2[i] = a2;
    }
    double *W = w->A; /* C x C */
    for (int i = 0; i < C; i++)
        for (int j = 0; j < C; j++) {
            const double *jdi = w->Jdot + (size_t)i * N, *mj = w->MinvJt + (size_t)j * N,
                         *mi = w->MinvJt + (size_t)i * N, *jdj = w->Jdot + (size_t)j * N;
            double acc = 0;
            for (int q = 0; q < N; q++) acc += jdi[q] * mj[q] - mi[q] * jdj[q];
            W[i * C + j] = acc;
        }
    if ((st = factor_schur(s, x, w))) return st;
    memcpy(mu2, r1, (size_t)C * sizeof(double));
    imp_lu_solve(C, w->S, w->piv, mu2);
    for (int i = 0; i < C; i++) {
        double acc = -r2[i];
        for (int j = 0; j < C; j++) acc += W[i * C + j] * mu2[j];
        mu1[i] = acc;
    }
    imp_lu_solve(C, w->S, w->piv, mu1);
    /* zdot = u - Jsym (G mu), Jsym (wa, wb) = (wb, -wa) */
    double *ga = w->tmp, *gb = w->tmp + N;
    memset(ga, 0, (size_t)2 * N * sizeof(double));
    for (int i = 0; i < C; i++) {
        const double *ji = w->J + (size_t)i * N, *jd = w->Jdot + (size_t)i * N,
                     *mi = w->MinvJt + (size_t)i * N;
        for (int q = 0; q < N; q++) {
            ga[q] += ji[q] * mu1[i] + jd[q] * mu2[i];
            gb[q] += mi[q] * mu2[i];
        }
    }
    for (int q = 0; q < N; q++) {
        zdot[q] = w->u[q] - gb[q];
        zdot[N + q] = w->u[N + q] + ga[q];
    }
    return IMP_OK;
}

/* o -= M^-1 J^T S^-1 (R y), R = J or M^-1 J^T rows (R y = J M^-1 y), with
 * S factored (build_schur, factor_schur); o may alias y. */
static void schur_correct(imp_csys_work *w, const double *R, const double *y, double *o)
{
    int N = w->N, C = w->C;
    for (int c = 0; c < C; c++) {
        const double *rc = R + (size_t)c * N;
        double acc = 0;
        for (int q = 0; q < N; q++) acc += rc[q] * y[q];
        w->b[c] = acc;
    }
    imp_lu_solve(C, w->S, w->piv, w->b);
    for (int c = 0; c < C; c++) {
        const double *mc = w->MinvJt + (size_t)c * N;
        for (int q = 0; q < N; q++) o[q] -= mc[q] * w->b[c];
    }
}

static double max_abs(const double *a, int n)
{
    double m = 0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
    return m;
}

int imp_csys_project(const imp_csys *s, double *x, double *v, const imp_csys_project_opts *o,
                     imp_csys_work *w)
{
    int st = check_work(s, w);
    if (st) return st;
    int N = w->N, C = w->C;
    if ((st = imp_check_finite(x, (size_t)N, "x"))) return st;
    if (v && (st = imp_check_finite(v, (size_t)N, "v"))) return st;
    if (C == 0) return IMP_OK;
    double tol = o && o->tol > 0 ? o->tol : 1e-12;
    int max_iter = o && o->max_iter > 0 ? o->max_iter : 100;
    double phi[IMP_CSYS_MAX_ROWS], phi_try[IMP_CSYS_MAX_ROWS];
    imp_csys_phi(s, x, phi);
    double err = max_abs(phi, C);
    int it = 0;
    while (err > tol) {
        if (it++ >= max_iter) {
            int worst = 0;
            for (int c = 1; c < C; c++) if (fabs(phi[c]) > fabs(phi[worst])) worst = c;
            const imp_ccon *cc = &s->cons[s->rows[worst].con];
            return imp_fail(IMP_ERR_NUMERIC,
                            "projection: constraints cannot be met (after %d Gauss-Newton steps "
                            "|Phi| = %.3g, worst '%s'%s)",
                            max_iter, err, cc->label, cc->line ? " in the system file" : "");
        }
        /* dx = -M^-1 J^T S^-1 Phi: the smallest step in the mass metric that
         * zeroes the linearised constraints */
        build_schur(s, x, w);
        if ((st = factor_schur(s, x, w))) return st;
        memcpy(w->b, phi, (size_t)C * sizeof(double));
        imp_lu_solve(C, w->S, w->piv, w->b);
        memset(w->tmp, 0, (size_t)N * sizeof(double));
        for (int c = 0; c < C; c++) {
            const double *mc = w->MinvJt + (size_t)c * N;
            for (int q = 0; q < N; q++) w->tmp[q] -= mc[q] * w->b[c];
        }
        /* backtrack so that |Phi| decreases (Gauss-Newton can overshoot far
         * from the manifold) */
        double alpha = 1.0, err_try = INFINITY;
        for (int ls = 0; ls < 30; ls++) {
            for (int q = 0; q < N; q++) w->x_try[q] = x[q] + alpha * w->tmp[q];
            imp_csys_phi(s, w->x_try, phi_try);
            err_try = max_abs(phi_try, C);
            if (err_try < err || err_try <= tol) break;
            alpha *= 0.5;
        }
        if (!(err_try < err) && !(err_try <= tol)) {
            return imp_fail(IMP_ERR_NUMERIC,
                            "projection: constraints cannot be met (Gauss-Newton stalled at |Phi| = %.3g)",
                            err);
        }
        memcpy(x, w->x_try, (size_t)N * sizeof(double));
        memcpy(phi, phi_try, (size_t)C * sizeof(double));
        err = err_try;
    }
    build_schur(s, x, w);
    if ((st = factor_schur(s, x, w))) return st;
    /* v -= M^-1 J^T S^-1 J v: the mass-metric projection onto the tangent space */
    if (v) schur_correct(w, w->J, v, v);
    return IMP_OK;
}

/* Psi = (Phi, Phidot) at (x, v) into psi (2C); returns RMS(Psi). */
static double state_residual(const imp_csys *s, const double *x, const double *v, int C, double *psi)
{
    imp_csys_phi(s, x, psi);
    imp_csys_phidot(s, x, v, psi + C);
    double ss = 0;
    for (int i = 0; i < 2 * C; i++) ss += psi[i] * psi[i];
    return sqrt(ss / (2 * C));
}

int imp_csys_project_state(const imp_csys *s, double *x, double *v, const imp_csys_project_opts *o,
                           imp_csys_work *w)
{
    int st = check_work(s, w);
    if (st) return st;
    if (!x || !v) return imp_fail(IMP_ERR_INVALID, "project state: NULL x or v");
    int N = w->N, C = w->C, C2 = 2 * C;
    if ((st = imp_check_finite(x, (size_t)N, "x"))) return st;
    if ((st = imp_check_finite(v, (size_t)N, "v"))) return st;
    if (C == 0) return IMP_OK;
    double tol = o && o->tol > 0 ? o->tol : 1e-12;
    int max_iter = o && o->max_iter > 0 ? o->max_iter : 500;
    double psi[2 * IMP_CSYS_MAX_ROWS];
    double res = state_residual(s, x, v, C, psi);
    for (int it = 0; res > tol; it++) {
        if (it >= max_iter || !isfinite(res))
            return imp_fail(IMP_ERR_NUMERIC,
                            "state projection: constraints cannot be met (after %d Newton steps "
                            "RMS(Phi, Phidot) = %.3g)", it, res);
        /* J = [[A, 0], [B, A]] with A = DPhi, B = dPhidot/dx; J J^T in blocks:
         * [[A A^T, A B^T], [B A^T, B B^T + A A^T]] */
        const double *A = w->J, *B = w->Jdot;
        imp_csys_jacobian(s, x, w->J);
        imp_csys_jacobian_dot(s, v, w->Jdot);
        for (int a = 0; a < C; a++)
            for (int b = 0; b < C; b++) {
                const double *Aa = A + (size_t)a * N, *Ab = A + (size_t)b * N, *Ba = B + (size_t)a * N,
                             *Bb = B + (size_t)b * N;
                double aa = 0, ab = 0, bb = 0;
                for (int q = 0; q < N; q++) {
                    aa += Aa[q] * Ab[q];
                    ab += Aa[q] * Bb[q];
                    bb += Ba[q] * Bb[q];
                }
                w->A[a * C2 + b] = aa;
                w->A[a * C2 + C + b] = ab;
                w->A[(C + b) * C2 + a] = ab;
                w->A[(C + a) * C2 + C + b] = bb + aa;
            }
        if (imp_lu_factor(C2, w->A, w->piv, 1e-13))
            return imp_fail(IMP_ERR_NUMERIC,
                            "state projection: constraint Jacobian is rank deficient (redundant constraints)");
        for (int i = 0; i < C2; i++) w->b[i] = -psi[i];
        imp_lu_solve(C2, w->A, w->piv, w->b);
        /* dx = A^T y1 + B^T y2, dv = A^T y2; clamp to +-RMS(z)/2 */
        double *dx = w->tmp, *dv = w->tmp + N, zz = 0;
        for (int q = 0; q < N; q++) zz += x[q] * x[q] + v[q] * v[q];
        double lim = 0.5 * sqrt(zz / (2 * N));
        memset(dx, 0, 2 * (size_t)N * sizeof(double));
        for (int c = 0; c < C; c++) {
            const double *Ac = A + (size_t)c * N, *Bc = B + (size_t)c * N;
            double y1 = w->b[c], y2 = w->b[C + c];
            for (int q = 0; q < N; q++) {
                dx[q] += Ac[q] * y1 + Bc[q] * y2;
                dv[q] += Ac[q] * y2;
            }
        }
        for (int q = 0; q < N; q++) {
            x[q] += fmin(lim, fmax(-lim, dx[q]));
            v[q] += fmin(lim, fmax(-lim, dv[q]));
        }
        res = state_residual(s, x, v, C, psi);
    }
    return IMP_OK;
}

int imp_csys_constrained_minv(const imp_csys *s, const double *x, const double *in, int ncol, double *out,
                              imp_csys_work *w)
{
    int st = check_work(s, w);
    if (st) return st;
    if (!x || !in || !out || ncol < 0) return imp_fail(IMP_ERR_INVALID, "constrained M^-1: NULL or ncol < 0");
    int N = w->N, C = w->C;
    if ((st = imp_check_finite(x, (size_t)N, "x"))) return st;
    if (C > 0) {
        build_schur(s, x, w);
        if ((st = factor_schur(s, x, w))) return st;
    }
    for (int k = 0; k < ncol; k++) {
        const double *y = in + (size_t)k * N;
        double *o = out + (size_t)k * N;
        /* P y = M^-1 y - M^-1 J^T S^-1 J M^-1 y (docs/derivations/contact.md eq 17):
         * with M^-1 J^T = MinvJt^T, J M^-1 y = MinvJt y (M^-1 symmetric) */
        imp_csys_mass_inv_mul(s, y, o);
        if (C > 0) schur_correct(w, w->MinvJt, y, o);
    }
    return IMP_OK;
}
