/* Constrained-network models: system descriptions, the projection property
 * of CHNN/CLNN (the dynamics keep Phi-dot and Phi-ddot at zero), learned
 * energy and constraint conservation along a fine RK4 trajectory, and
 * central finite-difference checks of every model's dynamics VJP with
 * respect to the state and the parameters. */
#include "impulse/chnn_models.h"
#include "impulse/integrate.h"
#include "impulse/chnn_systems.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A state from the benchmark's initial-state distribution (on the
 * constraint manifold), optionally pushed off it. */
static void random_state(const imp_csystem *cs, imp_rng *rng, double *y, int on_manifold)
{
    int nd = cs->n_points * cs->d;
    imp_csys_work *cw = imp_csys_work_new(&cs->full);
    int st = imp_chnn_sample_state(&cs->full, rng, 0.0, y, cw);
    CHECK_OK(st);
    imp_csys_work_free(cw);
    if (!on_manifold)
        for (int k = 0; k < 2 * nd; k++) y[k] += 0.05 * imp_rng_normal(rng);
}

static void test_systems(void)
{
    imp_csystem cs;
    CHECK_OK(imp_csystem_from_name(&cs, "pendulum-chain:3"));
    CHECK(cs.d == 2 && cs.n_points == 3 && cs.n_rows == 3 && cs.n_gen == 3 && cs.n_bodies == 3);
    CHECK(cs.body_size[2] == 1 && cs.body_first[2] == 2);
    CHECK_OK(imp_csystem_from_name(&cs, "gyroscope"));
    CHECK(cs.d == 3 && cs.n_points == 4 && cs.n_rows == 9 && cs.n_bodies == 1 && cs.body_size[0] == 4);
    CHECK_OK(imp_csystem_from_name(&cs, "rotor"));
    CHECK(cs.n_rows == 6);
    CHECK_FAILS(imp_csystem_from_name(&cs, "double-pendulum"), IMP_ERR_NOT_FOUND);

    /* generalised <-> Cartesian round trip on the manifold */
    imp_rng rng;
    imp_rng_seed(&rng, 3);
    CHECK_OK(imp_csystem_from_name(&cs, "pendulum-chain:3"));
    double y[12], z[6], y2[12], phi[3], phid[3];
    random_state(&cs, &rng, y, 1);
    CHECK_OK(imp_csystem_to_generalised(&cs, y, z));
    CHECK_OK(imp_csystem_from_generalised(&cs, z, y2));
    double e = 0;
    for (int k = 0; k < 12; k++) e = fmax(e, fabs(y[k] - y2[k]));
    CHECK_CLOSE(e, 0.0, 0, 1e-9);
    imp_csystem_violation(&cs, y, phi, phid);
    for (int c = 0; c < 3; c++) {
        CHECK_CLOSE(phi[c], 0.0, 0, 1e-8);
        CHECK_CLOSE(phid[c], 0.0, 0, 1e-8);
    }
}

typedef struct setup {
    imp_cmodel m;
    double *params;
    imp_cmodel_work *w;
} setup;

static int make(setup *s, imp_cmodel_kind kind, const char *sys, int hidden, int B, uint64_t seed)
{
    imp_csystem cs;
    int st = imp_csystem_from_name(&cs, sys);
    if (st) return st;
    st = imp_cmodel_init(&s->m, kind, &cs, hidden, 3);
    if (st) return st;
    s->params = malloc(s->m.n_params * sizeof(double));
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    imp_cmodel_init_params(&s->m, s->params, &rng);
    /* the default mass network's output layer is zero (L = I): perturb every
     * parameter so that the layers below it get non-zero derivatives */
    if (kind == IMP_CMODEL_HNN || kind == IMP_CMODEL_DELAN)
        for (size_t q = s->m.off_mass; q < s->m.n_params; q++) s->params[q] += 0.05 * imp_rng_normal(&rng);
    s->w = imp_cmodel_work_new(&s->m, B);
    return s->w ? IMP_OK : IMP_ERR_NOMEM;
}

static void release(setup *s)
{
    free(s->params);
    imp_cmodel_work_free(s->w);
}

/* The dynamics satisfy G^T zdot = 0 at any state: D xdot = 0 and
 * A xdot + D vdot = 0 (CHNN, [F] eq 6); CLNN: A v + D vdot = 0 (Phi-ddot = 0). */
