/* Gaussian-process regression with an ARD squared-exponential kernel:
 * log marginal likelihood and its gradient, conditioning, prediction.
 * Hyperparameter search lives in gp_fit.c. Matrices of size n x n are
 * column-major (LAPACK's layout); K is symmetric, so only its lower triangle
 * is formed. */
#include "impulse/gp.h"
#include "impulse/core.h"
#include "gp_internal.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int imp_gp__check_data(const double *x, const double *y, size_t n, size_t d)
{
    if (n == 0) return imp_fail(IMP_ERR_SHAPE, "gp: n: no training samples");
    if (d == 0) return imp_fail(IMP_ERR_SHAPE, "gp: d: input dimension is 0");
    if (n > 20000) return imp_fail(IMP_ERR_SHAPE, "gp: n: %zu samples exceed the dense limit 20000", n);
    if (d > IMP_GP__MAX_DIM) return imp_fail(IMP_ERR_SHAPE, "gp: d: %zu inputs exceed %d", d, IMP_GP__MAX_DIM);
    if (!x) return imp_fail(IMP_ERR_INVALID, "gp: x: NULL");
    if (!y) return imp_fail(IMP_ERR_INVALID, "gp: y: NULL");
    int st = imp_check_finite(x, n * d, "gp: x");
    if (st) return st;
    return imp_check_finite(y, n, "gp: y");
}

/* Lower triangle of K = Kf + (s_n^2 + jitter) I, column-major; the strict
 * upper triangle is zeroed (dpotrf leaves it alone, and a saved factor must
 * not hold whatever the memory held before). */
static void gp_kernel_matrix(double *K, const double *x, size_t n, size_t d, const double *log_theta,
                             double jitter)
{
    const double sf2 = exp(2.0 * log_theta[d]);
    const double sn2 = exp(2.0 * log_theta[d + 1]);
    double inv_l[IMP_GP__MAX_DIM];
    for (size_t i = 0; i < d; i++) inv_l[i] = exp(-log_theta[i]);
    for (size_t b = 0; b < n; b++) {
        const double *xb = x + b * d;
        for (size_t a = 0; a < b; a++) K[a + b * n] = 0.0;
        K[b + b * n] = sf2 + sn2 + jitter;
        for (size_t a = b + 1; a < n; a++) {
            const double *xa = x + a * d;
            double r2 = 0.0;
            for (size_t i = 0; i < d; i++) {
                double t = (xa[i] - xb[i]) * inv_l[i];
                r2 += t * t;
            }
            K[a + b * n] = sf2 * exp(-0.5 * r2);
        }
    }
}

/* Cholesky of K in place with jitter escalation; K is rebuilt on each retry. */
int imp_gp__factor(double *K, const double *x, size_t n, size_t d, const double *log_theta,
                   double *jitter_used)
{
    const double scale = exp(2.0 * log_theta[d]) + exp(2.0 * log_theta[d + 1]);
    double jitter = 0.0;
    const lapack_int ni = (lapack_int)n;
    for (int attempt = 0; attempt < 6; attempt++) {
        gp_kernel_matrix(K, x, n, d, log_theta, jitter);
        /* the _work form: K is finite by construction (no NaN scan), column-major (no transposed copy) */
        lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', ni, K, ni);
        if (info == 0) {
            if (jitter_used) *jitter_used = jitter;
            return IMP_OK;
        }
        if (info < 0) return imp_fail(IMP_ERR_INVALID, "gp: dpotrf argument %d invalid", (int)-info);
        /* Not positive definite in floating point: add a growing multiple of
         * the kernel scale to the diagonal [R&W §2.2, numerical notes]. */
        jitter = jitter == 0.0 ? 1e-11 * scale : jitter * 10.0;
    }
    return imp_fail(IMP_ERR_NUMERIC,
                    "gp: kernel matrix not positive definite (jitter up to %.3g)", jitter);
}

