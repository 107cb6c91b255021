/* Integrators: convergence orders (fitted slopes), exact discrete adjoints
 * against central finite differences, DOPRI5 dense output and tolerance
 * proportionality, and errors on bad input. */
#include "impulse/core.h"
#include "impulse/integrate.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* y' = cos(t) y (per component, scaled by row index): y = y0 exp(s sin t).
 * Time-dependent so that the stage times c_i are exercised. */
static int rhs_exp_sin(void *user, double t, const double *y, int B, double *f)
{
    (void)user;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < 2; i++) f[b * 2 + i] = (1.0 + 0.5 * i + b) * cos(t) * y[b * 2 + i];
    return IMP_OK;
}
static double exact_exp_sin(double t, int b, int i, double y0)
{
    return y0 * exp((1.0 + 0.5 * i + b) * sin(t));
}

/* Least-squares slope of log(err) against log(h). */
static double fit_slope(const double *h, const double *e, int n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double x = log(h[i]), y = log(e[i]);
        sx += x; sy += y; sxx += x * x; sxy += x * y;
    }
    return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

static double fixed_error(const imp_stepper_type *st, int n_steps)
{
    imp_ode ode = {2, 0, rhs_exp_sin, NULL, NULL};
    const int B = 2;
    double T = 2.0, y0[4] = {1.0, 0.5, -0.3, 2.0};
    double *traj = malloc((size_t)(n_steps + 1) * 4 * sizeof(double));
    int rc = imp_integrate_fixed(st, &ode, 0.0, T / n_steps, n_steps, y0, B, traj);
    double err = 0;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < 2; i++) {
            double d = fabs(traj[(size_t)n_steps * 4 + b * 2 + i] - exact_exp_sin(T, b, i, y0[b * 2 + i]));
            if (d > err) err = d;
        }
    free(traj);
    return rc ? NAN : err;
}

static void test_fixed_orders(void)
{
    const imp_stepper_type *sts[2] = {&imp_stepper_euler, &imp_stepper_rk4};
    int ns[2][4] = {{200, 400, 800, 1600}, {20, 40, 80, 160}};
    for (int s = 0; s < 2; s++) {
        double h[4], e[4];
        for (int k = 0; k < 4; k++) {
            h[k] = 2.0 / ns[s][k];
            e[k] = fixed_error(sts[s], ns[s][k]);
        }
        double slope = fit_slope(h, e, 4);
        printf("%s: errors %.3e %.3e %.3e %.3e, fitted order %.3f\n", sts[s]->name, e[0], e[1],
               e[2], e[3], slope);
        CHECK_CLOSE(slope, (double)sts[s]->order, 0.05, 0.0);
    }
}

/* DOPRI5 taken one forced step at a time (huge tolerance, h0 = h) is the
 * 5th-order Dormand-Prince method: global error O(h^5). The dense output at
 * mid-step is 4th order: global error O(h^4). */
