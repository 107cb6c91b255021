/* Stage 3, the solver: the active contacts' impulses together, Newton
 * restitution and Coulomb friction per contact, and the reverse pass by
 * implicit differentiation on the identified branches
 * (docs/derivations/contact.md sec 3-4, eqs 7-15).
 *
 * Forward: projected Gauss-Seidel over contact blocks gives a warm start;
 * its branches (separate / stick / slide with a direction) are solved
 * exactly (Newton on the branch system, eq 10), verified against the
 * complementarity conditions (eq 8-9), and the violated branches flipped
 * until every contact satisfies its law (a principal-pivoting loop). */
#include "contact/contact_internal.h"
#include "core/dense.h"

#include <float.h>
#include <math.h>
#include <string.h>

void imp_contact_solve_opts_default(imp_contact_solve_opts *o)
{
    o->tol = 1e-10;
    o->max_sweeps = 200;
    o->max_pivots = 0; /* 4 n + 10 */
    o->regularization = 1e-9;
    o->lambda0 = NULL;
}

size_t imp_contact_solve_work_doubles(int n, int dim)
{
    size_t R = (size_t)n * dim;
    return 2 * R * R + 7 * R + 8;
}

size_t imp_contact_solve_work_ints(int n, int dim) { return (size_t)n * dim + n + 1; }

typedef struct solver {
    int n, dim, R;
    int law, eq; /* IMP_CONTACT_LAW_*; eq: the normal row is an equality (PAPER, HALFSTEP) */
    const double *A, *um, *ur, *e, *mu;
    double eps, *Ar; /* A + eps I */
    double *J;       /* the branch system's Jacobian (and its LU) */
    double *u, *F, *dl, *beta, *lsave;
    int *piv;
    double vscale, lscale;
} solver;

/* u = u- + (A + eps I) lambda (eq 7) */
static void post_velocity(const solver *s, const double *lambda, double *u)
{
    for (int k = 0; k < s->R; k++) {
        double acc = s->um[k];
        const double *row = s->Ar + (size_t)k * s->R;
        for (int j = 0; j < s->R; j++) acc += row[j] * lambda[j];
        u[k] = acc;
    }
}

/* One projected Gauss-Seidel sweep over the contact blocks; returns the
 * largest change of an impulse times its diagonal compliance. */
static double pgs_sweep(const solver *s, double *lambda)
{
    int d = s->dim, R = s->R;
    double change = 0.0;
    for (int i = 0; i < s->n; i++) {
        int r0 = i * d;
        /* normal */
        double un = s->um[r0];
        for (int j = 0; j < R; j++) un += s->Ar[(size_t)r0 * R + j] * lambda[j];
        double Ann = s->Ar[(size_t)r0 * R + r0], ln = lambda[r0];
        double ln_new = ln - (un - s->beta[i]) / Ann;
        if (!s->eq) ln_new = fmax(0.0, ln_new);
        change = fmax(change, fabs(ln_new - ln) * Ann);
        lambda[r0] = ln_new;
        /* tangents: a Jacobi step within the block, then the projection on the disk */
        double lt[2], nrm = 0.0;
        for (int a = 1; a < d; a++) {
            int r = r0 + a;
            double ut = s->um[r];
            for (int j = 0; j < R; j++) ut += s->Ar[(size_t)r * R + j] * lambda[j];
            lt[a - 1] = lambda[r] - ut / s->Ar[(size_t)r * R + r];
            nrm += lt[a - 1] * lt[a - 1];
        }
        nrm = sqrt(nrm);
        double cap = s->mu[i] * fmax(ln_new, 0.0), f = nrm > cap ? (nrm > 0 ? cap / nrm : 0.0) : 1.0;
        for (int a = 1; a < d; a++) {
            int r = r0 + a;
            double v = f * lt[a - 1];
            change = fmax(change, fabs(v - lambda[r]) * s->Ar[(size_t)r * R + r]);
            lambda[r] = v;
        }
    }
    return change;
}

/* Branches from an approximate solution. */
static void identify(const solver *s, const double *lambda, const double *u, imp_contact_solution *sol)
{
    int d = s->dim;
    for (int i = 0; i < s->n; i++) {
        int r0 = i * d;
        double ln = lambda[r0], lt = 0.0, ut = 0.0;
        for (int a = 1; a < d; a++) lt += lambda[r0 + a] * lambda[r0 + a], ut += u[r0 + a] * u[r0 + a];
        lt = sqrt(lt), ut = sqrt(ut);
        sol->slide[i][0] = sol->slide[i][1] = 0.0;
        if (ln <= 1e-7 * s->lscale) {
            sol->branch[i] = IMP_CONTACT_SEPARATE;
        } else if (s->mu[i] > 0.0 && lt < s->mu[i] * ln * (1.0 - 1e-7)) {
            sol->branch[i] = IMP_CONTACT_STICK;
        } else {
            sol->branch[i] = IMP_CONTACT_SLIDE;
            for (int a = 1; a < d; a++)
                sol->slide[i][a - 1] = ut > 1e-9 * s->vscale ? u[r0 + a] / ut : lt > 0 ? -lambda[r0 + a] / lt : 0.0;
        }
    }
}

/* The branch system F(lambda) = 0 (eq 10) and its Jacobian dF/dlambda
 * (rows x rows, into s->J). In 3-D the sliding direction follows u_t
 * (updated in sol->slide); in 2-D it is the branch's fixed sign. */