/* alpha = K^-1 y from the factor L (column-major lower). */
void imp_gp__solve(const double *L, size_t n, const double *y, double *alpha)
{
    memcpy(alpha, y, n * sizeof *alpha);
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int)n, L, (int)n, alpha, 1);
    cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, (int)n, L, (int)n, alpha, 1);
}

/* [R&W eq 2.30] lml = -1/2 y^T alpha - sum log L_ii - n/2 log 2 pi;
 * [R&W eq 5.9] d lml / d theta_j = 1/2 tr((alpha alpha^T - K^-1) dK/dtheta_j).
 * K (n x n) is scratch; alpha (n) receives K^-1 y. */
int imp_gp__lml_work(const double *x, const double *y, size_t n, size_t d,
                     const double *log_theta, double *lml, double *grad, double *jitter_used,
                     double *K, double *alpha)
{
    double jitter = 0.0;
    int st = imp_gp__factor(K, x, n, d, log_theta, &jitter);
    if (st) return st;
    if (jitter_used) *jitter_used = jitter;
    imp_gp__solve(K, n, y, alpha);
    double quad = 0.0, logdet_half = 0.0;
    for (size_t i = 0; i < n; i++) {
        quad += y[i] * alpha[i];
        logdet_half += log(K[i + i * n]);
    }
    *lml = -0.5 * quad - logdet_half - 0.5 * (double)n * IMP_GP__LOG_2PI;
    if (!isfinite(*lml)) return imp_fail(IMP_ERR_NUMERIC, "gp: log marginal likelihood not finite");
    if (!grad) return IMP_OK;

    /* K now holds the lower triangle of K^-1 */
    lapack_int info = LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'L', (lapack_int)n, K, (lapack_int)n);
    if (info != 0) return imp_fail(IMP_ERR_NUMERIC, "gp: dpotri failed (info %d)", (int)info);

    const double sf2 = exp(2.0 * log_theta[d]);
    const double sn2 = exp(2.0 * log_theta[d + 1]);
    memset(grad, 0, (d + 2) * sizeof *grad);
    double inv_l[IMP_GP__MAX_DIM], t2[IMP_GP__MAX_DIM];
    for (size_t i = 0; i < d; i++) inv_l[i] = exp(-log_theta[i]);
    double g_sf = 0.0, g_sn = 0.0;
    for (size_t b = 0; b < n; b++) {
        /* diagonal: dK/dlog s_f = 2 s_f^2, dK/dlog s_n = 2 s_n^2 */
        double q = alpha[b] * alpha[b] - K[b + b * n];
        g_sf += q * sf2;
        g_sn += q * sn2;
        const double *xb = x + b * d;
        for (size_t a = b + 1; a < n; a++) {
            const double *xa = x + a * d;
            double r2 = 0.0;
            for (size_t i = 0; i < d; i++) {
                double t = (xa[i] - xb[i]) * inv_l[i];
                t2[i] = t * t;
                r2 += t2[i];
            }
            double kf = sf2 * exp(-0.5 * r2);
            /* off-diagonal pairs count twice; the 1/2 of eq 5.9 cancels it */
            double w = (alpha[a] * alpha[b] - K[a + b * n]) * kf;
            g_sf += 2.0 * w;
            /* dKf/dlog l_i = Kf (x_i - x'_i)^2 / l_i^2 */
            for (size_t i = 0; i < d; i++) grad[i] += w * t2[i];
        }
    }
    grad[d] = g_sf;
    grad[d + 1] = g_sn;
    return IMP_OK;
}

int imp_gp_lml(const double *x, const double *y, size_t n, size_t d, const double *log_theta,
               double *lml, double *grad, double *jitter_used)
{
    int st = imp_gp__check_data(x, y, n, d);
    if (st) return st;
    if (!log_theta) return imp_fail(IMP_ERR_INVALID, "gp: log_theta: NULL");
    if (!lml) return imp_fail(IMP_ERR_INVALID, "gp: lml: NULL output");
    st = imp_check_finite(log_theta, d + 2, "gp: log_theta");
    if (st) return st;
    double *K = malloc(n * n * sizeof *K);
    double *alpha = malloc(n * sizeof *alpha);
    if (!K || !alpha) {
        free(K);
        free(alpha);
        return imp_fail(IMP_ERR_NOMEM, "gp: cannot allocate %zu x %zu kernel", n, n);
    }
    st = imp_gp__lml_work(x, y, n, d, log_theta, lml, grad, jitter_used, K, alpha);
    free(K);
    free(alpha);
    return st;
}

