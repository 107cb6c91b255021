/* Body/constraint graph: mass matrix (eq 9) against the rigid-body kinetic
 * energy, constraint Jacobians and their reverse mode against finite
 * differences, potential gradients, the two forms of the constrained
 * dynamics against each other, both projections, and every error path
 * (including system files). */
#include "impulse/constrained.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static imp_rng rng;

static void randn(double *a, int n, double scale)
{
    for (int i = 0; i < n; i++) a[i] = scale * imp_rng_normal(&rng);
}

/* A mechanism that uses every kind of constraint and potential:
 * A: 3D rigid body on a ball joint at the origin (a gyroscope);
 * B: point mass on a link to A's centre of mass, spring to a wall, magnet;
 * C: rigid body joined to a point of A and hinged to A's axis. */
static const char *mechanism_text =
    "# test mechanism\n"
    "name mechanism\n"
    "dim 3\n"
    "body A mass 0.5 inertia 0.1 0.2 0.3 position 0 0 0.3\n"
    "body B mass 1.2 position 0.8 0 0.3 velocity 0 0.5 0\n"
    "body C mass 0.7 inertia 0.05 0.04 0.03 position -0.2 0.3 0.4\n"
    "joint A at 0 0 -0.3 anchor 0 0 0\n"
    "link A B length 0.8\n"
    "joint C at 0.2 0 0 to A at 0 0.3 0.1\n"
    "hinge A axis 0 0 1 C axis 0 1 0\n"
    "gravity 9.81\n"
    "spring B anchor 1 0 0 k 3 rest 0.5\n"
    "magnet B q 0.3 at 0.1 0 -1.05 moment 0 0 0.3\n"
    "magnet B q 0.3 at -0.1 0 -1.05 moment 0 0 0.3\n";

/* Nominal state of the mechanism: A, C frames (C rotated +90 deg about x so
 * that its y axis is A's z axis), B as given. */