static void branch_system(solver *s, const double *lambda, imp_contact_solution *sol, int with_jacobian)
{
    int d = s->dim, R = s->R;
    post_velocity(s, lambda, s->u);
    if (with_jacobian) memset(s->J, 0, (size_t)R * R * sizeof(double));
    for (int i = 0; i < s->n; i++) {
        int r0 = i * d, b = sol->branch[i];
        if (b == IMP_CONTACT_SEPARATE && !s->eq) {
            for (int a = 0; a < d; a++) {
                s->F[r0 + a] = lambda[r0 + a];
                if (with_jacobian) s->J[(size_t)(r0 + a) * R + r0 + a] = 1.0;
            }
            continue;
        }
        s->F[r0] = s->u[r0] - s->beta[i];
        if (with_jacobian) memcpy(s->J + (size_t)r0 * R, s->Ar + (size_t)r0 * R, (size_t)R * sizeof(double));
        if (b == IMP_CONTACT_SEPARATE) {
            /* an equality law pulling (lambda_n <= 0): no friction */
            for (int a = 1; a < d; a++) {
                s->F[r0 + a] = lambda[r0 + a];
                if (with_jacobian) s->J[(size_t)(r0 + a) * R + r0 + a] = 1.0;
            }
            continue;
        }
        if (b == IMP_CONTACT_STICK) {
            for (int a = 1; a < d; a++) {
                s->F[r0 + a] = s->u[r0 + a];
                if (with_jacobian)
                    memcpy(s->J + (size_t)(r0 + a) * R, s->Ar + (size_t)(r0 + a) * R, (size_t)R * sizeof(double));
            }
            continue;
        }
        /* slide: lambda_t + mu lambda_n s(u_t) = 0 */
        double ln = lambda[r0], mu = s->mu[i], K[4] = {0, 0, 0, 0};
        if (d == 3) {
            double ut[2] = {s->u[r0 + 1], s->u[r0 + 2]}, rho = sqrt(ut[0] * ut[0] + ut[1] * ut[1]);
            if (rho > 0.0) {
                sol->slide[i][0] = ut[0] / rho, sol->slide[i][1] = ut[1] / rho;
                /* K = mu lambda_n (I - s s^T) / rho */
                for (int a = 0; a < 2; a++)
                    for (int c = 0; c < 2; c++)
                        K[2 * a + c] = mu * ln * ((a == c) - sol->slide[i][a] * sol->slide[i][c]) / rho;
            }
        }
        for (int a = 1; a < d; a++) {
            int r = r0 + a;
            s->F[r] = lambda[r] + mu * ln * sol->slide[i][a - 1];
            if (!with_jacobian) continue;
            double *row = s->J + (size_t)r * R;
            row[r] += 1.0;
            row[r0] += mu * sol->slide[i][a - 1];
            if (d == 3)
                for (int c = 0; c < 2; c++) {
                    double k = K[2 * (a - 1) + c];
                    if (k != 0.0)
                        for (int j = 0; j < R; j++) row[j] += k * s->Ar[(size_t)(r0 + 1 + c) * R + j];
                }
        }
    }
}

static double max_abs(const double *x, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
    return m;
}

/* Newton on the branch system from lambda; returns 0 when |F| converged. */
static int branch_solve(solver *s, double *lambda, imp_contact_solution *sol, double tol, double *residual)
{
    int R = s->R;
    for (int it = 0; it < 30; it++) {
        branch_system(s, lambda, sol, 1);
        double r = 0.0;
        for (int i = 0; i < s->n; i++)
            for (int a = 0; a < s->dim; a++) {
                int k = i * s->dim + a;
                r = fmax(r, fabs(s->F[k]) / ((sol->branch[i] == IMP_CONTACT_SEPARATE && (a > 0 || !s->eq)) ||
                                                     (a > 0 && sol->branch[i] == IMP_CONTACT_SLIDE)
                                                 ? s->lscale
                                                 : s->vscale));
            }
        *residual = r;
        if (r <= tol * 1e-2 && it > 0) return 0;
        if (imp_lu_factor(R, s->J, s->piv, 1e-14)) return -1;
        for (int k = 0; k < R; k++) s->dl[k] = -s->F[k];
        imp_lu_solve(R, s->J, s->piv, s->dl);
        for (int k = 0; k < R; k++) lambda[k] += s->dl[k];
        if (!isfinite(max_abs(lambda, R))) return -1;
    }
    branch_system(s, lambda, sol, 0);
    *residual = 0.0;
    for (int k = 0; k < R; k++) *residual = fmax(*residual, fabs(s->F[k]) / fmin(s->vscale, s->lscale));
    return *residual <= tol ? 0 : -1;
}

/* Check the law at a solution of the branch system; flip the violated
 * branches (all, or only the worst when one_only). Returns the number of
 * violations. */