void imp_gp_free(imp_gp *gp)
{
    if (!gp) return;
    free(gp->x);
    free(gp->x_mean);
    free(gp->x_scale);
    free(gp->log_theta);
    free(gp->chol);
    free(gp->alpha);
    free(gp);
}

imp_gp *imp_gp__alloc(size_t n, size_t d)
{
    imp_gp *gp = calloc(1, sizeof *gp);
    if (!gp) return NULL;
    gp->n = n;
    gp->d = d;
    gp->x = malloc(n * d * sizeof(double));
    gp->x_mean = malloc(d * sizeof(double));
    gp->x_scale = malloc(d * sizeof(double));
    gp->log_theta = malloc((d + 2) * sizeof(double));
    gp->chol = malloc(n * n * sizeof(double));
    gp->alpha = malloc(n * sizeof(double));
    if (!gp->x || !gp->x_mean || !gp->x_scale || !gp->log_theta || !gp->chol || !gp->alpha) {
        imp_gp_free(gp);
        return NULL;
    }
    return gp;
}

/* Fill the standardisation of gp from raw data and write the standardised
 * inputs into gp->x and outputs into ys (n). */
void imp_gp__standardize(imp_gp *gp, const double *x, const double *y, int standardize, double *ys)
{
    size_t n = gp->n, d = gp->d;
    for (size_t i = 0; i < d; i++) {
        double m = 0.0, v = 0.0;
        if (standardize) {
            for (size_t a = 0; a < n; a++) m += x[a * d + i];
            m /= (double)n;
            for (size_t a = 0; a < n; a++) v += (x[a * d + i] - m) * (x[a * d + i] - m);
            v = n > 1 ? sqrt(v / (double)(n - 1)) : 0.0;
        }
        gp->x_mean[i] = m;
        gp->x_scale[i] = v > 0.0 ? v : 1.0; /* a constant feature keeps unit scale */
        for (size_t a = 0; a < n; a++) gp->x[a * d + i] = (x[a * d + i] - m) / gp->x_scale[i];
    }
    double m = 0.0, v = 0.0;
    if (standardize) {
        for (size_t a = 0; a < n; a++) m += y[a];
        m /= (double)n;
        for (size_t a = 0; a < n; a++) v += (y[a] - m) * (y[a] - m);
        v = n > 1 ? sqrt(v / (double)(n - 1)) : 0.0;
    }
    gp->y_mean = m;
    gp->y_scale = v > 0.0 ? v : 1.0;
    for (size_t a = 0; a < n; a++) ys[a] = (y[a] - m) / gp->y_scale;
}

/* Factor K at gp->log_theta and store alpha; gp->x already standardised. */
int imp_gp__condition(imp_gp *gp, const double *ys)
{
    double jitter = 0.0;
    int st = imp_gp__factor(gp->chol, gp->x, gp->n, gp->d, gp->log_theta, &jitter);
    if (st) return st;
    gp->jitter = jitter;
    imp_gp__solve(gp->chol, gp->n, ys, gp->alpha);
    double quad = 0.0, logdet_half = 0.0;
    for (size_t i = 0; i < gp->n; i++) {
        quad += ys[i] * gp->alpha[i];
        logdet_half += log(gp->chol[i + i * gp->n]);
    }
    gp->lml = -0.5 * quad - logdet_half - 0.5 * (double)gp->n * IMP_GP__LOG_2PI;
    return IMP_OK;
}

