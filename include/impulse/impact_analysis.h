/* impulse planar impact: the analyses of Fazeli et al. 2017 on an impact
 * set ([ISRR] sec 3, [CoRL] sec 3-4; reference sec 3): the IRB bound, Best
 * Post Hoc, per-impact and ensemble identification of (mu, eps), the
 * predictive-range fraction (Table 2), the error metric, and how often each
 * law breaks energy or non-penetration.
 *
 * Everything here works on an imp_impact_table: the contact spaces of the
 * valid impacts of a set, in that set's tangent-sign convention (recorded in
 * the table and in every result).
 */
#ifndef IMPULSE_IMPACT_ANALYSIS_H
#define IMPULSE_IMPACT_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "impulse/impact.h"
#include "impulse/impact_models.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Contact spaces of the valid impacts of a set. */
typedef struct imp_impact_table {
    size_t count;            /* number of valid impacts */
    imp_contact *contact;    /* count entries */
    size_t *index;           /* index of each entry in the source set */
    double kg;               /* radius of gyration used by the error metric */
    imp_tangent_sign convention;
    size_t rows;             /* rows of the source set */
    size_t not_impacting;    /* rows left out because un = n . v- >= 0 */
    size_t flagged;          /* impacting rows left out because the set flags them invalid */
} imp_impact_table;

/* Fails (IMP_ERR_INVALID, naming the counts) if no row is a valid impact. */
int imp_impact_table_build(imp_impact_table *t, const imp_impact_set *s);
void imp_impact_table_free(imp_impact_table *t);

/* ---- IRB bound ([ISRR] eq 7, [CoRL] eq 7) ----
 * P_IRB = argmin ||A P - b||_2 over the admissible impulses (energy ellipse
 * alpha <= 1, un+ >= 0), exact solution of the 2-D convex problem:
 *   velocity metric: A = S M^-1 J^T, b = S (v+ - v-), S = diag(1, 1, kg)
 *     (the error metric itself, so this is the best any rigid point-contact
 *     law can do on that impact),
 *   momentum metric: A = J^T, b = M (v+ - v-).
 * *active (may be NULL): 0 interior, 1 ellipse, 2 compression line, 3 both. */
typedef enum imp_irb_metric { IMP_IRB_VELOCITY = 0, IMP_IRB_MOMENTUM = 1 } imp_irb_metric;
const char *imp_irb_metric_name(imp_irb_metric m);
int imp_impact_irb(const imp_contact *c, double kg, imp_irb_metric metric, double P[2], int *active);

/* Error metric ([ISRR] sec 3.2.1) of a contact impulse P on one impact:
 * || (dvx, dvy, kg domega) ||_2 of v- + M^-1 J^T P against the measured v+. */
double imp_contact_impulse_error(const imp_contact *c, const double P[2], double kg);

/* ---- identification targets ---- */
typedef enum imp_impact_target {
    IMP_TARGET_CONTACT = 0,      /* Mc J (v+ - v-) ([CODE2] optimal_mu_e.m) */
    IMP_TARGET_IRB_VELOCITY = 1, /* P_IRB, velocity metric ([ISRR] eq 8) */
    IMP_TARGET_IRB_MOMENTUM = 2, /* P_IRB, momentum metric */
    IMP_TARGET_GIVEN = 3         /* supplied by the caller (e.g. the stored p_true_data.mat);
                                    imp_impact_targets cannot compute it */
} imp_impact_target;
const char *imp_impact_target_name(imp_impact_target t);
int imp_impact_target_parse(const char *text, imp_impact_target *out, const char *what);
/* Target impulses of every table entry, count x 2. */
int imp_impact_targets(const imp_impact_table *t, imp_impact_target kind, double *P);

/* ---- identification ---- */
typedef struct imp_ident_options {
    double mu_cap;   /* upper bound on mu (default 1.0) */
    int grid;        /* grid points per axis of the start search (default 21) */
    double tol;      /* final step of the pattern search in (mu, eps) (default 1e-6) */
} imp_ident_options;
imp_ident_options imp_ident_options_default(void);

/* Per-impact identification ([ISRR] eqs 8-9): (mu*, eps*) = argmin
 * ||P_target - law(mu, eps)||_2 subject to 0 <= mu <= mu_s(eps), 0 <= eps <= 1
 * (mu above mu_s is mapped to mu_s: the constraint picks the lowest mu
 * explaining the impact). Grid start, then compass search.
 * Result in law->mu, law->eps (law->model, law->variant are inputs). */
int imp_impact_identify_one(imp_impact_law *law, const imp_contact *c, const double P_target[2],
                            const imp_ident_options *opt, double *residual);