static int verify_and_flip(const solver *s, const double *lambda, imp_contact_solution *sol, double tol,
                           int one_only)
{
    int d = s->dim, nviol = 0, worst = -1, worst_to = 0;
    double worst_v = 0.0, worst_dir[2] = {0, 0};
    for (int i = 0; i < s->n; i++) {
        int r0 = i * d, to = -1;
        double ln = lambda[r0], viol = 0.0, lt = 0.0, dir[2] = {0, 0};
        for (int a = 1; a < d; a++) lt += lambda[r0 + a] * lambda[r0 + a];
        lt = sqrt(lt);
        switch (sol->branch[i]) {
        case IMP_CONTACT_SEPARATE:
            if (s->eq) {
                /* the normal row holds; pushing (lambda_n > 0) takes friction */
                if (s->mu[i] > 0.0 && d > 1 && ln > tol * s->lscale)
                    viol = ln / s->lscale, to = IMP_CONTACT_STICK;
            } else if (s->u[r0] - s->beta[i] < -tol * s->vscale) {
                viol = (s->beta[i] - s->u[r0]) / s->vscale;
                to = s->mu[i] > 0.0 ? IMP_CONTACT_STICK : IMP_CONTACT_SLIDE;
            }
            break;
        case IMP_CONTACT_STICK:
            if (ln < -tol * s->lscale) {
                viol = -ln / s->lscale, to = IMP_CONTACT_SEPARATE;
            } else if (lt > s->mu[i] * ln + tol * s->lscale) {
                viol = (lt - s->mu[i] * ln) / s->lscale, to = IMP_CONTACT_SLIDE;
                for (int a = 1; a < d; a++) dir[a - 1] = -lambda[r0 + a] / lt;
            }
            break;
        default: /* slide */
            if (ln < -tol * s->lscale) {
                viol = -ln / s->lscale, to = IMP_CONTACT_SEPARATE;
            } else if (s->mu[i] > 0.0) {
                double along = 0.0;
                for (int a = 1; a < d; a++) along += sol->slide[i][a - 1] * s->u[r0 + a];
                if (along < -tol * s->vscale || (d == 3 && along <= 0.0)) {
                    viol = -along / s->vscale, to = IMP_CONTACT_STICK;
                }
            }
        }
        if (to < 0) continue;
        nviol++;
        if (!one_only) {
            sol->branch[i] = to;
            if (to == IMP_CONTACT_SLIDE) sol->slide[i][0] = dir[0], sol->slide[i][1] = dir[1];
        } else if (worst < 0 || viol > worst_v) {
            worst = i, worst_v = viol, worst_to = to, worst_dir[0] = dir[0], worst_dir[1] = dir[1];
        }
    }
    if (one_only && worst >= 0) {
        sol->branch[worst] = worst_to;
        if (worst_to == IMP_CONTACT_SLIDE) sol->slide[worst][0] = worst_dir[0], sol->slide[worst][1] = worst_dir[1];
    }
    return nviol;
}


/* The Alart-Curnier function (eq 16): per contact, with rho = 1 / (A_r)_nn,
 *   y_n = lambda_n - rho (u_n - beta),   y_t = lambda_t - rho u_t,
 *   G_n = lambda_n - max(0, y_n),        G_t = lambda_t - proj_{|x| <= mu max(0, y_n)}(y_t),
 * zero exactly at the solutions of eqs 8-9. Its cases are the branches:
 * y_n <= 0 separate, |y_t| <= mu y_n stick, otherwise slide. Writes G to
 * s->F, the generalized Jacobian to s->J (if with_jacobian) and the
 * branches to sol; returns 1/2 |G|^2. */
static double ac_function(solver *s, const double *lambda, imp_contact_solution *sol, int with_jacobian)
{
    int d = s->dim, R = s->R;
    post_velocity(s, lambda, s->u);
    if (with_jacobian) memset(s->J, 0, (size_t)R * R * sizeof(double));
    double phi = 0.0;
    for (int i = 0; i < s->n; i++) {
        int r0 = i * d;
        double rho = 1.0 / s->Ar[(size_t)r0 * R + r0], mu = s->mu[i];
        double yn = lambda[r0] - rho * (s->u[r0] - s->beta[i]);
        if (yn <= 0.0) {
            sol->branch[i] = IMP_CONTACT_SEPARATE;
            for (int a = 0; a < d; a++) {
                s->F[r0 + a] = lambda[r0 + a];
                if (with_jacobian) s->J[(size_t)(r0 + a) * R + r0 + a] = 1.0;
            }
            if (s->eq) { /* the normal row is an equality on every branch */
                s->F[r0] = rho * (s->u[r0] - s->beta[i]);
                if (with_jacobian)
                    for (int j = 0; j < R; j++) s->J[(size_t)r0 * R + j] = rho * s->Ar[(size_t)r0 * R + j];
            }
        } else {
            s->F[r0] = rho * (s->u[r0] - s->beta[i]);
            if (with_jacobian)
                for (int j = 0; j < R; j++) s->J[(size_t)r0 * R + j] = rho * s->Ar[(size_t)r0 * R + j];
            double yt[2] = {0, 0}, ny = 0.0, cap = mu * yn;
            for (int a = 1; a < d; a++) {
                yt[a - 1] = lambda[r0 + a] - rho * s->u[r0 + a];
                ny += yt[a - 1] * yt[a - 1];
            }
            ny = sqrt(ny);
            if (ny <= cap) {
                sol->branch[i] = IMP_CONTACT_STICK;
                for (int a = 1; a < d; a++) {
                    int r = r0 + a;
                    s->F[r] = rho * s->u[r];
                    if (with_jacobian)
                        for (int j = 0; j < R; j++) s->J[(size_t)r * R + j] = rho * s->Ar[(size_t)r * R + j];
                }
            } else {
                sol->branch[i] = IMP_CONTACT_SLIDE;
                double yh[2] = {yt[0] / ny, yt[1] / ny};
                /* the sliding direction of u_t is -yh at the solution */
                sol->slide[i][0] = -yh[0], sol->slide[i][1] = -yh[1];
                for (int a = 1; a < d; a++) {
                    int r = r0 + a;
                    s->F[r] = lambda[r] - cap * yh[a - 1];
                    if (!with_jacobian) continue;
                    double *row = s->J + (size_t)r * R;
                    /* dG_t = e_t - yh mu dy_n - cap (I - yh yh^T)/|y_t| dy_t,
                       dy_n = e_n - rho A_n, dy_t = e_t - rho A_t */
                    row[r] += 1.0;
                    double cn = mu * yh[a - 1];
                    row[r0] -= cn;
                    for (int j = 0; j < R; j++) row[j] += cn * rho * s->Ar[(size_t)r0 * R + j];
                    for (int c = 1; c < d; c++) {
                        double P = cap * ((a == c) - yh[a - 1] * yh[c - 1]) / ny;
                        if (P == 0.0) continue;
                        row[r0 + c] -= P;
                        for (int j = 0; j < R; j++) row[j] += P * rho * s->Ar[(size_t)(r0 + c) * R + j];
                    }
                }
            }
        }
        for (int a = 0; a < d; a++) phi += 0.5 * s->F[r0 + a] * s->F[r0 + a];
    }
    return phi;
}

