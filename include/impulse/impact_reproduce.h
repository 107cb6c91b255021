/* impulse planar impact: the full evaluation behind Tables 1-2 and the
 * error comparisons of Fazeli et al. 2017 ([ISRR] sec 3-4, [CoRL] sec 4.3),
 * run on one impact set in one tangent-sign convention. The CLI
 * (`impulse reproduce impact`) runs it under both conventions and formats
 * the result; the numbers come only from here. */
#ifndef IMPULSE_IMPACT_REPRODUCE_H
#define IMPULSE_IMPACT_REPRODUCE_H

#include <stddef.h>
#include <stdint.h>

#include "impulse/impact_analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct imp_impact_eval_options {
    imp_impact_variant variant;  /* law variant (authors: as in p_models.mat) */
    imp_impact_target target;    /* impulses identified against (contact) */
    const double *given_targets; /* IMP_TARGET_GIVEN: count x 2 in table order (valid impacts) */
    size_t k, reps;              /* ensemble: k trials per draw, reps draws (120, 20) */
    uint64_t seed;
    double table2_tol;           /* relative residual counted as "explained" (0.005) */
    size_t table2_max;           /* 0 = all impacts, else the first n of a seeded shuffle */
    imp_ident_options ident;     /* per-impact and ensemble search settings */
} imp_impact_eval_options;

imp_impact_eval_options imp_impact_eval_options_default(void);

typedef struct imp_impact_model_result {
    imp_ensemble_result ensemble;    /* Table 1 mu, eps (mean, std) */
    double best_share, worst_share;  /* share of impacts where the law is best / worst
                                        of the six at its identified parameters */
    double table2_fraction;          /* Table 2 */
    double per_impact_mu_mean, per_impact_mu_std, per_impact_mu_zero_share;
    double per_impact_eps_mean, per_impact_eps_std;
    imp_law_stats at_table1;         /* at the published Table 1 parameters */
    imp_law_stats at_identified;     /* at the ensemble means identified here */
} imp_impact_model_result;

typedef struct imp_impact_eval {
    imp_tangent_sign convention;
    imp_impact_variant variant;
    imp_impact_target target;
    size_t count;                    /* impacts evaluated */
    size_t table2_count;             /* impacts in the Table 2 subsample */
    imp_impact_model_result model[IMP_IMPACT_MODEL_COUNT];
    double bph_mean_error_table1;    /* Best Post Hoc at Table 1 parameters */
    double bph_mean_error_identified;
    double irb_velocity_mean_error, irb_momentum_mean_error;
    /* consistency of the measurements themselves with rigid point contact */
    double meas_energy_gain_share;    /* contact impulse Mc J dv: u+^T Mc u+ > u^T Mc u */
    double meas_ls_energy_gain_share; /* momentum least-squares impulse (J J^T)^-1 J M dv: alpha > 1 */
    double meas_separating_share;     /* measured un+ >= 0 */
    double meas_median_post_slip;     /* median |ut+| of the measurement, m/s */
    double residual_torque_rms;       /* rms of I domega - (J^T P)_3, P = (m dvx, m dvy), N m s */
    /* per-impact errors at identified parameters, count x 9 row-major:
     * six laws, Best Post Hoc, IRB velocity, IRB momentum (figure data) */
    double *errors;
    double seconds;                  /* wall time of the evaluation */
} imp_impact_eval;

/* Run everything on `s` as it is (its convention). Caller frees with
 * imp_impact_eval_free. */
int imp_impact_evaluate(imp_impact_eval *out, const imp_impact_set *s, const imp_impact_eval_options *opt);
void imp_impact_eval_free(imp_impact_eval *e);

/* Energy-ellipse picture of one impact (figure data): boundary of the
 * ellipse (n_boundary points, alpha = 1), the sticking and compression
 * lines through P* (2 points each), each law's predictions on an
 * n_grid x n_grid grid of (mu in [0, mu_cap], eps in [0, 1]), the measured
 * contact impulse and the IRB impulse (velocity metric). All arrays are
 * caller-allocated: boundary 2*n_boundary, lines 8, preds
 * 6*n_grid*n_grid*2, measured 2, irb 2. */
int imp_impact_ellipse_picture(const imp_contact *c, double kg, imp_impact_variant variant,
                               size_t n_boundary, size_t n_grid, double mu_cap, double *boundary,
                               double *lines, double *preds, double *measured, double *irb);

/* An impact set from a file: an impact-set .npz, the drops .npz of
 * `impulse impact drop`, the processed data_ellipse.mat, or the raw
 * 2000-drop .mat. */
int imp_impact_load_any(imp_impact_set *s, const char *path);
/* The authors' stored measured impulses (p_true_data.mat in the folder of
 * data_file) as identification targets, count x 2 in table order (malloc'd);
 * the set must be the processed one (every impact valid, same count). */
int imp_impact_load_given_targets(const char *data_file, const imp_impact_set *s, double **P);

#ifdef __cplusplus
}
#endif
#endif