/* Ensemble identification ([CoRL] eq 6): argmin over (mu, eps) in
 * [0, mu_cap] x [0, 1] of sum_n ||P_n - law(mu, eps; n)||_2 over the table
 * entries idx[0..k-1]. */
int imp_impact_identify_set(imp_impact_law *law, const imp_impact_table *t, const double *P_target,
                            const size_t *idx, size_t k, const imp_ident_options *opt, double *cost);

typedef struct imp_ensemble_result {
    double mu_mean, mu_std, eps_mean, eps_std;
    size_t k, reps;
} imp_ensemble_result;
/* k trials drawn without replacement, `reps` repetitions (seeded), mean and
 * sample standard deviation of the identified parameters. */
int imp_impact_identify_ensemble(imp_impact_model model, imp_impact_variant variant,
                                 const imp_impact_table *t, const double *P_target, size_t k,
                                 size_t reps, uint64_t seed, const imp_ident_options *opt,
                                 imp_ensemble_result *out);

/* Predictive-range fraction (Table 2): share of impacts whose target lies in
 * the law's set of predictions over all admissible (mu, eps), decided as
 * per-impact identification residual <= rel_tol * ||P_target||. If
 * per_impact is non-NULL it receives (mu*, eps*, residual) per entry
 * (count x 3). */
int imp_impact_predictive_fraction(imp_impact_model model, imp_impact_variant variant,
                                   const imp_impact_table *t, const double *P_target,
                                   double rel_tol, const imp_ident_options *opt, double *fraction,
                                   double *per_impact);

/* ---- evaluation at fixed parameters ---- */
typedef struct imp_law_stats {
    double mean_error, median_error; /* error metric, m/s, over the impacts the law solved */
    double energy_gain_share;        /* share with contact energy increase (alpha > 1 + 1e-9) */
    double penetration_share;        /* share with un+ < -1e-9 |un| */
    double cone_violation_share;     /* share with Pn < 0 or |Pt| > mu Pn (1 + 1e-9) */
    size_t failures;                 /* impacts where the law has no solution */
    size_t first_failure;            /* source-set index of the first of them (SIZE_MAX if none) */
} imp_law_stats;

/* Per-impact errors (count entries, may be NULL) and summary of one law.
 * Impacts where the law fails get error NaN and count in `failures`; the
 * means are over the others, so a caller must report `failures`. */
int imp_impact_evaluate_law(const imp_impact_law *law, const imp_impact_table *t, double *errors,
                            imp_law_stats *stats);
/* Errors of the IRB bound (velocity metric) per impact (count entries). */
int imp_impact_irb_errors(const imp_impact_table *t, imp_irb_metric metric, double *errors);

/* ---- batch entry points (many impacts of one body; for bindings) ----
 * Arrays are C-contiguous float64, row-major, one row per impact:
 *   d, nrm         n x 3  tangent and normal Jacobian rows of each impact
 *   v_pre, v_post  n x 3  (vx, vy, omega) before and after
 *   mass, inertia  the body's (shared by all impacts)
 * status (n int32, imp_impact_status of impact_models.h) says per impact:
 * OK; NOT_IMPACTING (un = n . v- >= 0); BAD_INPUT (non-finite values,
 * dependent rows, a non-finite target); NO_SOLUTION (the solver found none).
 * Outputs of an impact whose status is not OK are NaN. Nothing is
 * allocated. Returns IMP_ERR_INVALID for NULL arrays, an unknown
 * metric/model/variant, mass, inertia or kg not > 0, or bad options;
 * otherwise IMP_OK with *n_failed (may be NULL) the impacts whose status is
 * not OK, and when it is > 0 imp_last_error() names the first ("impact i: ...").
 * Each impact's results are exactly those of the single-impact functions
 * (imp_contact_make, then imp_impact_irb / imp_impact_identify_one). */

/* IRB bound of every impact: P (n x 2), error (n, may be NULL) the error
 * metric of P with radius of gyration kg, active (n int32, may be NULL) the
 * active constraints as imp_impact_irb's. */
int imp_impact_irb_batch(imp_irb_metric metric, size_t n, const double *d, const double *nrm, const double *v_pre,
                         const double *v_post, double mass, double inertia, double kg, double *P, double *error,
                         int32_t *active, int32_t *status, size_t *n_failed);

/* Per-impact identification of every impact (imp_impact_identify_one; opt
 * NULL = defaults): target impulses P_target (n x 2), out (n x 3) =
 * (mu*, eps*, residual) per impact. v_post is not needed. */
int imp_impact_identify_batch(imp_impact_model model, imp_impact_variant variant, size_t n, const double *d,
                              const double *nrm, const double *v_pre, double mass, double inertia,
                              const double *P_target, const imp_ident_options *opt, double *out, int32_t *status,
                              size_t *n_failed);

#ifdef __cplusplus
}
#endif
#endif
