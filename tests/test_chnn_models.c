/* Constrained-network models: system descriptions, the projection property
 * of CHNN/CLNN (the dynamics keep Phi-dot and Phi-ddot at zero), learned
 * energy and constraint conservation along a fine RK4 trajectory, and
 * central finite-difference checks of every model's dynamics VJP with
 * respect to the state and the parameters. */
#include "impulse/chnn_models.h"
#include "impulse/integrate.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A rigid body (com + 3 unit axes, rotated by random angles) or a pendulum
 * chain on its constraint manifold; velocities random (on the tangent space
 * for pendulums). */
static void random_state(const imp_csystem *cs, imp_rng *rng, double *y, int on_manifold)
{
    int d = cs->d, nd = cs->n_points * d;
    if (!strncmp(cs->name, "pendulum", 8)) {
        double z[2 * IMP_CS_MAX_GEN];
        for (int i = 0; i < cs->n_gen; i++) {
            z[i] = imp_rng_uniform_range(rng, -1.5, 1.5);
            z[cs->n_gen + i] = imp_rng_normal(rng);
        }
        imp_csystem_from_generalised(cs, z, y);
        if (!on_manifold)
            for (int k = 0; k < 2 * nd; k++) y[k] += 0.05 * imp_rng_normal(rng);
        return;
    }
    /* rotation from three random angles (ZXZ) */
    double a = imp_rng_normal(rng), b = imp_rng_normal(rng), c = imp_rng_normal(rng);
    double Rz1[9] = {cos(a), -sin(a), 0, sin(a), cos(a), 0, 0, 0, 1};
    double Rx[9] = {1, 0, 0, 0, cos(b), -sin(b), 0, sin(b), cos(b)};
    double Rz2[9] = {cos(c), -sin(c), 0, sin(c), cos(c), 0, 0, 0, 1};
    double T1[9] = {0}, R[9] = {0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) T1[i * 3 + j] += Rz1[i * 3 + k] * Rx[k * 3 + j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) R[i * 3 + j] += T1[i * 3 + k] * Rz2[k * 3 + j];
    for (int i = 0; i < 3; i++) y[i] = 0.3 * imp_rng_normal(rng);
    for (int ax = 0; ax < 3; ax++)
        for (int i = 0; i < 3; i++) y[(1 + ax) * 3 + i] = y[i] + R[i * 3 + ax];
    /* rigid velocity: v_p = v0 + w x (x_p - x0) */
    double v0[3], om[3];
    for (int i = 0; i < 3; i++) {
        v0[i] = 0.5 * imp_rng_normal(rng);
        om[i] = imp_rng_normal(rng);
    }
    for (int p = 0; p < 4; p++) {
        double r[3];
        for (int i = 0; i < 3; i++) r[i] = y[p * 3 + i] - y[i];
        double cr[3] = {om[1] * r[2] - om[2] * r[1], om[2] * r[0] - om[0] * r[2], om[0] * r[1] - om[1] * r[0]};
        for (int i = 0; i < 3; i++) y[nd + p * 3 + i] = v0[i] + cr[i];
    }
    /* ball-joint rows (weights sum to 1): translate the body so the pivot
     * sits at its fixed point at rest */
    for (int c = 0; c < cs->n_rows; c++) {
        const imp_cs_row *r = &cs->rows[c];
        if (r->kind != IMP_CS_LINEAR) continue;
        double px = -r->value, pv = 0;
        for (int t = 0; t < r->n_terms; t++) {
            px += r->w[t] * y[r->idx[t]];
            pv += r->w[t] * y[nd + r->idx[t]];
        }
        int axis = r->idx[0] % d;
        for (int p = 0; p < cs->n_points; p++) {
            y[p * d + axis] -= px;
            y[nd + p * d + axis] -= pv;
        }
    }
    if (!on_manifold)
        for (int k = 0; k < 2 * nd; k++) y[k] += 0.05 * imp_rng_normal(rng);
}