/* Generalized Newton on the Alart-Curnier function with a backtracking
 * line search on 1/2 |G|^2; returns 0 when |G| <= tol lscale. */
static int ac_newton(solver *s, double *lambda, imp_contact_solution *sol, double tol, int max_iter, int *iters)
{
    int R = s->R;
    double *trial = s->lsave + R; /* R more doubles of work */
    double phi = ac_function(s, lambda, sol, 1);
    for (int it = 0; it < max_iter; it++) {
        *iters = it;
        if (sqrt(2.0 * phi) <= tol * s->lscale) return 0;
        if (imp_lu_factor(R, s->J, s->piv, 1e-15)) return -1;
        for (int k = 0; k < R; k++) s->dl[k] = -s->F[k];
        imp_lu_solve(R, s->J, s->piv, s->dl);
        double alpha = 1.0, phi_new = phi;
        int accepted = 0;
        for (int ls = 0; ls < 30; ls++, alpha *= 0.5) {
            for (int k = 0; k < R; k++) trial[k] = lambda[k] + alpha * s->dl[k];
            phi_new = ac_function(s, trial, sol, 0);
            if (phi_new <= (1.0 - 1e-4 * alpha) * phi) {
                accepted = 1;
                break;
            }
        }
        if (!accepted) return -1;
        memcpy(lambda, trial, (size_t)R * sizeof(double));
        phi = ac_function(s, lambda, sol, 1);
    }
    *iters = max_iter;
    return sqrt(2.0 * phi) <= tol * s->lscale ? 0 : -1;
}

static int check_inputs(const double *A, const double *u_minus, const double *u_ref, const double *e,
                        const double *mu, int n, int dim, int law)
{
    if (dim < 1 || dim > 3)
        return imp_fail(IMP_ERR_INVALID, "contact solve: dim: %d rows per contact is not 1, 2 or 3", dim);
    if (law != IMP_CONTACT_LAW_NEWTON && law != IMP_CONTACT_LAW_PAPER && law != IMP_CONTACT_LAW_HALFSTEP)
        return imp_fail(IMP_ERR_INVALID, "contact solve: law: %d is not an IMP_CONTACT_LAW_*", law);
    if (n < 0 || n > IMP_MAX_CONTACTS)
        return imp_fail(IMP_ERR_INVALID, "contact solve: n: %d contacts is not in [0, %d]", n, IMP_MAX_CONTACTS);
    int R = n * dim;
    for (int i = 0; i < n; i++) {
        if (!(e[i] >= 0.0 && e[i] <= 1.0))
            return imp_fail(IMP_ERR_INVALID, "contact solve: e[%d]: %g is not in [0, 1]", i, e[i]);
        if (!(mu[i] >= 0.0) || !isfinite(mu[i]))
            return imp_fail(IMP_ERR_INVALID, "contact solve: mu[%d]: %g is not >= 0", i, mu[i]);
    }
    int st = imp_check_finite(u_minus, (size_t)R, "contact solve: u_minus");
    if (!st && u_ref) st = imp_check_finite(u_ref, (size_t)R, "contact solve: u_ref");
    if (!st) st = imp_check_finite(A, (size_t)R * R, "contact solve: A");
    if (st) return st;
    /* a normal row must move; a tangent row may not (a contact point the
     * joints hold tangentially, e.g. a pendulum bob at the bottom of its
     * swing hit head-on): its friction impulse is then fixed by the
     * regularization (checked in imp_contact_solve_forward) */
    double amax = 0.0;
    for (int k = 0; k < R; k++) amax = fmax(amax, fabs(A[(size_t)k * R + k]));
    for (int k = 0; k < R; k++) {
        double a = A[(size_t)k * R + k];
        if (k % dim == 0 ? !(a > 0.0) : !(a >= -1e-12 * amax))
            return imp_fail(IMP_ERR_INVALID,
                            "contact solve: A[%d][%d]: compliance %g is not positive (contact %d cannot move%s)", k, k,
                            a, k / dim, k % dim == 0 ? " along its normal" : "");
    }
    return IMP_OK;
}

static void set_eps(solver *s, double eps)
{
    int R = s->R;
    s->eps = eps;
    memcpy(s->Ar, s->A, (size_t)R * R * sizeof(double));
    for (int k = 0; k < R; k++) s->Ar[(size_t)k * R + k] += eps;
}