static void test_projection_property(const char *sysname, imp_cmodel_kind kind)
{
    setup s;
    CHECK_OK(make(&s, kind, sysname, 32, 4, 11));
    imp_rng rng;
    imp_rng_seed(&rng, 5);
    int nd = s.m.sys.n_points * s.m.sys.d, C = s.m.sys.n_rows;
    double *y = malloc(4 * 2 * nd * sizeof(double)), *f = malloc(4 * 2 * nd * sizeof(double));
    double *D = malloc((size_t)C * nd * sizeof(double)), *A = malloc((size_t)C * nd * sizeof(double));
    for (int b = 0; b < 4; b++) random_state(&s.m.sys, &rng, y + b * 2 * nd, 0);
    CHECK_OK(imp_cmodel_rhs(&s.m, s.params, y, 4, f, s.w));
    double worst1 = 0, worst2 = 0, scale = 0;
    for (int b = 0; b < 4; b++) {
        const double *yb = y + b * 2 * nd, *fb = f + b * 2 * nd;
        imp_csys_jacobian(&s.m.sys.full, yb, D);
        imp_csys_jacobian_dot(&s.m.sys.full, yb + nd, A);
        for (int c = 0; c < C; c++) {
            double dx = 0, r2 = 0;
            for (int k = 0; k < nd; k++) {
                dx += D[c * nd + k] * fb[k];
                r2 += A[c * nd + k] * fb[k] + D[c * nd + k] * fb[nd + k];
                scale = fmax(scale, fabs(fb[nd + k]));
            }
            if (kind == IMP_CMODEL_CHNN) worst1 = fmax(worst1, fabs(dx));
            worst2 = fmax(worst2, fabs(r2));
        }
    }
    CHECK(scale > 0);
    CHECK_MSG(worst1 < 1e-10 * (1 + scale), "%s %s: |D xdot| = %g", sysname, imp_cmodel_kind_name(kind), worst1);
    CHECK_MSG(worst2 < 1e-9 * (1 + scale), "%s %s: |A xdot + D vdot| = %g", sysname, imp_cmodel_kind_name(kind), worst2);
    free(y); free(f); free(D); free(A);
    release(&s);
}

static void test_conservation(const char *sysname, imp_cmodel_kind kind)
{
    setup s;
    CHECK_OK(make(&s, kind, sysname, 32, 1, 21));
    imp_mlp_work *mw = imp_mlp_work_new(&s.m.net, 1);
    imp_rng rng;
    imp_rng_seed(&rng, 8);
    int nd = s.m.sys.n_points * s.m.sys.d, C = s.m.sys.n_rows;
    double y0[2 * 3 * IMP_CSYS_MAX_POINTS];
    random_state(&s.m.sys, &rng, y0, 1);
    imp_cmodel_binding bind = {&s.m, s.params, s.w};
    imp_ode ode;
    imp_cmodel_ode(&ode, &bind);
    int n = 400;
    double *traj = malloc((size_t)(n + 1) * 2 * nd * sizeof(double));
    CHECK_OK(imp_integrate_fixed(&imp_stepper_rk4, &ode, 0.0, 2.5e-3, n, y0, 1, traj));
    double V0, V1;
    imp_mlp_forward(&s.m.net, s.params, y0, 1, &V0, mw);
    imp_mlp_forward(&s.m.net, s.params, traj + (size_t)n * 2 * nd, 1, &V1, mw);
    double T0 = 0, T1 = 0;
    {
        /* kinetic energies through the same formula */
        const imp_csystem *cs = &s.m.sys;
        for (int pass = 0; pass < 2; pass++) {
            const double *y = pass ? traj + (size_t)n * 2 * nd : y0;
            double T = 0;
            for (int b = 0; b < cs->n_bodies; b++) {
                int f = cs->body_first[b], k = cs->body_size[b], d = cs->d;
                for (int a = 0; a < d; a++) {
                    double v0 = y[nd + f * d + a];
                    T += 0.5 * exp(s.params[s.m.off_mass + f]) * v0 * v0;
                    for (int j = 1; j < k; j++) {
                        double u = y[nd + (f + j) * d + a] - v0;
                        T += 0.5 * exp(s.params[s.m.off_mass + f + j]) * u * u;
                    }
                }
            }
            if (pass) T1 = T;
            else T0 = T;
        }
    }
    double H0 = T0 + V0, H1 = T1 + V1;
    CHECK_MSG(fabs(H1 - H0) < 1e-7 * (fabs(H0) + 1.0), "%s %s: learned energy %.12g -> %.12g", sysname,
              imp_cmodel_kind_name(kind), H0, H1);
    double phi[IMP_CSYS_MAX_ROWS], phid[IMP_CSYS_MAX_ROWS], worst = 0;
    imp_csystem_violation(&s.m.sys, traj + (size_t)n * 2 * nd, phi, phid);
    for (int c = 0; c < C; c++) worst = fmax(worst, fmax(fabs(phi[c]), fabs(phid[c])));
    CHECK_MSG(worst < 1e-7, "%s %s: constraint drift %g", sysname, imp_cmodel_kind_name(kind), worst);
    /* and the learned energy actually changes the state (not a frozen test) */
    double moved = 0;
    for (int k = 0; k < nd; k++) moved = fmax(moved, fabs(traj[(size_t)n * 2 * nd + k] - y0[k]));
    CHECK(moved > 1e-2);
    free(traj);
    imp_mlp_work_free(mw);
    release(&s);
}