static void mechanism_state(const imp_csys *s, double *x, double *v)
{
    int N = imp_csys_ndof(s);
    memset(x, 0, (size_t)N * sizeof(double));
    memset(v, 0, (size_t)N * sizeof(double));
    for (int b = 0; b < s->n_bodies; b++) {
        const imp_cbody *body = &s->bodies[b];
        double R[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
        if (strcmp(body->name, "C") == 0) {
            double Rc[3][3] = {{1, 0, 0}, {0, 0, -1}, {0, 1, 0}};
            memcpy(R, Rc, sizeof R);
        }
        for (int k = 0; k < 3; k++) {
            x[body->first_point * 3 + k] = body->x0[k];
            v[body->first_point * 3 + k] = body->v0[k];
        }
        for (int i = 0; i < body->n_axes; i++)
            for (int k = 0; k < 3; k++)
                x[(body->first_point + 1 + i) * 3 + k] = body->x0[k] + R[k][i];
    }
}

static void test_mass_matrix(void)
{
    imp_csys s;
    CHECK_OK(imp_csys_init(&s, "rigid", 3));
    double I[3] = {0.02414, 0.02414, 0.00369};
    CHECK_OK(imp_csys_add_body(&s, "gyro", 0.1, 3, I, NULL));
    CHECK_OK(imp_csys_add_body(&s, "ball", 2.0, 0, NULL, NULL));
    int N = imp_csys_ndof(&s);
    CHECK(N == 15 && s.n_rows == 6);
    double *M = malloc((size_t)N * N * sizeof(double));
    imp_csys_mass_matrix(&s, M);
    CHECK_CLOSE(M[0], 0.1 + 0.02414 * 2 + 0.00369, 1e-14, 0); /* [chnn] 0.15197 */
    /* M M^-1 = I column by column, and mass_mul agrees with the dense M */
    double e[15], col[15], back[15], maxerr = 0, mulerr = 0;
    for (int j = 0; j < N; j++) {
        memset(e, 0, sizeof e);
        e[j] = 1;
        imp_csys_mass_inv_mul(&s, e, col);
        imp_csys_mass_mul(&s, col, back);
        for (int i = 0; i < N; i++) maxerr = fmax(maxerr, fabs(back[i] - e[i]));
        imp_csys_mass_mul(&s, e, col);
        for (int i = 0; i < N; i++) mulerr = fmax(mulerr, fabs(col[i] - M[(size_t)i * N + j]));
    }
    CHECK(maxerr < 1e-12);
    CHECK(mulerr == 0.0);
    /* Kinetic energy of eq 9 equals the rigid-body energy
     * 1/2 m |v0|^2 + 1/2 w^T J w, J = diag(I2 + I3, I1 + I3, I1 + I2) */
    double R[9], Q[9];
    randn(Q, 9, 1.0);
    /* orthonormalise Q -> R by Gram-Schmidt on columns */
    for (int c = 0; c < 3; c++) {
        double col3[3] = {Q[c], Q[3 + c], Q[6 + c]};
        for (int p = 0; p < c; p++) {
            double dot = 0;
            for (int k = 0; k < 3; k++) dot += col3[k] * R[k * 3 + p];
            for (int k = 0; k < 3; k++) col3[k] -= dot * R[k * 3 + p];
        }
        double nrm = sqrt(col3[0] * col3[0] + col3[1] * col3[1] + col3[2] * col3[2]);
        for (int k = 0; k < 3; k++) R[k * 3 + c] = col3[k] / nrm;
    }
    double x[15] = {0}, v[15] = {0}, w[3], v0[3];
    randn(w, 3, 1.0);
    randn(v0, 3, 1.0);
    for (int k = 0; k < 3; k++) v[k] = v0[k];
    for (int i = 0; i < 3; i++) {
        /* x_i = x0 + R e_i, xdot_i = v0 + R (w x e_i) */
        double wxe[3] = {0, 0, 0};
        double ei[3] = {0, 0, 0};
        ei[i] = 1;
        wxe[0] = w[1] * ei[2] - w[2] * ei[1];
        wxe[1] = w[2] * ei[0] - w[0] * ei[2];
        wxe[2] = w[0] * ei[1] - w[1] * ei[0];
        for (int k = 0; k < 3; k++) {
            x[(1 + i) * 3 + k] = R[k * 3 + i];
            v[(1 + i) * 3 + k] = v0[k] + R[k * 3 + 0] * wxe[0] + R[k * 3 + 1] * wxe[1] + R[k * 3 + 2] * wxe[2];
        }
    }
    double T_true = 0.5 * 0.1 * (v0[0] * v0[0] + v0[1] * v0[1] + v0[2] * v0[2]) +
                    0.5 * ((I[1] + I[2]) * w[0] * w[0] + (I[0] + I[2]) * w[1] * w[1] + (I[0] + I[1]) * w[2] * w[2]);
    CHECK_CLOSE(imp_csys_energy(&s, x, v), T_true, 1e-12, 1e-15);
    /* the rigid frame satisfies the internal distances exactly */
    double phi[6];
    imp_csys_phi(&s, x, phi);
    double pm = 0;
    for (int c = 0; c < 6; c++) pm = fmax(pm, fabs(phi[c]));
    CHECK(pm < 1e-14);
    free(M);
}

static void test_derivatives(const imp_csys *s)
{
    int N = imp_csys_ndof(s), C = s->n_rows;
    double *x = malloc(N * sizeof(double)), *v = malloc(N * sizeof(double));
    double *J = malloc((size_t)C * N * sizeof(double)), *Jd = malloc((size_t)C * N * sizeof(double));
    double *num = malloc((size_t)C * N * sizeof(double)), *xx = malloc(N * sizeof(double));
    double phip[IMP_CSYS_MAX_ROWS], phim[IMP_CSYS_MAX_ROWS];
    mechanism_state(s, x, v);
    for (int q = 0; q < N; q++) { x[q] += 0.1 * imp_rng_normal(&rng); v[q] = imp_rng_normal(&rng); }
    const double eps = 1e-6;
    /* DPhi vs FD of Phi; dPhidot/dv vs FD (must equal DPhi); dPhidot/dx vs FD */
    imp_csys_jacobian(s, x, J);
    imp_csys_jacobian_dot(s, v, Jd);
    double e1 = 0, e2 = 0, e3 = 0, scale = 1e-8;
    for (int q = 0; q < N; q++) {
        memcpy(xx, x, N * sizeof(double));
        xx[q] += eps; imp_csys_phi(s, xx, phip);
        xx[q] -= 2 * eps; imp_csys_phi(s, xx, phim);
        for (int c = 0; c < C; c++) {
            double d = (phip[c] - phim[c]) / (2 * eps);
            e1 = fmax(e1, fabs(d - J[(size_t)c * N + q]));
            scale = fmax(scale, fabs(d));
        }
        memcpy(xx, v, N * sizeof(double));
        xx[q] += eps; imp_csys_phidot(s, x, xx, phip);
        xx[q] -= 2 * eps; imp_csys_phidot(s, x, xx, phim);
        for (int c = 0; c < C; c++) e2 = fmax(e2, fabs((phip[c] - phim[c]) / (2 * eps) - J[(size_t)c * N + q]));
        memcpy(xx, x, N * sizeof(double));
        xx[q] += eps; imp_csys_phidot(s, xx, v, phip);
        xx[q] -= 2 * eps; imp_csys_phidot(s, xx, v, phim);
        for (int c = 0; c < C; c++) e3 = fmax(e3, fabs((phip[c] - phim[c]) / (2 * eps) - Jd[(size_t)c * N + q]));
    }
    printf("jacobians vs FD: DPhi %.2e, dPhidot/dv %.2e, dPhidot/dx %.2e (scale %.2f)\n", e1, e2, e3, scale);
    CHECK(e1 < 1e-7 * scale);
    CHECK(e2 < 1e-7 * scale);
    CHECK(e3 < 1e-7 * scale);
    /* Phidot = DPhi v */
    double phid[IMP_CSYS_MAX_ROWS], e4 = 0;
    imp_csys_phidot(s, x, v, phid);
    for (int c = 0; c < C; c++) {
        double acc = 0;
        for (int q = 0; q < N; q++) acc += J[(size_t)c * N + q] * v[q];
        e4 = fmax(e4, fabs(acc - phid[c]));
    }
    CHECK(e4 < 1e-12);
    /* reverse mode of the Jacobian: xbar = d<Jbar, DPhi(x)>/dx */
    double *Jbar = malloc((size_t)C * N * sizeof(double)), *xbar = calloc(N, sizeof(double));
    randn(Jbar, C * N, 1.0);
    imp_csys_jacobian_vjp(s, Jbar, xbar);
    double *nb = malloc(N * sizeof(double));
    for (int q = 0; q < N; q++) {
        memcpy(xx, x, N * sizeof(double));
        double lp = 0, lm = 0;
        xx[q] += eps; imp_csys_jacobian(s, xx, num);
        for (size_t i = 0; i < (size_t)C * N; i++) lp += Jbar[i] * num[i];
        xx[q] -= 2 * eps; imp_csys_jacobian(s, xx, num);
        for (size_t i = 0; i < (size_t)C * N; i++) lm += Jbar[i] * num[i];
        nb[q] = (lp - lm) / (2 * eps);
    }
    double ev = test_grad_rel_err(xbar, nb, N, 1e-8);
    printf("jacobian_vjp vs FD: %.2e\n", ev);
    CHECK(ev < 1e-7);
    /* same structure for dPhidot/dx as a function of v */
    memset(xbar, 0, N * sizeof(double));
    imp_csys_jacobian_vjp(s, Jbar, xbar);
    for (int q = 0; q < N; q++) {
        memcpy(xx, v, N * sizeof(double));
        double lp = 0, lm = 0;
        xx[q] += eps; imp_csys_jacobian_dot(s, xx, num);
        for (size_t i = 0; i < (size_t)C * N; i++) lp += Jbar[i] * num[i];
        xx[q] -= 2 * eps; imp_csys_jacobian_dot(s, xx, num);
        for (size_t i = 0; i < (size_t)C * N; i++) lm += Jbar[i] * num[i];
        nb[q] = (lp - lm) / (2 * eps);
    }
    /* linear rows contribute nothing to dPhidot/dx, so compare only the
     * distance/dot structure: both are affine with the same linear part */
    ev = test_grad_rel_err(xbar, nb, N, 1e-8);
    CHECK(ev < 1e-7);
    /* potential gradient (gravity + spring + 2 magnets) */
    double *g = malloc(N * sizeof(double));
    imp_csys_potential_grad(s, x, g);
    for (int q = 0; q < N; q++) {
        memcpy(xx, x, N * sizeof(double));
        xx[q] += eps; double Vp = imp_csys_potential(s, xx);
        xx[q] -= 2 * eps; double Vm = imp_csys_potential(s, xx);
        nb[q] = (Vp - Vm) / (2 * eps);
    }
    double eg = test_grad_rel_err(g, nb, N, 1e-8);
    printf("potential gradient vs FD: %.2e\n", eg);
    CHECK(eg < 1e-7);
    free(x); free(v); free(J); free(Jd); free(num); free(xx); free(Jbar); free(xbar); free(nb); free(g);
}

static void test_dynamics_and_projection(const imp_csys *s)
{
    int N = imp_csys_ndof(s), C = s->n_rows;
    imp_csys_work *w = imp_csys_work_new(s);
    double x[IMP_CSYS_MAX_POINTS * 3], v[IMP_CSYS_MAX_POINTS * 3], x_before[IMP_CSYS_MAX_POINTS * 3];
    mechanism_state(s, x, v);
    for (int q = 0; q < N; q++) { x[q] += 0.03 * imp_rng_normal(&rng); v[q] += imp_rng_normal(&rng); }
    memcpy(x_before, x, sizeof x);
    CHECK_OK(imp_csys_check_rank(s, x, w));
    CHECK_OK(imp_csys_project(s, x, v, NULL, w));
    double phi[IMP_CSYS_MAX_ROWS], phid[IMP_CSYS_MAX_ROWS], pm = 0, pdm = 0, moved = 0;
    imp_csys_phi(s, x, phi);
    imp_csys_phidot(s, x, v, phid);
    for (int c = 0; c < C; c++) { pm = fmax(pm, fabs(phi[c])); pdm = fmax(pdm, fabs(phid[c])); }
    for (int q = 0; q < N; q++) moved = fmax(moved, fabs(x[q] - x_before[q]));
    printf("projection: max|Phi| %.2e, max|Phidot| %.2e, moved %.3f\n", pm, pdm, moved);
    CHECK(pm <= 1e-12);
    CHECK(pdm <= 1e-12);
    CHECK(moved < 0.5);
    /* projecting again changes nothing (idempotent) */
    double x2[IMP_CSYS_MAX_POINTS * 3], v2[IMP_CSYS_MAX_POINTS * 3];
    memcpy(x2, x, sizeof x);
    memcpy(v2, v, sizeof v);
    CHECK_OK(imp_csys_project(s, x2, v2, NULL, w));
    double dd = 0;
    for (int q = 0; q < N; q++) dd = fmax(dd, fabs(x2[q] - x[q]) + fabs(v2[q] - v[q]));
    CHECK(dd < 1e-12);
    /* eq 6 on (x, p) and eq 7 on (x, v) give the same motion on the manifold */
    double z[2 * IMP_CSYS_MAX_POINTS * 3], zd[2 * IMP_CSYS_MAX_POINTS * 3], a[IMP_CSYS_MAX_POINTS * 3],
        Ma[IMP_CSYS_MAX_POINTS * 3], lam[IMP_CSYS_MAX_ROWS];
    memcpy(z, x, N * sizeof(double));
    imp_csys_mass_mul(s, v, z + N);
    CHECK_OK(imp_csys_hamilton_rhs(s, z, zd, w));
    CHECK_OK(imp_csys_lagrange_accel(s, x, v, a, lam, w));
    imp_csys_mass_mul(s, a, Ma);
    double ex = 0, ep = 0, sc = 0;
    for (int q = 0; q < N; q++) {
        ex = fmax(ex, fabs(zd[q] - v[q]));
        ep = fmax(ep, fabs(zd[N + q] - Ma[q]));
        sc = fmax(sc, fabs(Ma[q]));
    }
    printf("Hamiltonian eq 6 vs Lagrange eq 7: xdot %.2e, pdot %.2e (scale %.2f)\n", ex, ep, sc);
    CHECK(ex < 1e-9);
    CHECK(ep < 1e-9 * (1 + sc));
    /* the acceleration keeps the constraints: DPhi a + dPhidot/dx v = 0 */
    double *J = malloc((size_t)C * N * sizeof(double)), *Jd = malloc((size_t)C * N * sizeof(double));
    imp_csys_jacobian(s, x, J);
    imp_csys_jacobian_dot(s, v, Jd);
    double acc_err = 0;
    for (int c = 0; c < C; c++) {
        double acc = 0;
        for (int q = 0; q < N; q++) acc += J[(size_t)c * N + q] * a[q] + Jd[(size_t)c * N + q] * v[q];
        acc_err = fmax(acc_err, fabs(acc));
    }
    CHECK(acc_err < 1e-9 * (1 + sc));
    free(J); free(Jd);
    imp_csys_work_free(w);
}


/* Euclidean normal part of r at (x, v): |r - J^T (J J^T)^-1 J r| / |r|, with
 * J = d(Phi, Phidot)/d(x, v) (0 if r lies in the row space of J, i.e. is
 * orthogonal to the tangent space of the state manifold). Dense, small. */
static double non_normal_fraction(const imp_csys *s, const double *x, const double *v, const double *r)
{
    int N = imp_csys_ndof(s), C = s->n_rows, M = 2 * C, Z = 2 * N;
    double *A = malloc((size_t)C * N * sizeof(double)), *B = malloc((size_t)C * N * sizeof(double));
    double *J = calloc((size_t)M * Z, sizeof(double)), *G = malloc((size_t)M * M * sizeof(double));
    double *y = malloc((size_t)M * sizeof(double)), *rp = malloc((size_t)Z * sizeof(double));
    imp_csys_jacobian(s, x, A);
    imp_csys_jacobian_dot(s, v, B);
    for (int c = 0; c < C; c++)
        for (int q = 0; q < N; q++) {
            J[(size_t)c * Z + q] = A[(size_t)c * N + q];
            J[(size_t)(C + c) * Z + q] = B[(size_t)c * N + q];
            J[(size_t)(C + c) * Z + N + q] = A[(size_t)c * N + q];
        }
    for (int a = 0; a < M; a++) {
        double acc = 0;
        for (int q = 0; q < Z; q++) acc += J[(size_t)a * Z + q] * r[q];
        y[a] = acc;
        for (int b = 0; b < M; b++) {
            double g = 0;
            for (int q = 0; q < Z; q++) g += J[(size_t)a * Z + q] * J[(size_t)b * Z + q];
            G[(size_t)a * M + b] = g;
        }
    }
    /* Gaussian elimination with partial pivoting on G y = J r */
    for (int k = 0; k < M; k++) {
        int p = k;
        for (int i = k + 1; i < M; i++) if (fabs(G[(size_t)i * M + k]) > fabs(G[(size_t)p * M + k])) p = i;
        for (int j = 0; j < M; j++) { double t = G[(size_t)k * M + j]; G[(size_t)k * M + j] = G[(size_t)p * M + j]; G[(size_t)p * M + j] = t; }
        double t = y[k]; y[k] = y[p]; y[p] = t;
        for (int i = k + 1; i < M; i++) {
            double f = G[(size_t)i * M + k] / G[(size_t)k * M + k];
            for (int j = k; j < M; j++) G[(size_t)i * M + j] -= f * G[(size_t)k * M + j];
            y[i] -= f * y[k];
        }
    }
    for (int k = M - 1; k >= 0; k--) {
        for (int j = k + 1; j < M; j++) y[k] -= G[(size_t)k * M + j] * y[j];
        y[k] /= G[(size_t)k * M + k];
    }
    double num = 0, den = 0;
    for (int q = 0; q < Z; q++) {
        double acc = r[q];
        for (int a = 0; a < M; a++) acc -= J[(size_t)a * Z + q] * y[a];
        rp[q] = acc;
        num += acc * acc;
        den += r[q] * r[q];
    }
    free(A); free(B); free(J); free(G); free(y); free(rp);
    return den > 0 ? sqrt(num / den) : 0.0;
}

/* imp_csys_project_state is the reference's projection: Newton on (x, v)
 * in the Euclidean metric, so a small perturbation is removed along the
 * Euclidean normal of the state manifold (imp_csys_project, the mass
 * metric with positions first, is not). */
static void test_project_state(const imp_csys *s)
{
    int N = imp_csys_ndof(s), C = s->n_rows;
    imp_csys_work *w = imp_csys_work_new(s);
    double x[IMP_CSYS_MAX_POINTS * 3], v[IMP_CSYS_MAX_POINTS * 3];
    mechanism_state(s, x, v);
    randn(v, N, 1.0);
    CHECK_OK(imp_csys_project(s, x, v, NULL, w)); /* a state on the manifold */
    enum { ZMAX = 2 * IMP_CSYS_MAX_POINTS * 3 };
    double zp[ZMAX], z[ZMAX], zm[ZMAX], r[ZMAX], rm[ZMAX];
    for (int q = 0; q < N; q++) {
        zp[q] = x[q] + 1e-6 * imp_rng_normal(&rng);
        zp[N + q] = v[q] + 1e-6 * imp_rng_normal(&rng);
    }
    memcpy(z, zp, sizeof z);
    memcpy(zm, zp, sizeof zm);
    CHECK_OK(imp_csys_project_state(s, z, z + N, NULL, w));
    CHECK_OK(imp_csys_project(s, zm, zm + N, NULL, w));
    double phi[IMP_CSYS_MAX_ROWS], phid[IMP_CSYS_MAX_ROWS], res = 0;
    imp_csys_phi(s, z, phi);
    imp_csys_phidot(s, z, z + N, phid);
    for (int c = 0; c < C; c++) res = fmax(res, fmax(fabs(phi[c]), fabs(phid[c])));
    for (int q = 0; q < 2 * N; q++) {
        r[q] = z[q] - zp[q];
        rm[q] = zm[q] - zp[q];
    }
    double f_state = non_normal_fraction(s, z, z + N, r), f_mass = non_normal_fraction(s, zm, zm + N, rm);
    printf("state projection: max|Psi| %.2e; non-normal part of the correction %.2e "
           "(mass-metric projection: %.2e)\n", res, f_state, f_mass);
    CHECK(res <= 1e-12);
    CHECK(f_state < 1e-4);  /* O(perturbation) from the curvature */
    CHECK(f_mass > 1e-2);   /* the check can fail */
    /* far from the manifold (the pendulum-chain draws are 0.2 off in x, 1.2
     * in v): converges, and projecting again changes nothing */
    for (int q = 0; q < N; q++) {
        z[q] = x[q] + 0.03 * imp_rng_normal(&rng);
        z[N + q] = v[q] + imp_rng_normal(&rng);
    }
    CHECK_OK(imp_csys_project_state(s, z, z + N, NULL, w));
    CHECK(imp_csys_violation(s, z, z + N) < 1e-11);
    memcpy(zm, z, sizeof zm);
    CHECK_OK(imp_csys_project_state(s, zm, zm + N, NULL, w));
    CHECK(memcmp(zm, z, 2 * (size_t)N * sizeof(double)) == 0); /* already within tol: no step */
    /* errors */
    CHECK_FAILS(imp_csys_project_state(s, z, NULL, NULL, w), IMP_ERR_INVALID);
    z[N] = NAN;
    CHECK_FAILS(imp_csys_project_state(s, z, z + N, NULL, w), IMP_ERR_NUMERIC);
    imp_csys_work_free(w);
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    fclose(f);
    return 0;
}

static void test_errors(void)
{
    imp_csys s;
    /* builder errors */
    CHECK_FAILS(imp_csys_init(&s, "x", 4), IMP_ERR_INVALID);
    CHECK_OK(imp_csys_init(&s, "x", 2));
    CHECK_FAILS(imp_csys_add_body(&s, "a", -1.0, 0, NULL, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_csys_add_body(&s, "a", NAN, 0, NULL, NULL), IMP_ERR_INVALID);
    double badI[2] = {0.1, -0.2};
    CHECK_FAILS(imp_csys_add_body(&s, "a", 1.0, 2, badI, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_csys_add_body(&s, "a", 1.0, 3, NULL, NULL), IMP_ERR_INVALID);
    CHECK_OK(imp_csys_add_body(&s, "a", 1.0, 0, NULL, NULL));
    CHECK_FAILS(imp_csys_add_body(&s, "a", 1.0, 0, NULL, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_csys_add_link(&s, 0, 5, 1.0, 0), IMP_ERR_INVALID);  /* missing body */
    CHECK_FAILS(imp_csys_add_tether(&s, 0, NULL, -1.0, 0), IMP_ERR_INVALID);
    CHECK_FAILS(imp_csys_validate(&(imp_csys){.d = 2}), IMP_ERR_INVALID); /* no bodies */
    /* singular constraint set: the same link twice */
    CHECK_OK(imp_csys_init(&s, "dup", 2));
    CHECK_OK(imp_csys_add_body(&s, "a", 1.0, 0, NULL, NULL));
    CHECK_OK(imp_csys_add_body(&s, "b", 1.0, 0, NULL, NULL));
    CHECK_OK(imp_csys_add_tether(&s, 0, NULL, 1.0, 3));
    CHECK_OK(imp_csys_add_link(&s, 0, 1, 1.0, 4));
    CHECK_OK(imp_csys_add_link(&s, 1, 0, 1.0, 5));
    imp_csys_work *w = imp_csys_work_new(&s);
    double x[4] = {0.6, -0.8, 1.1, -0.2}, v[4] = {1, 0, 0, 1}, a[4];
    CHECK_FAILS(imp_csys_project(&s, x, v, NULL, w), IMP_ERR_NUMERIC);
    CHECK_MSG(strstr(imp_last_error(), "link b a") && strstr(imp_last_error(), "line 5"), "%s", imp_last_error());
    CHECK_FAILS(imp_csys_lagrange_accel(&s, x, v, a, NULL, w), IMP_ERR_NUMERIC);
    CHECK_FAILS(imp_csys_project_state(&s, x, v, NULL, w), IMP_ERR_NUMERIC);
    CHECK_MSG(strstr(imp_last_error(), "rank deficient") != NULL, "%s", imp_last_error());
    imp_csys_work_free(w);
    /* infeasible: both tethered with length 1 but linked with length 5 */
    CHECK_OK(imp_csys_init(&s, "far", 2));
    CHECK_OK(imp_csys_add_body(&s, "a", 1.0, 0, NULL, NULL));
    CHECK_OK(imp_csys_add_body(&s, "b", 1.0, 0, NULL, NULL));
    CHECK_OK(imp_csys_add_tether(&s, 0, NULL, 1.0, 0));
    CHECK_OK(imp_csys_add_tether(&s, 1, NULL, 1.0, 0));
    CHECK_OK(imp_csys_add_link(&s, 0, 1, 5.0, 0));
    w = imp_csys_work_new(&s);
    double xf[4] = {0.6, -0.8, -0.6, -0.8};
    CHECK_FAILS(imp_csys_project(&s, xf, NULL, NULL, w), IMP_ERR_NUMERIC);
    CHECK_MSG(strstr(imp_last_error(), "cannot be met") != NULL, "%s", imp_last_error());
    double vf[4] = {0, 0, 0, 0};
    CHECK_FAILS(imp_csys_project_state(&s, xf, vf, NULL, w), IMP_ERR_NUMERIC);
    CHECK_MSG(strstr(imp_last_error(), "cannot be met") != NULL, "%s", imp_last_error());
    double xn[4] = {NAN, 0, 0, 0};
    CHECK_FAILS(imp_csys_project(&s, xn, NULL, NULL, w), IMP_ERR_NUMERIC);
    imp_csys_work_free(w);
    /* too many constraints for the coordinates */
    CHECK_OK(imp_csys_init(&s, "over", 2));
    CHECK_OK(imp_csys_add_body(&s, "a", 1.0, 0, NULL, NULL));
    CHECK_OK(imp_csys_add_tether(&s, 0, NULL, 1.0, 0));
    double anc[2] = {1, 0};
    CHECK_OK(imp_csys_add_tether(&s, 0, anc, 1.0, 0));
    CHECK_FAILS(imp_csys_validate(&s), IMP_ERR_INVALID);

    /* system files: each error names the line and the offending word */
    struct { const char *text, *needle; } bad[] = {
        {"body a mass 1\n", "dim"},
        {"dim 2\nbody a mass 1\nlink a b3 length 1\n", "t.txt:3: link: unknown body 'b3'"},
        {"dim 2\nbody a mass -1\n", "t.txt:2"},
        {"dim 2\nbody a\n", "needs 'mass M'"},
        {"dim 2\nbody a mass 1x\n", "'1x' is not a number"},
        {"dim 2\nbody a mass nan\n", "mass: 'nan' is not a finite number"},
        {"dim 2\nbody a mass 1e999\n", "'1e999' is beyond the range of a double"},
        {"dim 2\nbody a mass 1\ngravity 9.81 axis 1e300\n", "t.txt:3: gravity: axis: 1e300 is out of range [0, 1]"},
        {"dim 2\nbody a mass 1\ngravity 9.81 axis 1.7\n", "axis: 1.7 is not an integer"},
        {"dim 2\nbody a mass 1\ngravity 9.81 axis -2147483649\n", "axis: -2147483649 is out of range"},
        {"dim 2\nbody a mass 1\nsteps 2000000000\n", "steps: 2000000000 is out of range [1, 10000000]"},
        {"dim 2\nbody a mass 1\nsteps 2.5\n", "steps: 2.5 is not an integer"},
        {"dim 2\nbody a mass 1\ntether a length\n", "missing length"},
        {"dim 2\nbody a mass 1\ntether a len 1\n", "expected 'length'"},
        {"dim 2\nbody a mass 1\nfrobnicate a\n", "t.txt:3: frobnicate: unknown keyword"},
        {"dim 2\nbody a mass 1\nbody a mass 2\n", "defined twice"},
        {"dim 5\n", "dimension: 5 is out of range [2, 3]"},
        {"dim 2\nbody a mass 1 inertia 1 2 3\n", "inertia"},
        {"dim 2\nbody a mass 1\ntether a length 1 anchor 0 0 extra\n", "unexpected 'extra'"},
        {"dim 2\nbody a mass 1\ntether a length 1\ntether a length 1 anchor 1 0\n", "no degree of freedom"},
        {"dim 3\nbody a mass 1\njoint a at 0 0 1\n", "point mass"},
        {"dim 2\n# nothing\n", "no bodies"},
        {"dim 2\nbody a mass 1\nmagnet a q 1 at 0 0 0 moment 0 0 1\n", "dim 3"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_FAILS(imp_csys_parse(&s, bad[i].text, "t.txt"), IMP_ERR_FORMAT);
        CHECK_MSG(strstr(imp_last_error(), bad[i].needle) != NULL, "case %zu: '%s' lacks '%s'", i,
                  imp_last_error(), bad[i].needle);
    }
    CHECK_FAILS(imp_csys_load(&s, "/nonexistent/system.txt"), IMP_ERR_IO);
    /* below the smallest normal double is still a number; an axis in range is used */
    CHECK_OK(imp_csys_parse(&s, "dim 2\nbody a mass 1e-308 position 1 0\ngravity 9.81 axis 0\n", "t.txt"));
    CHECK(s.n_bodies == 1 && s.bodies[0].mass == 1e-308 && s.n_pots == 1 && s.pots[0].axis == 0);
}

int main(void)
{
    imp_rng_seed(&rng, 42);
    test_mass_matrix();
    imp_csys s;
    char path[256];
    snprintf(path, sizeof path, "mechanism-%d.txt", (int)getpid());
    CHECK(write_file(path, mechanism_text) == 0);
    CHECK_OK(imp_csys_load(&s, path));
    remove(path);
    CHECK(s.n_bodies == 3 && s.n_points == 9 && s.d == 3);
    /* 6 + 6 rigid, 3 joint, 1 link, 3 joint, 2 hinge */
    CHECK(s.n_rows == 21);
    CHECK(strcmp(s.name, "mechanism") == 0);
    test_derivatives(&s);
    test_dynamics_and_projection(&s);
    test_project_state(&s);
    test_errors();
    TEST_MAIN_END();
}