static void test_dopri5_orders(void)
{
    imp_ode ode = {2, 0, rhs_exp_sin, NULL, NULL};
    int ns[4] = {20, 40, 80, 160};
    double hs[4], e_end[4], e_mid[4];
    double T = 2.0;
    for (int k = 0; k < 4; k++) {
        int N = ns[k];
        double h = T / N;
        hs[k] = h;
        double y[4] = {1.0, 0.5, -0.3, 2.0}, y0[4] = {1.0, 0.5, -0.3, 2.0};
        double emid = 0;
        for (int j = 0; j < N; j++) {
            double tj = j * h, tout[2] = {tj + 0.5 * h, tj + h}, yo[8];
            imp_dopri5_opts o = {1e12, 1e12, h, 0};
            imp_dopri5_stats stt;
            int rc = imp_dopri5_solve(&ode, &o, tj, y, 2, tout, 2, yo, &stt);
            if (rc || stt.n_steps != 1) { CHECK(0); return; }
            /* the mid-step error relative to the exact flow from y (local) */
            for (int q = 0; q < 4; q++) {
                double ex = exact_exp_sin(tj + 0.5 * h, q / 2, q % 2, 1.0) /
                            exact_exp_sin(tj, q / 2, q % 2, 1.0) * y[q];
                if (fabs(yo[q] - ex) > emid) emid = fabs(yo[q] - ex);
            }
            for (int q = 0; q < 4; q++) y[q] = yo[4 + q];
        }
        double e = 0;
        for (int q = 0; q < 4; q++) {
            double d = fabs(y[q] - exact_exp_sin(T, q / 2, q % 2, y0[q]));
            if (d > e) e = d;
        }
        e_end[k] = e;
        e_mid[k] = emid;
    }
    double s5 = fit_slope(hs, e_end, 4), s_dense = fit_slope(hs, e_mid, 4);
    printf("dopri5 fixed steps: end errors %.3e..%.3e order %.3f; dense local order %.3f\n",
           e_end[0], e_end[3], s5, s_dense);
    CHECK_CLOSE(s5, 5.0, 0.06, 0.0);
    /* local error of the 4th-order interpolant is O(h^5) */
    CHECK_CLOSE(s_dense, 5.0, 0.1, 0.0);
}

static void test_dopri5_tolerance(void)
{
    imp_ode ode = {2, 0, rhs_exp_sin, NULL, NULL};
    double tols[4] = {1e-5, 1e-7, 1e-9, 1e-11}, errs[4];
    double tout[40], y0[4] = {1.0, 0.5, -0.3, 2.0}, *yo = malloc(40 * 4 * sizeof(double));
    for (int i = 0; i < 40; i++) tout[i] = 0.1 * (i + 1);
    for (int k = 0; k < 4; k++) {
        imp_dopri5_opts o = {tols[k], tols[k], 0, 0};
        imp_dopri5_stats stt;
        CHECK_OK(imp_dopri5_solve(&ode, &o, 0.0, y0, 2, tout, 40, yo, &stt));
        double e = 0;
        for (int i = 0; i < 40; i++)
            for (int q = 0; q < 4; q++) {
                double ex = exact_exp_sin(tout[i], q / 2, q % 2, y0[q]);
                double d = fabs(yo[i * 4 + q] - ex) / (1.0 + fabs(ex));
                if (d > e) e = d;
            }
        errs[k] = e;
        printf("dopri5 tol %.0e: max rel error %.3e, %ld steps, %ld rejected, %ld rhs\n", tols[k],
               e, stt.n_steps, stt.n_rejected, stt.n_rhs);
        CHECK(e < 200.0 * tols[k]);
    }
    double slope = fit_slope(tols, errs, 4);
    printf("dopri5 error ~ tol^%.3f\n", slope);
    CHECK(slope > 0.7 && slope < 1.2);
    free(yo);
}

/* A small parametrised nonlinear ODE with an analytic VJP:
 * f0 = th0 y1 + th1 sin(y0) + 0.1 t,  f1 = -th2 y0 y1 + th0 cos(y1). */
typedef struct { double th[3]; } par_ode;
static int rhs_par(void *user, double t, const double *y, int B, double *f)
{
    const double *th = ((par_ode *)user)->th;
    for (int b = 0; b < B; b++) {
        const double *yb = y + 2 * b;
        f[2 * b] = th[0] * yb[1] + th[1] * sin(yb[0]) + 0.1 * t;
        f[2 * b + 1] = -th[2] * yb[0] * yb[1] + th[0] * cos(yb[1]);
    }
    return IMP_OK;
}
static int rhs_par_vjp(void *user, double t, const double *y, int B, const double *fb,
                       double *yb_out, double *thb)
{
    (void)t;
    const double *th = ((par_ode *)user)->th;
    for (int b = 0; b < B; b++) {
        const double *yb = y + 2 * b;
        double g0 = fb[2 * b], g1 = fb[2 * b + 1];
        yb_out[2 * b] += g0 * th[1] * cos(yb[0]) + g1 * (-th[2] * yb[1]);
        yb_out[2 * b + 1] += g0 * th[0] + g1 * (-th[2] * yb[0] - th[0] * sin(yb[1]));
        if (thb) {
            thb[0] += g0 * yb[1] + g1 * cos(yb[1]);
            thb[1] += g0 * sin(yb[0]);
            thb[2] += g1 * (-yb[0] * yb[1]);
        }
    }
    return IMP_OK;
}

