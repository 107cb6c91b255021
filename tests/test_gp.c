/* GP regression: LML and its gradient against finite differences and a dense
 * reference, predictions against an exact dense solve, interpolation,
 * hyperparameter search, multi-output, jitter, bad input. */
#include "impulse/core.h"
#include "impulse/gp.h"
#include "test.h"

#include <stdlib.h>

/* Dense reference: Gauss elimination with partial pivoting on A (n x n,
 * row-major, destroyed); solves A X = B for nrhs columns of B (row-major n x
 * nrhs) in place and returns log|det A|. */
static double gauss_solve(double *A, double *B, int n, int nrhs)
{
    double logdet = 0.0;
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(A[r * n + c]) > fabs(A[piv * n + c])) piv = r;
        if (piv != c) {
            for (int j = 0; j < n; j++) {
                double t = A[c * n + j]; A[c * n + j] = A[piv * n + j]; A[piv * n + j] = t;
            }
            for (int j = 0; j < nrhs; j++) {
                double t = B[c * nrhs + j]; B[c * nrhs + j] = B[piv * nrhs + j]; B[piv * nrhs + j] = t;
            }
        }
        logdet += log(fabs(A[c * n + c]));
        for (int r = c + 1; r < n; r++) {
            double f = A[r * n + c] / A[c * n + c];
            for (int j = c; j < n; j++) A[r * n + j] -= f * A[c * n + j];
            for (int j = 0; j < nrhs; j++) B[r * nrhs + j] -= f * B[c * nrhs + j];
        }
    }
    for (int r = n - 1; r >= 0; r--)
        for (int j = 0; j < nrhs; j++) {
            double s = B[r * nrhs + j];
            for (int c = r + 1; c < n; c++) s -= A[r * n + c] * B[c * nrhs + j];
            B[r * nrhs + j] = s / A[r * n + r];
        }
    return logdet;
}

static double kern(const double *a, const double *b, int d, const double *th)
{
    double r2 = 0.0;
    for (int i = 0; i < d; i++) {
        double t = (a[i] - b[i]) / exp(th[i]);
        r2 += t * t;
    }
    return exp(2 * th[d]) * exp(-0.5 * r2);
}

static void make_data(imp_rng *rng, double *x, double *y, int n, int d)
{
    for (int a = 0; a < n; a++) {
        double s = 0.0;
        for (int i = 0; i < d; i++) {
            x[a * d + i] = imp_rng_uniform_range(rng, -2, 2) * (1.0 + i);
            s += sin(x[a * d + i] / (1.0 + i));
        }
        y[a] = s + 0.05 * imp_rng_normal(rng);
    }
}

static void test_lml_dense_and_gradient(void)
{
    enum { N = 18, D = 3 };
    imp_rng rng;
    imp_rng_seed(&rng, 11);
    double x[N * D], y[N];
    make_data(&rng, x, y, N, D);
    double th[D + 2] = {log(0.9), log(1.7), log(3.1), log(1.3), log(0.2)};

    double lml, grad[D + 2], jit = -1;
    CHECK_OK(imp_gp_lml(x, y, N, D, th, &lml, grad, &jit));
    CHECK(jit == 0.0);

    /* dense LML [R&W eq 2.30] */
    double K[N * N], B[N];
    for (int a = 0; a < N; a++) {
        for (int b = 0; b < N; b++) K[a * N + b] = kern(x + a * D, x + b * D, D, th);
        K[a * N + a] += exp(2 * th[D + 1]);
        B[a] = y[a];
    }
    double logdet = gauss_solve(K, B, N, 1);
    double quad = 0.0;
    for (int a = 0; a < N; a++) quad += y[a] * B[a];
    double ref = -0.5 * quad - 0.5 * logdet - 0.5 * N * log(2 * 3.14159265358979323846);
    CHECK_CLOSE(lml, ref, 1e-10, 1e-10);

    /* gradient vs central differences */
    double num[D + 2];
    for (int j = 0; j < D + 2; j++) {
        double tp[D + 2], tm[D + 2], lp, lm;
        memcpy(tp, th, sizeof th);
        memcpy(tm, th, sizeof th);
        tp[j] += 1e-5;
        tm[j] -= 1e-5;
        CHECK_OK(imp_gp_lml(x, y, N, D, tp, &lp, NULL, NULL));
        CHECK_OK(imp_gp_lml(x, y, N, D, tm, &lm, NULL, NULL));
        num[j] = (lp - lm) / 2e-5;
    }
    double err = test_grad_rel_err(grad, num, D + 2, 1e-8);
    CHECK_MSG(err < 1e-6, "lml gradient rel err %.3g", err);

    /* a wrong gradient must be caught: perturb one component */
    grad[1] *= 1.001;
    CHECK(test_grad_rel_err(grad, num, D + 2, 1e-8) > 1e-6);
}