int imp_gp_fit_fixed(imp_gp **out, const double *x, const double *y, size_t n, size_t d,
                     const double *log_theta, int standardize)
{
    if (!out) return imp_fail(IMP_ERR_INVALID, "gp: out: NULL");
    *out = NULL;
    int st = imp_gp__check_data(x, y, n, d);
    if (st) return st;
    if (!log_theta) return imp_fail(IMP_ERR_INVALID, "gp: log_theta: NULL");
    st = imp_check_finite(log_theta, d + 2, "gp: log_theta");
    if (st) return st;
    imp_gp *gp = imp_gp__alloc(n, d);
    double *ys = malloc(n * sizeof *ys);
    if (!gp || !ys) {
        imp_gp_free(gp);
        free(ys);
        return imp_fail(IMP_ERR_NOMEM, "gp: cannot allocate model for n=%zu", n);
    }
    imp_gp__standardize(gp, x, y, standardize, ys);
    memcpy(gp->log_theta, log_theta, (d + 2) * sizeof(double));
    st = imp_gp__condition(gp, ys);
    free(ys);
    if (st) {
        imp_gp_free(gp);
        return st;
    }
    *out = gp;
    return IMP_OK;
}

double imp_gp_noise_var(const imp_gp *gp)
{
    return exp(2.0 * gp->log_theta[gp->d + 1]) * gp->y_scale * gp->y_scale;
}

/* [R&W eq 2.25-2.26] mean = k*^T alpha, var = k** - |L^-1 k*|^2. */
int imp_gp_predict(const imp_gp *gp, const double *xs, size_t m, double *mean, double *var)
{
    if (!gp) return imp_fail(IMP_ERR_INVALID, "gp: model: NULL");
    if (m == 0) return IMP_OK;
    if (!xs || !mean) return imp_fail(IMP_ERR_INVALID, "gp: predict: xs/mean NULL");
    int st = imp_check_finite(xs, m * gp->d, "gp: xs");
    if (st) return st;
    const size_t n = gp->n, d = gp->d, block = 128;
    double *Ks = malloc(n * block * sizeof *Ks);
    double *z = malloc(d * sizeof *z);
    if (!Ks || !z) {
        free(Ks);
        free(z);
        return imp_fail(IMP_ERR_NOMEM, "gp: predict: cannot allocate %zu x %zu", n, block);
    }
    const double sf2 = exp(2.0 * gp->log_theta[d]);
    double inv_l[IMP_GP__MAX_DIM];
    for (size_t i = 0; i < d; i++) inv_l[i] = exp(-gp->log_theta[i]);
    for (size_t j0 = 0; j0 < m; j0 += block) {
        size_t mb = m - j0 < block ? m - j0 : block;
        for (size_t j = 0; j < mb; j++) {
            const double *xj = xs + (j0 + j) * d;
            for (size_t i = 0; i < d; i++) z[i] = (xj[i] - gp->x_mean[i]) / gp->x_scale[i];
            for (size_t a = 0; a < n; a++) {
                const double *xa = gp->x + a * d;
                double r2 = 0.0;
                for (size_t i = 0; i < d; i++) {
                    double t = (xa[i] - z[i]) * inv_l[i];
                    r2 += t * t;
                }
                Ks[a + j * n] = sf2 * exp(-0.5 * r2);
            }
        }
        cblas_dgemv(CblasColMajor, CblasTrans, (int)n, (int)mb, 1.0, Ks, (int)n, gp->alpha, 1,
                    0.0, mean + j0, 1);
        for (size_t j = 0; j < mb; j++) mean[j0 + j] = gp->y_mean + gp->y_scale * mean[j0 + j];
        if (var) {
            cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, (int)n,
                        (int)mb, 1.0, gp->chol, (int)n, Ks, (int)n);
            for (size_t j = 0; j < mb; j++) {
                double s = cblas_ddot((int)n, Ks + j * n, 1, Ks + j * n, 1);
                double v = sf2 - s;
                var[j0 + j] = (v > 0.0 ? v : 0.0) * gp->y_scale * gp->y_scale;
            }
        }
    }
    free(Ks);
    free(z);
    return IMP_OK;
}