/* Large impulses (near a jam) set the scales of the tolerances. */
static void rescale(solver *s, const double *lambda, double tr_over_R)
{
    double lm = max_abs(lambda, s->R);
    if (lm > s->lscale) {
        s->lscale = lm;
        s->vscale = fmax(s->vscale, lm * tr_over_R);
    }
}

/* The target beta of contact i's normal row (F_n = u+_n - beta) under law,
 * from its pre-impact normal velocity un, the restitution reference ur and
 * e; d: d beta / d(un, ur, e). */
static double law_target(int law, double e, double un, double ur, double d[3])
{
    d[0] = d[1] = d[2] = 0.0;
    switch (law) {
    case IMP_CONTACT_LAW_PAPER: /* u+_n = -e ur */
        d[1] = -e, d[2] = -ur;
        return -e * ur;
    case IMP_CONTACT_LAW_HALFSTEP: { /* u+_n = max(un - (1 + e) ur, 0) */
        double x = un - (1.0 + e) * ur;
        if (x <= 0.0) return 0.0;
        d[0] = 1.0, d[1] = -(1.0 + e), d[2] = -ur;
        return x;
    }
    default: /* Newton, eq 8: u+_n >= e max(-ur, 0) */
        if (ur < 0.0) d[1] = -e, d[2] = -ur;
        return e * fmax(-ur, 0.0);
    }
}

static void solver_setup(solver *s, const double *A, const double *u_minus, const double *u_ref, const double *e,
                         const double *mu, int n, int dim, int law, double eps, double *work, int *iwork)
{
    int R = n * dim;
    s->n = n, s->dim = dim, s->R = R;
    s->law = law, s->eq = law != IMP_CONTACT_LAW_NEWTON;
    s->A = A, s->um = u_minus, s->ur = u_ref ? u_ref : u_minus, s->e = e, s->mu = mu;
    s->Ar = work;
    s->J = s->Ar + (size_t)R * R;
    s->u = s->J + (size_t)R * R;
    s->F = s->u + R;
    s->dl = s->F + R;
    s->beta = s->dl + R;
    s->lsave = s->beta + R; /* 2 R: the saved iterate and the line search's trial */
    s->piv = iwork;
    double tr = 0.0;
    for (int k = 0; k < R; k++) tr += A[(size_t)k * R + k];
    set_eps(s, eps);
    s->vscale = 0.0;
    for (int i = 0; i < n; i++) {
        double d[3];
        s->beta[i] = law_target(law, e[i], u_minus[i * dim], s->ur[i * dim], d); /* eq 8 */
        s->vscale = fmax(s->vscale, fabs(s->beta[i]));
    }
    s->vscale = fmax(fmax(s->vscale, max_abs(u_minus, R)), 1e-300);
    s->lscale = R > 0 ? s->vscale / (tr / R) : 1.0;
}

/* One contact without friction (one row) in closed form: lambda = (beta -
 * u-) / (A + eps), clamped at 0 under Newton's law; the branches as
 * identify() would name them (SEPARATE at lambda <= 0, else SLIDE: a
 * frictionless contact). */
static int solve_one_row(imp_contact_solution *sol, double A, double um, double ur, double e, int law, double eps,
                         double regularization)
{
    double d[3], beta = law_target(law, e, um, ur, d), Ar = A + eps, lambda = (beta - um) / Ar;
    if (law == IMP_CONTACT_LAW_NEWTON) lambda = fmax(lambda, 0.0);
    sol->n = 1, sol->dim = 1, sol->law = law, sol->eps = eps, sol->regularization = regularization;
    sol->lambda[0] = lambda;
    sol->u_plus[0] = um + Ar * lambda;
    sol->branch[0] = lambda > 0.0 ? IMP_CONTACT_SLIDE : IMP_CONTACT_SEPARATE;
    sol->slide[0][0] = sol->slide[0][1] = 0.0;
    sol->sweeps = sol->pivots = sol->fallback = 0;
    sol->residual = 0.0;
    return IMP_OK;
}

/* The last check, on the velocity scale of the inputs: the law of every
 * normal row (eq 8, or the equality laws of sec 11) and no slip where a
 * contact sticks, at u+ = u- + (A + eps I) lambda. rescale() widens the
 * solver's tolerances with the impulses, so near a jam (A singular, the
 * law unsatisfiable without regularization) the iteration can "converge"
 * to impulses of 1e10 whose u+ misses the law by half the velocities; that
 * is an error, not a solution. Rounding in A lambda is allowed for. */
static int law_holds(const solver *s, const imp_contact_solution *sol, double vscale0, double tol)
{
    int n = s->n, d = s->dim, R = s->R;
    double amax = 0.0, lmax = max_abs(sol->lambda, R);
    for (int k = 0; k < R * R; k++) amax = fmax(amax, fabs(s->Ar[k]));
    double tv = fmax(1e4 * tol * vscale0, 1e3 * DBL_EPSILON * amax * lmax * R);
    for (int i = 0; i < n; i++) {
        int r0 = i * d;
        double un = sol->u_plus[r0];
        double miss = s->eq || sol->branch[i] != IMP_CONTACT_SEPARATE ? fabs(un - s->beta[i])
                                                                       : fmax(s->beta[i] - un, 0.0);
        const char *what = "normal velocity";
        if (miss <= tv && sol->branch[i] == IMP_CONTACT_STICK) {
            double ut = 0.0;
            for (int a = 1; a < d; a++) ut += sol->u_plus[r0 + a] * sol->u_plus[r0 + a];
            miss = sqrt(ut), what = "slip of a sticking contact";
        }
        if (!(miss <= tv))
            return imp_fail(IMP_ERR_NUMERIC,
                            "contact solve: contact %d: %s misses the law by %g (velocity scale %g) with impulses "
                            "up to %g: the contacts jam (A is singular and the law has no bounded solution; a "
                            "regularization > 0 gives the compliant limit)",
                            i, what, miss, vscale0, lmax);
    }
    return IMP_OK;
}