static void test_predict_dense(void)
{
    enum { N = 15, D = 2, M = 7 };
    imp_rng rng;
    imp_rng_seed(&rng, 5);
    double x[N * D], y[N], xs[M * D];
    make_data(&rng, x, y, N, D);
    for (int i = 0; i < M * D; i++) xs[i] = imp_rng_uniform_range(&rng, -3, 3);
    double th[D + 2] = {log(1.1), log(2.0), log(0.8), log(0.1)};
    imp_gp *gp = NULL;
    CHECK_OK(imp_gp_fit_fixed(&gp, x, y, N, D, th, 0));
    double mean[M], var[M];
    CHECK_OK(imp_gp_predict(gp, xs, M, mean, var));

    /* exact: mean = k*^T K^-1 y, var = k** - k*^T K^-1 k* */
    double K[N * N], B[N * (M + 1)];
    for (int a = 0; a < N; a++) {
        for (int b = 0; b < N; b++) K[a * N + b] = kern(x + a * D, x + b * D, D, th);
        K[a * N + a] += exp(2 * th[D + 1]);
        B[a * (M + 1)] = y[a];
        for (int j = 0; j < M; j++) B[a * (M + 1) + 1 + j] = kern(x + a * D, xs + j * D, D, th);
    }
    double Bk[N * (M + 1)];
    memcpy(Bk, B, sizeof B);
    gauss_solve(K, B, N, M + 1);
    for (int j = 0; j < M; j++) {
        double mu = 0.0, q = 0.0;
        for (int a = 0; a < N; a++) {
            mu += Bk[a * (M + 1) + 1 + j] * B[a * (M + 1)];
            q += Bk[a * (M + 1) + 1 + j] * B[a * (M + 1) + 1 + j];
        }
        CHECK_CLOSE(mean[j], mu, 1e-9, 1e-10);
        CHECK_CLOSE(var[j], exp(2 * th[D]) - q, 1e-8, 1e-10);
    }
    imp_gp_free(gp);

    /* standardised fit: predictions are invariant to shifting/scaling y */
    double y2[N];
    for (int a = 0; a < N; a++) y2[a] = 3.0 * y[a] + 7.0;
    imp_gp *g1 = NULL, *g2 = NULL;
    CHECK_OK(imp_gp_fit_fixed(&g1, x, y, N, D, th, 1));
    CHECK_OK(imp_gp_fit_fixed(&g2, x, y2, N, D, th, 1));
    double m1[M], m2[M], v1[M], v2[M];
    CHECK_OK(imp_gp_predict(g1, xs, M, m1, v1));
    CHECK_OK(imp_gp_predict(g2, xs, M, m2, v2));
    for (int j = 0; j < M; j++) {
        CHECK_CLOSE(m2[j], 3.0 * m1[j] + 7.0, 1e-9, 1e-9);
        CHECK_CLOSE(v2[j], 9.0 * v1[j], 1e-9, 1e-12);
    }
    imp_gp_free(g1);
    imp_gp_free(g2);
}