/* Central differences of L = fbar . f(y; theta) against the VJP. */
static void test_vjp(const char *sysname, imp_cmodel_kind kind)
{
    const int B = 3;
    setup s;
    CHECK_OK(make(&s, kind, sysname, 16, B, 31));
    imp_rng rng;
    imp_rng_seed(&rng, 13);
    int dim = s.m.dim;
    double *y = malloc(B * dim * sizeof(double)), *fbar = malloc(B * dim * sizeof(double));
    double *f = malloc(B * dim * sizeof(double)), *ybar = calloc(B * dim, sizeof(double));
    double *tbar = calloc(s.m.n_params, sizeof(double));
    if (s.m.cartesian) {
        for (int b = 0; b < B; b++) random_state(&s.m.sys, &rng, y + b * dim, 0);
    } else {
        for (int k = 0; k < B * dim; k++) y[k] = imp_rng_normal(&rng);
    }
    for (int k = 0; k < B * dim; k++) fbar[k] = imp_rng_normal(&rng);
    CHECK_OK(imp_cmodel_rhs_vjp(&s.m, s.params, y, B, fbar, ybar, tbar, s.w));
    /* a second call without theta_bar gives the same ybar contribution */
    double *ybar2 = calloc(B * dim, sizeof(double));
    CHECK_OK(imp_cmodel_rhs_vjp(&s.m, s.params, y, B, fbar, ybar2, NULL, s.w));
    double dmax = 0;
    for (int k = 0; k < B * dim; k++) dmax = fmax(dmax, fabs(ybar[k] - ybar2[k]));
    CHECK_CLOSE(dmax, 0.0, 0, 1e-12);
    const double h = 1e-6;
#define LOSS(out)                                                                          \
    do {                                                                                   \
        CHECK_OK(imp_cmodel_rhs(&s.m, s.params, y, B, f, s.w));                           \
        double acc_ = 0;                                                                   \
        for (int q_ = 0; q_ < B * dim; q_++) acc_ += fbar[q_] * f[q_];                    \
        (out) = acc_;                                                                      \
    } while (0)
    double *num = malloc(B * dim * sizeof(double));
    for (int k = 0; k < B * dim; k++) {
        double keep = y[k], lp, lm;
        y[k] = keep + h;
        LOSS(lp);
        y[k] = keep - h;
        LOSS(lm);
        y[k] = keep;
        num[k] = (lp - lm) / (2 * h);
    }
    double e = test_grad_rel_err(ybar, num, B * dim, 1e-3);
    CHECK_MSG(e < 1e-6, "%s %s: state VJP rel err %g", sysname, imp_cmodel_kind_name(kind), e);
    /* parameters: 40 random MLP entries (every layer hit) and all masses */
    int np = 0;
    size_t idx[64];
    for (int l = 0; l < s.m.net.n_layers; l++) {
        idx[np++] = s.m.net.w_off[l] + imp_rng_below(&rng, (size_t)s.m.net.sizes[l] * s.m.net.sizes[l + 1]);
        idx[np++] = s.m.net.b_off[l] + imp_rng_below(&rng, (size_t)s.m.net.sizes[l + 1]);
    }
    if (kind == IMP_CMODEL_HNN || kind == IMP_CMODEL_DELAN) {
        const imp_mlp *mn = &s.m.mass_net;
        for (int l = 0; l < mn->n_layers; l++)
            for (int rep = 0; rep < 3; rep++) {
                idx[np++] = s.m.off_mass + mn->w_off[l] + imp_rng_below(&rng, (size_t)mn->sizes[l] * mn->sizes[l + 1]);
                idx[np++] = s.m.off_mass + mn->b_off[l] + imp_rng_below(&rng, (size_t)mn->sizes[l + 1]);
            }
    }
    while (np < 40) idx[np++] = imp_rng_below(&rng, s.m.net.n_params);
    for (size_t p = s.m.off_mass; p < s.m.n_params && np < 64; p++) idx[np++] = p;
    double an[64], nu[64];
    for (int i = 0; i < np; i++) {
        double keep = s.params[idx[i]], lp, lm;
        s.params[idx[i]] = keep + h;
        LOSS(lp);
        s.params[idx[i]] = keep - h;
        LOSS(lm);
        s.params[idx[i]] = keep;
        nu[i] = (lp - lm) / (2 * h);
        an[i] = tbar[idx[i]];
    }
#undef LOSS
    e = test_grad_rel_err(an, nu, np, 1e-3);
    CHECK_MSG(e < 1e-6, "%s %s: parameter VJP rel err %g", sysname, imp_cmodel_kind_name(kind), e);
    free(y); free(fbar); free(f); free(ybar); free(ybar2); free(tbar); free(num);
    release(&s);
}