int imp_contact_solve_forward(imp_contact_solution *sol, const double *A, const double *u_minus, const double *e,
                              const double *mu, int n, int dim, const imp_contact_solve_opts *o, double *work,
                              int *iwork)
{
    return imp_contact_solve_law_forward(sol, A, u_minus, NULL, e, mu, n, dim, IMP_CONTACT_LAW_NEWTON, o, work,
                                         iwork);
}

int imp_contact_solve_law_forward(imp_contact_solution *sol, const double *A, const double *u_minus,
                                  const double *u_ref, const double *e, const double *mu, int n, int dim, int law,
                                  const imp_contact_solve_opts *o, double *work, int *iwork)
{
    imp_contact_solve_opts def;
    if (!o) {
        imp_contact_solve_opts_default(&def);
        o = &def;
    }
    int st = check_inputs(A, u_minus, u_ref, e, mu, n, dim, law);
    if (st) return st;
    if (!(o->tol > 0.0) || !(o->regularization >= 0.0))
        return imp_fail(IMP_ERR_INVALID, "contact solve: opts: tol %g must be > 0, regularization %g >= 0", o->tol,
                        o->regularization);
    /* eps: eq 7 */
    int R = n * dim;
    double tr_R = 0.0;
    for (int k = 0; k < R; k++) tr_R += A[(size_t)k * R + k];
    tr_R /= R > 0 ? R : 1;
    double eps = o->regularization * tr_R;
    for (int k = 0; k < R; k++)
        if (!(A[(size_t)k * R + k] + eps > 0.0))
            return imp_fail(IMP_ERR_INVALID,
                            "contact solve: A[%d][%d]: compliance %g: contact %d cannot move along tangent %d and the "
                            "regularization is 0",
                            k, k, A[(size_t)k * R + k], k / dim, k % dim);
    if (n == 1 && dim == 1) return solve_one_row(sol, A[0], u_minus[0], u_ref ? u_ref[0] : u_minus[0], e[0], law,
                                                 eps, o->regularization);
    solver s;
    solver_setup(&s, A, u_minus, u_ref, e, mu, n, dim, law, eps, work, iwork);
    double vscale0 = s.vscale; /* before rescale() lets large impulses widen the tolerances */
    memset(sol, 0, sizeof *sol);
    sol->n = n, sol->dim = dim, sol->law = law, sol->eps = s.eps, sol->regularization = o->regularization;
    double *lambda = sol->lambda;
    if (o->lambda0) {
        if ((st = imp_check_finite(o->lambda0, (size_t)R, "contact solve: opts: lambda0"))) return st;
        memcpy(lambda, o->lambda0, (size_t)R * sizeof(double));
    }
    /* warm start: a few projected Gauss-Seidel sweeps */
    int sweeps = 0;
    for (; sweeps < o->max_sweeps; sweeps++)
        if (pgs_sweep(&s, lambda) <= o->tol * s.vscale) {
            sweeps++;
            break;
        }
    memcpy(s.lsave, lambda, (size_t)R * sizeof(double));
    /* the branches: generalized Newton on the Alart-Curnier function (eq 16),
       from the warm start, else from zero */
    int iters = 0, ac = ac_newton(&s, lambda, sol, o->tol, 100, &iters);
    if (ac) {
        memset(lambda, 0, (size_t)R * sizeof(double));
        ac = ac_newton(&s, lambda, sol, o->tol, 200, &iters);
    }
    if (ac) {
        /* continuation in eps: from a well-conditioned problem (eps = 1e-3 tr(A)/R) down
           to eps, each solution the next one's start (near a jam, or where redundant
           contacts make A + eps I ill-conditioned) */
        memset(lambda, 0, (size_t)R * sizeof(double));
        for (double ek = fmax(1e-3 * tr_R, eps);;) {
            set_eps(&s, ek);
            ac = ac_newton(&s, lambda, sol, o->tol, 200, &iters);
            rescale(&s, lambda, tr_R);
            if (ek <= eps) break;
            ek = ek * 1e-2 > fmax(eps, 1e-14 * tr_R) ? ek * 1e-2 : eps;
        }
    }
    if (!ac) rescale(&s, lambda, tr_R);
    if (ac) {
        memcpy(lambda, s.lsave, (size_t)R * sizeof(double));
        post_velocity(&s, lambda, s.u);
        identify(&s, lambda, s.u, sol);
    }
    memcpy(s.lsave, lambda, (size_t)R * sizeof(double));
    imp_contact_solution keep = *sol;
    /* the exact solution on those branches, verified; violated branches corrected */
    int max_piv = o->max_pivots > 0 ? o->max_pivots : 4 * n + 10, ok = 0;
    for (int p = 0; p <= max_piv && !ok; p++) {
        double res;
        sol->pivots = p;
        if (branch_solve(&s, lambda, sol, o->tol, &res) != 0) break;
        sol->residual = res;
        post_velocity(&s, lambda, s.u);
        if (verify_and_flip(&s, lambda, sol, o->tol, p >= max_piv / 2) == 0) ok = 1;
    }
    if (!ok && ac == 0) {
        /* the Alart-Curnier solution itself satisfies the law to tol */
        memcpy(lambda, s.lsave, (size_t)R * sizeof(double));
        *sol = keep;
        memcpy(sol->lambda, lambda, (size_t)R * sizeof(double));
        sol->residual = sqrt(2.0 * ac_function(&s, lambda, sol, 0)) / s.lscale;
        ok = 1;
    }
    if (!ok) {
        /* the fallback: the projected Gauss-Seidel solution to its limit */
        memset(lambda, 0, (size_t)R * sizeof(double));
        double ch = 0.0;
        for (int k = 0; k < 50 * o->max_sweeps; k++, sweeps++)
            if ((ch = pgs_sweep(&s, lambda)) <= o->tol * s.vscale) break;
        post_velocity(&s, lambda, s.u);
        identify(&s, lambda, s.u, sol);
        sol->fallback = 1;
        sol->residual = ch / s.vscale;
        if (!(ch <= 1e3 * o->tol * s.vscale))
            return imp_fail(IMP_ERR_NUMERIC,
                            "contact solve: no verified solution for %d contacts (generalized Newton and branch "
                            "correction failed, projected Gauss-Seidel stalled at %g; frictional jamming?)",
                            n, ch / s.vscale);
    }
    sol->sweeps = sweeps;
    post_velocity(&s, lambda, sol->u_plus);
    return law_holds(&s, sol, vscale0, o->tol);
}