static void test_interpolation_and_fit(void)
{
    enum { N = 14, M = 9 };
    double x[N], y[N];
    for (int a = 0; a < N; a++) {
        x[a] = -3.0 + 6.0 * a / (N - 1);
        y[a] = sin(x[a]);
    }
    imp_gp_options opt;
    imp_gp_options_default(&opt);
    opt.min_noise = 1e-6;
    imp_gp *gp = NULL;
    CHECK_OK(imp_gp_fit(&gp, x, y, N, 1, &opt));
    if (!gp) return;
    double mean[N], var[N];
    CHECK_OK(imp_gp_predict(gp, x, N, mean, var));
    double maxerr = 0.0, maxvar = 0.0;
    for (int a = 0; a < N; a++) {
        maxerr = fmax(maxerr, fabs(mean[a] - y[a]));
        maxvar = fmax(maxvar, var[a]);
    }
    CHECK_MSG(maxerr < 1e-3, "noiseless interpolation error %.3g", maxerr);
    CHECK_MSG(maxvar < 1e-5, "posterior variance at data %.3g", maxvar);
    /* between the samples the GP recovers sin closely */
    double xs[M], ms[M], vs[M];
    for (int j = 0; j < M; j++) xs[j] = -2.7 + 5.4 * j / (M - 1) + 0.11;
    CHECK_OK(imp_gp_predict(gp, xs, M, ms, vs));
    double maxgen = 0.0;
    for (int j = 0; j < M; j++) maxgen = fmax(maxgen, fabs(ms[j] - sin(xs[j])));
    CHECK_MSG(maxgen < 1e-2, "held-out error %.3g", maxgen);
    /* far from the data the variance returns to the prior */
    double far = 40.0, mf, vf;
    CHECK_OK(imp_gp_predict(gp, &far, 1, &mf, &vf));
    CHECK(vf > 0.1 * var[0] && vf > 0.01);
    imp_gp_free(gp);

    /* the optimum beats the default start and is a stationary point */
    enum { N2 = 40, D2 = 3 };
    imp_rng rng;
    imp_rng_seed(&rng, 3);
    double x2[N2 * D2], y2[N2];
    make_data(&rng, x2, y2, N2, D2);
    imp_gp *g = NULL, *g_again = NULL, *g0 = NULL;
    CHECK_OK(imp_gp_fit(&g, x2, y2, N2, D2, NULL));
    CHECK_OK(imp_gp_fit(&g_again, x2, y2, N2, D2, NULL));
    double th0[D2 + 2] = {0, 0, 0, 0, log(0.1)};
    CHECK_OK(imp_gp_fit_fixed(&g0, x2, y2, N2, D2, th0, 1));
    if (g && g0 && g_again) {
        CHECK(g->lml > g0->lml + 1.0);
        int same = 1;
        for (int i = 0; i < D2 + 2; i++) same &= g->log_theta[i] == g_again->log_theta[i];
        CHECK(same); /* deterministic restarts */
        double lml, grad[D2 + 2];
        double ys[N2];
        for (int a = 0; a < N2; a++) ys[a] = (y2[a] - g->y_mean) / g->y_scale;
        CHECK_OK(imp_gp_lml(g->x, ys, N2, D2, g->log_theta, &lml, grad, NULL));
        CHECK_CLOSE(lml, g->lml, 1e-9, 1e-9);
        double gmax = 0.0;
        for (int i = 0; i < D2 + 2; i++)
            if (g->log_theta[i] > log(1e-2) + 1e-9 && g->log_theta[i] < log(1e3) - 1e-9)
                gmax = fmax(gmax, fabs(grad[i]));
        CHECK_MSG(gmax < 1e-2, "gradient at optimum %.3g", gmax);
        CHECK(imp_gp_noise_var(g) < 0.02); /* true noise variance 0.0025 */
    }
    imp_gp_free(g);
    imp_gp_free(g_again);
    imp_gp_free(g0);
}

