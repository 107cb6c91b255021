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

#include "impulse/core.h"
#include "impulse/impact_analysis.h"

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
    int max_iter;        /* L-BFGS iterations per start (default 60) */
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


/* ======================================================================
 * Data-driven impact models ([CoRL] §4; reference §5), built on the GP
 * above and on the impact tables of include/impulse/impact_analysis.h.
 *
 * Features of one impact (computed from its contact space, so they follow the
 * table's tangent-sign convention):
 *   X1 = (Mc11, Mc12, Mc22, ut, un)              ([CoRL] eq 10, 5-D)
 *   X2 = (atan2((Mc u)_n, (Mc u)_t), |Mc u|)     (gpFeature2.mat, polar)
 * Outputs: Y1 = contact impulse (Pt, Pn); Y2 = wrench impulse (Pt, Pn, tau)
 * with v+ = v- + (Pt/m, Pn/m, ((J^T P)_3 + tau)/I).
 * ====================================================================== */
typedef enum imp_gpi_kind {
    IMP_GPI_X1_IMPULSE = 0,       /* Class I:  GP(X1) -> Y1 ("data-driven rigid") */
    IMP_GPI_X2_IMPULSE = 1,       /* Class I:  GP(X2) -> Y1 */
    IMP_GPI_X1_WRENCH = 2,        /* Class I:  GP(X1) -> Y2 ("data-driven contact model") */
    IMP_GPI_RESIDUAL_IMPULSE = 3, /* Class II(i):  law(mu, eps) + GP(X1) -> Y1 residual */
    IMP_GPI_RESIDUAL_WRENCH = 4,  /* Class II(i):  law + GP(X1) -> Y2 residual ("data-reinforced contact") */
    IMP_GPI_PARAMS = 5,           /* Class II(ii): law(GP(X1) -> (mu, eps)) */
    IMP_GPI_KIND_COUNT = 6
} imp_gpi_kind;

/* "x1-impulse", "x2-impulse", "x1-wrench", "residual-impulse",
 * "residual-wrench", "param-gp"; NULL if unknown. */
const char *imp_gpi_kind_name(imp_gpi_kind k);
int imp_gpi_kind_parse(const char *text, imp_gpi_kind *out, const char *what);

/* Per-impact quantities of a table, computed once and shared by all splits. */
typedef struct imp_gpi_data {
    const imp_impact_table *table; /* borrowed */
    size_t count;
    imp_impact_target target_kind;
    double *x1;      /* count x 5 */
    double *x2;      /* count x 2 */
    double *target;  /* count x 2: target impulses (Pt, Pn) */
    double *wrench;  /* count x 3: (Pt, Pn, tau) with P = (m dvx, m dvy) */
    imp_impact_law base;  /* analytical law of the Class II models */
    double *params;  /* count x 2: per-impact (mu*, eps*) of `base` ([ISRR] eqs 8-9), or NULL */
} imp_gpi_data;

/* Build the per-impact data; the per-impact identification (slowest part)
 * only if need_params. base->mu/eps are ignored. */
int imp_gpi_data_build(imp_gpi_data *d, const imp_impact_table *t, imp_impact_target target_kind,
                       const imp_impact_law *base, int need_params, const imp_ident_options *iopt);
void imp_gpi_data_free(imp_gpi_data *d);

/* Features of one contact (x1: 5 values, x2: 2 values). */
void imp_gpi_features(const imp_contact *c, double x1[5], double x2[2]);

typedef struct imp_gpi_model {
    imp_gpi_kind kind;
    imp_impact_law base;  /* Class II: law with (mu, eps) identified on the training set */
    imp_gp_multi *gp;
} imp_gpi_model;

/* Fit a model of `kind` on the impacts idx[0..k-1] of d. Class II(i) first
 * identifies (mu, eps) of d->base on the same impacts ([CoRL] eq 6). */
int imp_gpi_fit(imp_gpi_model *m, imp_gpi_kind kind, const imp_gpi_data *d, const size_t *idx,
                size_t k, const imp_gp_options *gopt, const imp_ident_options *iopt);
/* Post-impact velocities (k x 3: vx, vy, omega) predicted for contacts. */
int imp_gpi_predict(const imp_gpi_model *m, const imp_contact *c, size_t k, double *v_out);
void imp_gpi_model_free(imp_gpi_model *m);

/* Save a fitted model as .npz: per output j the arrays "gp<j>_x",
 * "gp<j>_x_mean", "gp<j>_x_scale", "gp<j>_log_theta", "gp<j>_alpha",
 * "gp<j>_chol", "gp<j>_scalars" (y_mean, y_scale, jitter, lml), optional
 * "train_index" (int64, may be NULL/0), and meta JSON {"kind":
 * "gp_impact_model", "model", "law", "variant", "mu", "eps", "outputs",
 * plus the caller's extra JSON members `extra_meta` (text such as
 * "\"convention\": \"corrected\"", may be NULL)}. Atomic write. */
int imp_gpi_save(const imp_gpi_model *m, const size_t *train_index, size_t n_train,
                 const char *extra_meta, const char *path);
/* Load a model saved by imp_gpi_save; *meta_out (may be NULL) receives a
 * malloc'd copy of the meta JSON, *train_out/n_train_out (may be NULL) the
 * training indices. Shapes and values are validated. */
int imp_gpi_load(imp_gpi_model *m, const char *path, char **meta_out, size_t **train_out,
                 size_t *n_train_out);

/* ---- learning curves ([CoRL] Fig. 8) ----
 * For each repeat: a seeded random split of the table into a test set
 * (n_test impacts) and a training pool; for each size, every selected model
 * is trained on the first `size` impacts of the pool and scored on the test
 * set with the error metric (mean || (dvx, dvy, kg domega) ||, m/s).
 * References on the same test sets: the six laws identified on n_ident
 * training impacts ([CoRL] eq 6, as Table 1 with k = 120), Best Post Hoc
 * (per impact, the best of those six) and the IRB bound (velocity metric). */
typedef struct imp_lc_options {
    const size_t *sizes;
    size_t n_sizes;
    size_t repeats;
    size_t n_test;
    size_t n_ident;
    uint64_t seed;
    unsigned kinds;  /* bit mask of (1u << imp_gpi_kind) */
    imp_gp_options gp;
    imp_ident_options ident;
} imp_lc_options;

#define IMP_LC_REF_BEST_POST_HOC 0
#define IMP_LC_REF_IRB 1
#define IMP_LC_REF_BASE_LAW 2
#define IMP_LC_REF_COUNT 3

typedef struct imp_lc_result {
    size_t n_sizes, repeats;
    size_t *sizes;                   /* n_sizes */
    unsigned kinds;
    /* learned models: [kind][size] mean and std over repeats of the test mean error */
    double mean[IMP_GPI_KIND_COUNT][64], std[IMP_GPI_KIND_COUNT][64];
    double fit_seconds[IMP_GPI_KIND_COUNT]; /* total fitting time */
    /* references: best post hoc, IRB, base law identified on n_ident */
    double ref_mean[IMP_LC_REF_COUNT], ref_std[IMP_LC_REF_COUNT];
    double law_mu[IMP_IMPACT_MODEL_COUNT], law_eps[IMP_IMPACT_MODEL_COUNT]; /* first repeat */
    imp_impact_law base;
} imp_lc_result;

int imp_gpi_learning_curve(const imp_gpi_data *d, const imp_lc_options *opt, imp_lc_result *res);
void imp_lc_result_free(imp_lc_result *res);

#ifdef __cplusplus
}
#endif
#endif