int imp_contact_solve_backward(double *A_bar, double *u_minus_bar, double *e_bar, double *mu_bar,
                               const double *lambda_bar, const imp_contact_solution *sol, const double *A,
                               const double *u_minus, const double *e, const double *mu, double *work, int *iwork)
{
    return imp_contact_solve_law_backward(A_bar, u_minus_bar, NULL, e_bar, mu_bar, lambda_bar, sol, A, u_minus, NULL,
                                          e, mu, work, iwork);
}

int imp_contact_solve_law_backward(double *A_bar, double *u_minus_bar, double *u_ref_bar, double *e_bar,
                                   double *mu_bar, const double *lambda_bar, const imp_contact_solution *sol,
                                   const double *A, const double *u_minus, const double *u_ref, const double *e,
                                   const double *mu, double *work, int *iwork)
{
    int n = sol->n, d = sol->dim;
    solver s;
    solver_setup(&s, A, u_minus, u_ref, e, mu, n, d, sol->law, sol->eps, work, iwork);
    int R = s.R;
    if (R == 0) return IMP_OK;
    /* the branch system's Jacobian at the solution, with its sliding directions */
    imp_contact_solution br = *sol;
    branch_system(&s, sol->lambda, &br, 1);
    if (imp_lu_factor(R, s.J, s.piv, 1e-14))
        return imp_fail(IMP_ERR_NUMERIC, "contact solve backward: the branch system is singular");
    /* psi = F_lambda^-T lambda_bar (eq 13) */
    double *psi = s.dl;
    memcpy(psi, lambda_bar, (size_t)R * sizeof(double));
    imp_lu_solve_transpose(R, s.J, s.piv, psi);
    const double *lam = sol->lambda;
    double Ar_trace_bar = 0.0;
    for (int i = 0; i < n; i++) {
        int r0 = i * d, b = br.branch[i];
        if (b == IMP_CONTACT_SEPARATE && !s.eq) continue;
        /* normal row: F_n = u-_n + (A_r lambda)_n - beta(u-_n, ur_n, e)  (eq 14; Newton:
           beta = e max(-u-_n, 0)) */
        double pn = psi[r0], db[3];
        law_target(sol->law, e[i], u_minus[r0], s.ur[r0], db);
        if (u_minus_bar) u_minus_bar[r0] -= pn * (1.0 - db[0]);
        double *urb = u_ref ? u_ref_bar : u_minus_bar;
        if (urb) urb[r0] += pn * db[1];
        if (e_bar) e_bar[i] += pn * db[2];
        if (A_bar)
            for (int j = 0; j < R; j++) A_bar[(size_t)r0 * R + j] -= pn * lam[j];
        Ar_trace_bar -= pn * lam[r0];
        if (b == IMP_CONTACT_SEPARATE) continue; /* equality law, no friction: F_t = lambda_t */
        for (int a = 1; a < d; a++) {
            int r = r0 + a;
            double g = 0.0;
            if (b == IMP_CONTACT_STICK) {
                g = psi[r];
            } else {
                /* slide: F_t = lambda_t + mu lambda_n s(u_t), K = mu lambda_n (I - s s^T)/|u_t| (eq 15) */
                if (mu_bar) mu_bar[i] -= psi[r] * lam[r0] * br.slide[i][a - 1];
                if (d == 3) {
                    double ut[2] = {s.u[r0 + 1], s.u[r0 + 2]}, rho = sqrt(ut[0] * ut[0] + ut[1] * ut[1]);
                    if (rho > 0.0)
                        for (int c = 0; c < 2; c++)
                            g += mu[i] * lam[r0] * ((a - 1 == c) - br.slide[i][a - 1] * br.slide[i][c]) / rho *
                                 psi[r0 + 1 + c];
                }
            }
            if (g == 0.0) continue;
            if (u_minus_bar) u_minus_bar[r] -= g;
            if (A_bar)
                for (int j = 0; j < R; j++) A_bar[(size_t)r * R + j] -= g * lam[j];
            Ar_trace_bar -= g * lam[r];
        }
    }
    /* A_r = A + eps I, eps = regularization tr(A) / R */
    if (A_bar && s.eps != 0.0) {
        double add = sol->regularization / R * Ar_trace_bar;
        for (int k = 0; k < R; k++) A_bar[(size_t)k * R + k] += add;
    }
    return IMP_OK;
}