static void test_systems(void)
{
    imp_csystem cs;
    CHECK_OK(imp_csystem_from_name(&cs, "pendulum-chain:3"));
    CHECK(cs.d == 2 && cs.n_points == 3 && cs.n_rows == 3 && cs.n_gen == 3);
    CHECK_OK(imp_csystem_from_name(&cs, "gyroscope"));
    CHECK(cs.d == 3 && cs.n_points == 4 && cs.n_rows == 9);
    CHECK_OK(imp_csystem_from_name(&cs, "rotor"));
    CHECK(cs.n_rows == 6 && cs.gravity == 0.0);
    CHECK_FAILS(imp_csystem_from_name(&cs, "double-pendulum"), IMP_ERR_NOT_FOUND);
    CHECK_FAILS(imp_csystem_from_name(&cs, "pendulum-chain:0"), IMP_ERR_INVALID);
    CHECK_FAILS(imp_csystem_from_name(&cs, "pendulum-chain:3x"), IMP_ERR_INVALID);

    /* generalised <-> Cartesian round trip, and the Cartesian state sits on
     * the constraint manifold */
    imp_rng rng;
    imp_rng_seed(&rng, 3);
    CHECK_OK(imp_csystem_from_name(&cs, "pendulum-chain:3"));
    double y[12], z[6], y2[12], phi[3], phid[3];
    random_state(&cs, &rng, y, 1);
    CHECK_OK(imp_csystem_to_generalised(&cs, y, z));
    CHECK_OK(imp_csystem_from_generalised(&cs, z, y2));
    double e = 0;
    for (int k = 0; k < 12; k++) e = fmax(e, fabs(y[k] - y2[k]));
    CHECK_CLOSE(e, 0.0, 0, 1e-12);
    imp_csystem_violation(&cs, y, phi, phid);
    for (int c = 0; c < 3; c++) {
        CHECK_CLOSE(phi[c], 0.0, 0, 1e-12);
        CHECK_CLOSE(phid[c], 0.0, 0, 1e-12);
    }
    /* the gyroscope's rigid body satisfies its internal constraints */
    CHECK_OK(imp_csystem_from_name(&cs, "gyroscope"));
    double yg[24], pg[9], pdg[9];
    random_state(&cs, &rng, yg, 1);
    imp_csystem_violation(&cs, yg, pg, pdg);
    for (int c = 0; c < 9; c++) {
        CHECK_CLOSE(pg[c], 0.0, 0, 1e-12);
        CHECK_CLOSE(pdg[c], 0.0, 0, 1e-12);
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
    s->w = imp_cmodel_work_new(&s->m, B);
    return s->w ? IMP_OK : IMP_ERR_NOMEM;
}

static void release(setup *s)
{
    free(s->params);
    imp_cmodel_work_free(s->w);
}

/* The dynamics satisfy G^T zdot = 0 at any state: D xdot = 0 and
 * A xdot + D vdot = 0 (CHNN, [F] eq 6); CLNN: A v + D vdot = 0. */
static void test_projection_property(const char *sysname, imp_cmodel_kind kind)
{
    setup s;
    CHECK_OK(make(&s, kind, sysname, 32, 4, 11));
    imp_rng rng;
    imp_rng_seed(&rng, 5);
    int nd = s.m.sys.n_points * s.m.sys.d, C = s.m.sys.n_rows;
    double y[4 * 48], f[4 * 48];
    for (int b = 0; b < 4; b++) random_state(&s.m.sys, &rng, y + b * 2 * nd, 0);
    CHECK_OK(imp_cmodel_rhs(&s.m, s.params, y, 4, f, s.w));
    double worst1 = 0, worst2 = 0;
    for (int b = 0; b < 4; b++) {
        const double *yb = y + b * 2 * nd, *fb = f + b * 2 * nd;
        /* Phi_dot(x, xdot) and the time derivative of Phi_dot(x, v):
         * evaluate with the constraint code: violation(x, u) gives D(x) u
         * in phidot for distance rows (minus const for linear rows). */
        double yy[96], phi[32], pd1[32], pd2[32], pd3[32];
        memcpy(yy, yb, nd * sizeof(double));
        memcpy(yy + nd, fb, nd * sizeof(double)); /* u = xdot */
        imp_csystem_violation(&s.m.sys, yy, phi, pd1);
        memcpy(yy + nd, fb + nd, nd * sizeof(double)); /* u = vdot */
        imp_csystem_violation(&s.m.sys, yy, phi, pd2);
        /* A w = D(w) applied to v for distance rows: Phidot(x=w..): use
         * x = xdot (kind CHNN) or v (CLNN), velocity = v */
        memcpy(yy, kind == IMP_CMODEL_CHNN ? fb : yb + nd, nd * sizeof(double));
        memcpy(yy + nd, yb + nd, nd * sizeof(double));
        /* anchors would shift D(w); evaluate the linear part as
         * D(x+w) - D(x) via two calls */
        double yx[96], base[32];
        memcpy(yx, yb, nd * sizeof(double));
        memcpy(yx + nd, yb + nd, nd * sizeof(double));
        imp_csystem_violation(&s.m.sys, yx, phi, base); /* D(x) v */
        for (int k = 0; k < nd; k++) yx[k] = yb[k] + yy[k];
        imp_csystem_violation(&s.m.sys, yx, phi, pd3);  /* D(x + w) v */
        for (int c = 0; c < C; c++) {
            double Aw_v = 0; /* A w = L(v) w = L(w) v for distance rows */
            if (s.m.sys.rows[c].kind == IMP_CS_DISTANCE) Aw_v = pd3[c] - base[c];
            if (kind == IMP_CMODEL_CHNN) worst1 = fmax(worst1, fabs(pd1[c]));
            worst2 = fmax(worst2, fabs(Aw_v + pd2[c]));
        }
    }
    CHECK_MSG(worst1 < 1e-10, "%s %s: |D xdot| = %g", sysname, imp_cmodel_kind_name(kind), worst1);
    CHECK_MSG(worst2 < 1e-9, "%s %s: |A w + D vdot| = %g", sysname, imp_cmodel_kind_name(kind), worst2);
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
    double y0[48];
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
    double phi[32], phid[32], worst = 0;
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
    while (np < 24) idx[np++] = imp_rng_below(&rng, s.m.net.n_params);
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
    CHECK_FAILS(imp_cmodel_init(&m, IMP_CMODEL_HNN, &cs, 32, 3), IMP_ERR_UNSUPPORTED);
    imp_cmodel_kind k;
    CHECK_FAILS(imp_cmodel_kind_from_name("resnet", &k), IMP_ERR_NOT_FOUND);
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
    const char *syss[3] = {"pendulum-chain:3", "gyroscope", "rotor"};
    for (int i = 0; i < 3; i++) {
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
    TEST_MAIN_END();
}