static void test_bad_input(void)
{
    imp_csystem cs;
    imp_cmodel m;
    CHECK_OK(imp_csystem_from_name(&cs, "pendulum-chain:2"));
    CHECK_FAILS(imp_cmodel_init(&m, IMP_CMODEL_CHNN, &cs, 0, 3), IMP_ERR_INVALID);
    CHECK_FAILS(imp_cmodel_init(&m, IMP_CMODEL_CHNN, &cs, 32, 0), IMP_ERR_INVALID);
    CHECK_OK(imp_cmodel_init(&m, IMP_CMODEL_HNN, &cs, 32, 3));
    /* the reference HNN on the 3-pendulum has 269,322 parameters */
    imp_csystem cs3;
    CHECK_OK(imp_csystem_from_name(&cs3, "pendulum-chain:3"));
    CHECK_OK(imp_cmodel_init(&m, IMP_CMODEL_HNN, &cs3, 256, 3));
    CHECK(m.n_params == 269322);
    imp_cmodel_kind k;
    CHECK_FAILS(imp_cmodel_kind_from_name("vin", &k), IMP_ERR_NOT_FOUND);
    CHECK_OK(imp_cmodel_kind_from_name("clnn", &k));
    CHECK(k == IMP_CMODEL_CLNN);
    /* batch larger than the work buffers */
    setup s;
    CHECK_OK(make(&s, IMP_CMODEL_CHNN, "pendulum-chain:2", 8, 2, 1));
    double y[3 * 8] = {0}, f[3 * 8];
    CHECK_FAILS(imp_cmodel_rhs(&s.m, s.params, y, 3, f, s.w), IMP_ERR_INVALID);
    /* a degenerate state (both points at the anchor) has a singular Gram matrix */
    CHECK_FAILS(imp_cmodel_rhs(&s.m, s.params, y, 1, f, s.w), IMP_ERR_NUMERIC);
    release(&s);
    /* parameter count of the reference's 3-pendulum CHNN: 133,636 */
    CHECK_OK(imp_csystem_from_name(&cs, "pendulum-chain:3"));
    CHECK_OK(imp_cmodel_init(&m, IMP_CMODEL_CHNN, &cs, 256, 3));
    CHECK(m.n_params == 133636);
}

int main(void)
{
    imp_blas_init();
    test_systems();
    test_bad_input();
    const char *syss[6] = {"pendulum-chain:3", "gyroscope", "rotor", "coupled-pendulums:3",
                           "magnet-pendulum", "pendulum-chain:5"};
    for (int i = 0; i < 6; i++) {
        test_projection_property(syss[i], IMP_CMODEL_CHNN);
        test_projection_property(syss[i], IMP_CMODEL_CLNN);
        test_vjp(syss[i], IMP_CMODEL_CHNN);
        test_vjp(syss[i], IMP_CMODEL_CLNN);
    }
    test_conservation("pendulum-chain:2", IMP_CMODEL_CHNN);
    test_conservation("gyroscope", IMP_CMODEL_CHNN);
    test_conservation("pendulum-chain:3", IMP_CMODEL_CLNN);
    test_vjp("pendulum-chain:2", IMP_CMODEL_NODE);
    test_vjp("pendulum-chain:1", IMP_CMODEL_NODE);
    test_vjp("gyroscope", IMP_CMODEL_NODE);
    test_vjp("rotor", IMP_CMODEL_NODE);
    const char *gsys[4] = {"pendulum-chain:2", "pendulum-chain:3", "gyroscope", "rotor"};
    for (int i = 0; i < 4; i++) {
        test_vjp(gsys[i], IMP_CMODEL_HNN);
        test_vjp(gsys[i], IMP_CMODEL_DELAN);
    }
    TEST_MAIN_END();
}