static void test_multi_and_jitter(void)
{
    enum { N = 20, D = 2, K = 2 };
    imp_rng rng;
    imp_rng_seed(&rng, 9);
    double x[N * D], y[N * K], c0[N], c1[N];
    make_data(&rng, x, c0, N, D);
    for (int a = 0; a < N; a++) {
        c1[a] = cos(x[a * D]) * 2.0;
        y[a * K] = c0[a];
        y[a * K + 1] = c1[a];
    }
    imp_gp_multi *mg = NULL;
    CHECK_OK(imp_gp_multi_fit(&mg, x, y, N, D, K, NULL));
    imp_gp *g1 = NULL;
    CHECK_OK(imp_gp_fit(&g1, x, c1, N, D, NULL));
    double xs[4] = {0.1, 0.2, -1.0, 0.7}, mm[2 * K], vm[2 * K], m1[2], v1[2];
    if (mg && g1) {
        CHECK_OK(imp_gp_multi_predict(mg, xs, 2, mm, vm));
        CHECK_OK(imp_gp_predict(g1, xs, 2, m1, v1));
        CHECK_CLOSE(mm[1], m1[0], 1e-12, 1e-12);
        CHECK_CLOSE(mm[3], m1[1], 1e-12, 1e-12);
        CHECK_CLOSE(vm[3], v1[1], 1e-12, 1e-12);
    }
    imp_gp_multi_free(mg);
    imp_gp_free(g1);

    /* duplicated inputs with negligible noise: singular K, rescued by jitter */
    double xd[6] = {0, 0, 1, 1, 2, 2}, yd[6] = {0, 0, 1, 1, 0.5, 0.5};
    double th[3] = {0.0, 0.0, log(1e-12)};
    imp_gp *gd = NULL;
    CHECK_OK(imp_gp_fit_fixed(&gd, xd, yd, 6, 1, th, 0));
    if (gd) {
        CHECK(gd->jitter > 0.0);
        double m;
        CHECK_OK(imp_gp_predict(gd, xd + 2, 1, &m, NULL));
        CHECK_CLOSE(m, 1.0, 0, 1e-4);
    }
    imp_gp_free(gd);
}

static void test_bad_input(void)
{
    double x[6] = {0, 1, 2, 3, 4, 5}, y[3] = {1, 2, 3};
    double th[4] = {0, 0, 0, -2};
    double lml, mean[2];
    imp_gp *gp = NULL;
    CHECK_FAILS(imp_gp_fit(&gp, x, y, 0, 2, NULL), IMP_ERR_SHAPE);
    CHECK_FAILS(imp_gp_fit(&gp, x, y, 3, 0, NULL), IMP_ERR_SHAPE);
    CHECK_FAILS(imp_gp_fit(&gp, x, y, 3, 100, NULL), IMP_ERR_SHAPE);
    CHECK_FAILS(imp_gp_fit(&gp, NULL, y, 3, 2, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_gp_fit(NULL, x, y, 3, 2, NULL), IMP_ERR_INVALID);
    x[3] = NAN;
    CHECK_FAILS(imp_gp_fit(&gp, x, y, 3, 2, NULL), IMP_ERR_NUMERIC);
    CHECK_FAILS(imp_gp_lml(x, y, 3, 2, th, &lml, NULL, NULL), IMP_ERR_NUMERIC);
    x[3] = 3;
    y[1] = INFINITY;
    CHECK_FAILS(imp_gp_fit(&gp, x, y, 3, 2, NULL), IMP_ERR_NUMERIC);
    y[1] = 2;
    th[1] = NAN;
    CHECK_FAILS(imp_gp_fit_fixed(&gp, x, y, 3, 2, th, 1), IMP_ERR_NUMERIC);
    th[1] = 0;
    imp_gp_options opt;
    imp_gp_options_default(&opt);
    opt.min_noise = 0.0;
    CHECK_FAILS(imp_gp_fit(&gp, x, y, 3, 2, &opt), IMP_ERR_INVALID);
    opt.min_noise = 1e-4;
    opt.restarts = -1;
    CHECK_FAILS(imp_gp_fit(&gp, x, y, 3, 2, &opt), IMP_ERR_INVALID);
    CHECK(gp == NULL);
    CHECK_OK(imp_gp_fit_fixed(&gp, x, y, 3, 2, th, 1));
    double xs[4] = {0, 1, NAN, 0};
    CHECK_FAILS(imp_gp_predict(gp, xs, 2, mean, NULL), IMP_ERR_NUMERIC);
    CHECK_FAILS(imp_gp_predict(NULL, xs, 1, mean, NULL), IMP_ERR_INVALID);
    imp_gp_free(gp);
    imp_gp_multi *mg = NULL;
    CHECK_FAILS(imp_gp_multi_fit(&mg, x, y, 3, 2, 0, NULL), IMP_ERR_SHAPE);
}

int main(void)
{
    imp_blas_init();
    test_lml_dense_and_gradient();
    test_predict_dense();
    test_interpolation_and_fit();
    test_multi_and_jitter();
    test_bad_input();
    TEST_MAIN_END();
}