static double traj_loss(const imp_stepper_type *st, par_ode *p, const double *y0, int n_steps,
                        const double *w)
{
    imp_ode ode = {2, 3, rhs_par, rhs_par_vjp, p};
    size_t n = (size_t)(n_steps + 1) * 4;
    double *traj = malloc(n * sizeof(double));
    if (imp_integrate_fixed(st, &ode, 0.3, 0.1, n_steps, y0, 2, traj)) { free(traj); return NAN; }
    double L = 0;
    for (size_t i = 0; i < n; i++) L += w[i] * traj[i];
    free(traj);
    return L;
}

static void test_adjoints(void)
{
    imp_rng rng;
    imp_rng_seed(&rng, 7);
    par_ode p = {{0.8, -0.6, 0.4}};
    imp_ode ode = {2, 3, rhs_par, rhs_par_vjp, &p};
    double y[4] = {0.3, -0.7, 1.1, 0.2};
    /* rhs_vjp itself */
    {
        double fb[4], yb[4] = {0}, thb[3] = {0}, num_y[4], num_th[3], fp[4], fm[4];
        for (int i = 0; i < 4; i++) fb[i] = imp_rng_normal(&rng);
        rhs_par_vjp(&p, 0.2, y, 2, fb, yb, thb);
        double eps = 1e-6;
        for (int i = 0; i < 4; i++) {
            double yy[4]; for (int q = 0; q < 4; q++) yy[q] = y[q];
            yy[i] += eps; rhs_par(&p, 0.2, yy, 2, fp);
            yy[i] -= 2 * eps; rhs_par(&p, 0.2, yy, 2, fm);
            num_y[i] = 0; for (int q = 0; q < 4; q++) num_y[i] += fb[q] * (fp[q] - fm[q]) / (2 * eps);
        }
        for (int j = 0; j < 3; j++) {
            par_ode pp = p; pp.th[j] += eps; rhs_par(&pp, 0.2, y, 2, fp);
            pp.th[j] -= 2 * eps; rhs_par(&pp, 0.2, y, 2, fm);
            num_th[j] = 0; for (int q = 0; q < 4; q++) num_th[j] += fb[q] * (fp[q] - fm[q]) / (2 * eps);
        }
        CHECK(test_grad_rel_err(yb, num_y, 4, 1e-8) < 1e-7);
        CHECK(test_grad_rel_err(thb, num_th, 3, 1e-8) < 1e-7);
    }
    const imp_stepper_type *sts[2] = {&imp_stepper_euler, &imp_stepper_rk4};
    for (int s = 0; s < 2; s++) {
        const imp_stepper_type *st = sts[s];
        /* single step VJP */
        {
            double *work = malloc(st->work_size(2, 2) * sizeof(double));
            double yb_next[4], yb[4] = {0}, thb[3] = {0}, num_y[4], num_th[3], y1p[4], y1m[4];
            for (int i = 0; i < 4; i++) yb_next[i] = imp_rng_normal(&rng);
            double h = 0.37, eps = 1e-6;
            CHECK_OK(st->step_vjp(&ode, 0.1, h, y, 2, yb_next, yb, thb, work));
            for (int i = 0; i < 4; i++) {
                double yy[4]; for (int q = 0; q < 4; q++) yy[q] = y[q];
                yy[i] += eps; st->step(&ode, 0.1, h, yy, 2, y1p, work);
                yy[i] -= 2 * eps; st->step(&ode, 0.1, h, yy, 2, y1m, work);
                num_y[i] = 0; for (int q = 0; q < 4; q++) num_y[i] += yb_next[q] * (y1p[q] - y1m[q]) / (2 * eps);
            }
            for (int j = 0; j < 3; j++) {
                par_ode pp = p; imp_ode o2 = ode; o2.user = &pp;
                pp.th[j] += eps; st->step(&o2, 0.1, h, y, 2, y1p, work);
                pp.th[j] -= 2 * eps; st->step(&o2, 0.1, h, y, 2, y1m, work);
                num_th[j] = 0; for (int q = 0; q < 4; q++) num_th[j] += yb_next[q] * (y1p[q] - y1m[q]) / (2 * eps);
            }
            double ey = test_grad_rel_err(yb, num_y, 4, 1e-8), et = test_grad_rel_err(thb, num_th, 3, 1e-8);
            printf("%s step_vjp rel err: y %.2e theta %.2e\n", st->name, ey, et);
            CHECK(ey < 1e-7);
            CHECK(et < 1e-7);
            free(work);
        }
        /* whole trajectory VJP */
        {
            int n_steps = 12;
            size_t n = (size_t)(n_steps + 1) * 4;
            double *w = malloc(n * sizeof(double)), *traj = malloc(n * sizeof(double));
            for (size_t i = 0; i < n; i++) w[i] = imp_rng_normal(&rng);
            CHECK_OK(imp_integrate_fixed(st, &ode, 0.3, 0.1, n_steps, y, 2, traj));
            double y0b[4] = {0}, thb[3] = {0}, num_y[4], num_th[3], eps = 1e-6;
            CHECK_OK(imp_integrate_fixed_vjp(st, &ode, 0.3, 0.1, n_steps, traj, 2, w, y0b, thb));
            for (int i = 0; i < 4; i++) {
                double yy[4]; for (int q = 0; q < 4; q++) yy[q] = y[q];
                yy[i] += eps; double Lp = traj_loss(st, &p, yy, n_steps, w);
                yy[i] -= 2 * eps; double Lm = traj_loss(st, &p, yy, n_steps, w);
                num_y[i] = (Lp - Lm) / (2 * eps);
            }
            for (int j = 0; j < 3; j++) {
                par_ode pp = p;
                pp.th[j] += eps; double Lp = traj_loss(st, &pp, y, n_steps, w);
                pp.th[j] -= 2 * eps; double Lm = traj_loss(st, &pp, y, n_steps, w);
                num_th[j] = (Lp - Lm) / (2 * eps);
            }
            double ey = test_grad_rel_err(y0b, num_y, 4, 1e-8), et = test_grad_rel_err(thb, num_th, 3, 1e-8);
            printf("%s integrate_fixed_vjp rel err: y0 %.2e theta %.2e\n", st->name, ey, et);
            CHECK(ey < 1e-6);
            CHECK(et < 1e-6);
            /* accumulation: a second call doubles the gradient */
            double y0b2[4] = {0}, thb2[3] = {0};
            CHECK_OK(imp_integrate_fixed_vjp(st, &ode, 0.3, 0.1, n_steps, traj, 2, w, y0b2, thb2));
            CHECK_OK(imp_integrate_fixed_vjp(st, &ode, 0.3, 0.1, n_steps, traj, 2, w, y0b2, thb2));
            CHECK_CLOSE(y0b2[1], 2 * y0b[1], 1e-12, 1e-14);
            CHECK_CLOSE(thb2[2], 2 * thb[2], 1e-12, 1e-14);
            free(w); free(traj);
        }
    }
}