/* The impulse step's work: BT = J M^-1 (R x nv), A (R x R), u- (R), the
 * reverse pass's A_bar, u-_bar, lambda_bar, BT_bar and 2 R nv scratch, then
 * the solver's own work. */
typedef struct impulse_work {
    double *BT, *A, *um, *Ab, *umb, *lb, *BTb, *tmp, *sw;
} impulse_work;

static impulse_work impulse_layout(double *work, size_t R, int nv)
{
    impulse_work w;
    w.BT = work;
    w.A = w.BT + R * nv;
    w.um = w.A + R * R;
    w.Ab = w.um + R;
    w.umb = w.Ab + R * R;
    w.lb = w.umb + R;
    w.BTb = w.lb + R;
    w.tmp = w.BTb + R * nv;
    w.sw = w.tmp + 2 * R * nv;
    return w;
}

size_t imp_contact_impulse_work_doubles(int n, int dim, int nv)
{
    size_t R = (size_t)n * dim;
    return 4 * R * nv + 2 * R * R + 3 * R + imp_contact_solve_work_doubles(n, dim);
}

int imp_contact_impulse_forward(double *v_plus, imp_contact_solution *sol, const double *v_minus, const double *J,
                                int n, int dim, int nv, imp_contact_minv_fn minv, void *minv_data,
                                const double *e, const double *mu, const imp_contact_solve_opts *o, double *work,
                                int *iwork)
{
    size_t R = (size_t)n * dim;
    impulse_work w = impulse_layout(work, R, nv);
    double *BT = w.BT, *A = w.A, *um = w.um, *sw = w.sw;
    int st = imp_check_finite(v_minus, (size_t)nv, "contact impulse: v_minus");
    if (!st) st = imp_check_finite(J, R * nv, "contact impulse: J");
    if (!st) st = imp_contact_compliance(A, BT, J, (int)R, nv, minv, minv_data);
    if (st) return st;
    for (size_t k = 0; k < R; k++) {
        double s = 0.0;
        for (int i = 0; i < nv; i++) s += J[k * nv + i] * v_minus[i];
        um[k] = s; /* eq 5 */
    }
    if ((st = imp_contact_solve_forward(sol, A, um, e, mu, n, dim, o, sw, iwork))) return st;
    for (int i = 0; i < nv; i++) {
        double s = v_minus[i];
        for (size_t k = 0; k < R; k++) s += BT[k * nv + i] * sol->lambda[k];
        v_plus[i] = s; /* eq 11 */
    }
    return IMP_OK;
}

int imp_contact_impulse_backward(double *v_minus_bar, double *J_bar, double *Minv_bar, double *e_bar,
                                 double *mu_bar, const double *v_plus_bar, const double *lambda_bar,
                                 const imp_contact_solution *sol, const double *v_minus, const double *J, int nv,
                                 imp_contact_minv_fn minv, void *minv_data, const double *e, const double *mu,
                                 double *work, int *iwork)
{
    int n = sol->n, dim = sol->dim;
    size_t R = (size_t)n * dim;
    impulse_work w = impulse_layout(work, R, nv);
    double *BT = w.BT, *A = w.A, *um = w.um, *Ab = w.Ab, *umb = w.umb, *lb = w.lb, *BTb = w.BTb, *tmp = w.tmp,
           *sw = w.sw;
    int st = imp_contact_compliance(A, BT, J, (int)R, nv, minv, minv_data);
    if (st) return st;
    for (size_t k = 0; k < R; k++) {
        double s = 0.0;
        for (int i = 0; i < nv; i++) s += J[k * nv + i] * v_minus[i];
        um[k] = s;
    }
    /* v+ = v- + BT^T lambda */
    for (size_t k = 0; k < R; k++) {
        double s = lambda_bar ? lambda_bar[k] : 0.0;
        for (int i = 0; i < nv; i++) {
            double vb = v_plus_bar ? v_plus_bar[i] : 0.0;
            s += BT[k * nv + i] * vb;
            BTb[k * nv + i] = sol->lambda[k] * vb;
        }
        lb[k] = s;
    }
    if (v_minus_bar && v_plus_bar)
        for (int i = 0; i < nv; i++) v_minus_bar[i] += v_plus_bar[i];
    memset(Ab, 0, R * R * sizeof(double));
    memset(umb, 0, R * sizeof(double));
    if ((st = imp_contact_solve_backward(Ab, umb, e_bar, mu_bar, lb, sol, A, um, e, mu, sw, iwork))) return st;
    /* u- = J v- */
    for (size_t k = 0; k < R; k++)
        for (int i = 0; i < nv; i++) {
            if (J_bar) J_bar[k * nv + i] += umb[k] * v_minus[i];
            if (v_minus_bar) v_minus_bar[i] += J[k * nv + i] * umb[k];
        }
    return imp_contact_compliance_backward(J_bar, Minv_bar, Ab, BTb, J, BT, (int)R, nv, minv, minv_data, tmp);
}
