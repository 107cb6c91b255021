/* impulse Gaussian-process regression (Rasmussen & Williams 2006, ch. 2 and 5),
 * the learner behind the data-driven impact models of Fazeli et al. 2017
 * ([CoRL] §4: ARD squared-exponential kernel, one GP per output).
 *
 * Kernel, with theta = (log l_1..log l_d, log s_f, log s_n):
 *   k(x, x') = s_f^2 exp(-1/2 sum_i (x_i - x'_i)^2 / l_i^2) + s_n^2 [x == x']
 * Hyperparameters maximise the log marginal likelihood [R&W eq 2.30] with its
 * analytic gradient [R&W eq 5.9] by L-BFGS from a few seeded starts.
 *
 * A fitted imp_gp is immutable: predictions never modify it. Fitting works in
 * standardised units (inputs and output shifted and scaled to zero mean, unit
 * variance over the training set); the stored log_theta is in those units.
 */
#ifndef IMPULSE_GP_H
#define IMPULSE_GP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Log marginal likelihood of y (n) given inputs x (n x d, row-major) under
 * the kernel above with zero mean, and, if grad != NULL, its gradient with
 * respect to theta (d + 2). No standardisation. Fails with IMP_ERR_NUMERIC if
 * K is not positive definite even after jitter up to 1e-6 (s_f^2 + s_n^2);
 * *jitter_used (may be NULL) receives the jitter added to the diagonal. */
int imp_gp_lml(const double *x, const double *y, size_t n, size_t d, const double *log_theta,
               double *lml, double *grad, double *jitter_used);

typedef struct imp_gp_options {
    int max_iter;        /* L-BFGS iterations per start (default 100) */
    int restarts;        /* starts in addition to the default one (default 2) */
    uint64_t seed;       /* seed of the restart draws (default 1) */
    int standardize;     /* fit in standardised units (default 1) */
    double min_noise;    /* lower bound on s_n in standardised units (default 1e-4) */
} imp_gp_options;

void imp_gp_options_default(imp_gp_options *opt);

typedef struct imp_gp {
    size_t n, d;
    double *x;            /* n x d standardised training inputs */
    double *x_mean;       /* d */
    double *x_scale;      /* d */
    double y_mean, y_scale;
    double *log_theta;    /* d + 2, standardised units */
    double *chol;         /* n x n lower Cholesky factor of K (column-major) */
    double *alpha;        /* n: K^-1 (y - y_mean) / y_scale */
    double jitter;        /* added to the diagonal of K */
    double lml;           /* log marginal likelihood (standardised units) */
} imp_gp;

/* Fit: optimise the hyperparameters (opt may be NULL for defaults). */
int imp_gp_fit(imp_gp **out, const double *x, const double *y, size_t n, size_t d,
               const imp_gp_options *opt);
/* Condition on data with given hyperparameters (standardised units if
 * standardize != 0), no optimisation. */
int imp_gp_fit_fixed(imp_gp **out, const double *x, const double *y, size_t n, size_t d,
                     const double *log_theta, int standardize);
/* Predictive mean (m) and, if var != NULL, variance of the latent function
 * (m; add s_n^2 y_scale^2 for a noisy observation) at xs (m x d). */
int imp_gp_predict(const imp_gp *gp, const double *xs, size_t m, double *mean, double *var);
/* Observation-noise variance in data units. */
double imp_gp_noise_var(const imp_gp *gp);
void imp_gp_free(imp_gp *gp);

/* Several outputs by independent GPs on the same inputs. */
typedef struct imp_gp_multi {
    size_t k;
    imp_gp **gp;
} imp_gp_multi;

/* y is n x k (row-major). */
int imp_gp_multi_fit(imp_gp_multi **out, const double *x, const double *y, size_t n, size_t d,
                     size_t k, const imp_gp_options *opt);
/* mean and var (may be NULL) are m x k. */
int imp_gp_multi_predict(const imp_gp_multi *mg, const double *xs, size_t m, double *mean,
                         double *var);
void imp_gp_multi_free(imp_gp_multi *mg);

#ifdef __cplusplus
}
#endif
#endif