static int rhs_blowup(void *user, double t, const double *y, int B, double *f)
{
    (void)user; (void)t;
    for (int b = 0; b < B; b++) f[b] = y[b] * y[b];
    return IMP_OK;
}

static void test_bad_input(void)
{
    par_ode p = {{0.8, -0.6, 0.4}};
    imp_ode ode = {2, 3, rhs_par, rhs_par_vjp, &p};
    double y[4] = {0.3, -0.7, 1.1, 0.2}, traj[64], yb[4] = {0};
    CHECK_FAILS(imp_integrate_fixed(&imp_stepper_rk4, &ode, 0, 0.0, 3, y, 2, traj), IMP_ERR_INVALID);
    CHECK_FAILS(imp_integrate_fixed(&imp_stepper_rk4, &ode, 0, -0.1, 3, y, 2, traj), IMP_ERR_INVALID);
    CHECK_FAILS(imp_integrate_fixed(&imp_stepper_rk4, &ode, 0, NAN, 3, y, 2, traj), IMP_ERR_INVALID);
    CHECK_FAILS(imp_integrate_fixed(&imp_stepper_rk4, &ode, 0, 0.1, -1, y, 2, traj), IMP_ERR_INVALID);
    CHECK_FAILS(imp_integrate_fixed(&imp_stepper_rk4, &ode, 0, 0.1, 3, y, 0, traj), IMP_ERR_INVALID);
    CHECK_FAILS(imp_integrate_fixed_vjp(&imp_stepper_rk4, &ode, 0, 0.1, -2, traj, 2, traj, yb, NULL),
                IMP_ERR_INVALID);
    double ynan[4] = {0.3, NAN, 1.1, 0.2};
    CHECK_FAILS(imp_integrate_fixed(&imp_stepper_euler, &ode, 0, 0.1, 3, ynan, 2, traj), IMP_ERR_NUMERIC);
    imp_ode noadj = {2, 3, rhs_par, NULL, &p};
    double work[64];
    CHECK_FAILS(imp_stepper_rk4.step_vjp(&noadj, 0, 0.1, y, 2, y, yb, NULL, work), IMP_ERR_INVALID);
    /* y' = y^2 from y = 1 blows up at t = 1 */
    imp_ode blow = {1, 0, rhs_blowup, NULL, NULL};
    double one = 1.0, big[64];
    CHECK_FAILS(imp_integrate_fixed(&imp_stepper_rk4, &blow, 0, 0.5, 40, &one, 1, big), IMP_ERR_NUMERIC);
    double tout2[2] = {0.5, 2.0}, yo[2];
    imp_dopri5_opts o = {1e-8, 1e-8, 0, 0};
    CHECK_FAILS(imp_dopri5_solve(&blow, &o, 0, &one, 1, tout2, 2, yo, NULL), IMP_ERR_NUMERIC);
    imp_dopri5_opts few = {1e-10, 1e-10, 0, 5};
    double tout1 = 0.9;
    CHECK_FAILS(imp_dopri5_solve(&blow, &few, 0, &one, 1, &tout1, 1, yo, NULL), IMP_ERR_NUMERIC);
    double tbad[2] = {0.5, 0.4};
    CHECK_FAILS(imp_dopri5_solve(&ode, &o, 0, y, 2, tbad, 2, traj, NULL), IMP_ERR_INVALID);
    double tbefore = -1.0;
    CHECK_FAILS(imp_dopri5_solve(&ode, &o, 0, y, 2, &tbefore, 1, traj, NULL), IMP_ERR_INVALID);
    imp_dopri5_opts negtol = {-1e-6, 1e-8, 0, 0};
    CHECK_FAILS(imp_dopri5_solve(&ode, &negtol, 0, y, 2, tout2, 2, traj, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_dopri5_solve(&ode, &o, 0, ynan, 2, tout2, 2, traj, NULL), IMP_ERR_NUMERIC);
    /* output at t0 is the initial state itself */
    double t0out[2] = {0.0, 0.2};
    CHECK_OK(imp_dopri5_solve(&ode, &o, 0, y, 2, t0out, 2, traj, NULL));
    CHECK(traj[0] == y[0] && traj[3] == y[3]);
}

int main(void)
{
    test_fixed_orders();
    test_dopri5_orders();
    test_dopri5_tolerance();
    test_adjoints();
    test_bad_input();
    TEST_MAIN_END();
}
