/* impulse planar impact: the six analytical impact laws of Fazeli et al.
 * 2017 ([ISRR] sec 2, reference sec 2) as exact closed-form or exact
 * piecewise (Routh-style) computations in contact space, plus the sticking
 * threshold.
 *
 * Every law maps the compliance W = J M^-1 J^T (row-major [Wtt Wtn; Wnt Wnn])
 * and the pre-impact contact velocity u = (ut, un), un < 0, to a contact
 * impulse P = (Pt, Pn). Tangent first, as in include/impulse/impact.h.
 *
 * Variants: IMP_VARIANT_TEXTBOOK is the law as published; IMP_VARIANT_AUTHORS
 * reproduces the authors' MATLAB ([CODE] planar-contact-models) where it
 * differs, so that their stored predictions (p_models.mat) can be matched:
 *   - AP Poisson, Drumwright-Shell: authors scale only the normal impulse of
 *     the plastic solution by (1 + eps) and keep its tangential impulse (no
 *     friction in restitution); textbook runs a restitution phase of normal
 *     impulse eps*Pn0 with Coulomb friction (maximum dissipation, clipped to
 *     the cone).
 *   - Mirtich: authors integrate dPt = -mu ut dPn (friction proportional to
 *     slip velocity; exact exponential solution here); textbook is Coulomb
 *     friction with Stronge's energetic restitution (Routh segments).
 *   - AP Newton, Wang-Mason, Whittaker: the two variants coincide.
 */
#ifndef IMPULSE_IMPACT_MODELS_H
#define IMPULSE_IMPACT_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "impulse/impact.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Order of the p_models.mat / v_models.mat column pairs. */
typedef enum imp_impact_model {
    IMP_IMPACT_DRUMSHELL = 0,
    IMP_IMPACT_AP_POISSON = 1,
    IMP_IMPACT_AP_NEWTON = 2,
    IMP_IMPACT_MIRTICH = 3,
    IMP_IMPACT_WANG_MASON = 4,
    IMP_IMPACT_WHITTAKER = 5,
    IMP_IMPACT_MODEL_COUNT = 6
} imp_impact_model;

typedef enum imp_impact_variant {
    IMP_VARIANT_TEXTBOOK = 0,
    IMP_VARIANT_AUTHORS = 1
} imp_impact_variant;

/* Immutable description of one law with its parameters. */
typedef struct imp_impact_law {
    imp_impact_model model;
    imp_impact_variant variant;
    double mu;   /* Coulomb friction coefficient, >= 0 */
    double eps;  /* restitution coefficient, 0 <= eps <= 1 */
} imp_impact_law;

/* "drumshell", "ap-poisson", "ap-newton", "mirtich", "wang-mason",
 * "whittaker" (CLI names), NULL for an unknown id. */
const char *imp_impact_model_name(imp_impact_model m);
/* "Drumwright-Shell", "AP Poisson", ... (table titles). */
const char *imp_impact_model_title(imp_impact_model m);
/* One line: restitution law, friction law, how it is solved here. */
const char *imp_impact_model_summary(imp_impact_model m);
int imp_impact_model_parse(const char *text, imp_impact_model *out, const char *what);
/* "textbook" / "authors" */
const char *imp_impact_variant_name(imp_impact_variant v);
int imp_impact_variant_parse(const char *text, imp_impact_variant *out, const char *what);
/* Table 1 of [ISRR]/[CoRL]: identified (mu, eps) used for p_models.mat. */
void imp_impact_table1(imp_impact_model m, double *mu, double *eps);

/* Checks the law (known model/variant, finite 0 <= mu <= 10, 0 <= eps <= 1). */
int imp_impact_law_check(const imp_impact_law *law);

/* P = law(W, u). Fails on an invalid law, non-finite or non-positive-definite
 * W, non-finite u, or a non-impacting state (un >= 0). */
int imp_impact_predict(const imp_impact_law *law, const double W[4], const double u[2], double P[2]);
/* Same without argument checks (caller guarantees a checked law, W positive
 * definite, un < 0): the hot path for identification and benchmarks.
 * Returns IMP_OK, or IMP_ERR_NUMERIC where the law has no solution (a
 * Painleve configuration of the Routh laws, sliding with non-positive normal
 * compliance and no slip stop, which needs Wtn^2 >= Wtt Wnn, i.e. W not
 * positive definite; the property tests find no failure for positive
 * definite W). */
int imp_impact_predict_fast(const imp_impact_law *law, const double W[4], const double u[2], double P[2]);

/* AP Newton ([ISRR] sec 2.1, reference 2.1) in the form shared by the
 * impact strand and the CD-Lagrange integrator (src/models/contact_impulse.c),
 * with its reverse pass. bn is the normal contact velocity the impulse
 * removes, un+ = un - bn: bn = (1 + eps) un for Newton's law (un+ = -eps un);
 * the integrator passes un^S + eps un^- (its velocity before the impulse and
 * the pre-impact one differ by a step of the force). P = -Mc (ut, bn) if
 * that is in the cone |Pt| <= mu Pn (stick), else P = (-sg mu pn, pn) with
 * pn = -bn / (Wnn - sg mu Wnt) and slip ut+ of sign sg (slide). *branch
 * (may be NULL) receives which. No argument checks (W positive definite is
 * the caller's); IMP_ERR_NUMERIC if no sliding solution exists (a
 * Painleve-type configuration, mu Wnt >= Wnn for both signs). */
enum { IMP_AP_STICK = 0, IMP_AP_SLIDE_POS = 1, IMP_AP_SLIDE_NEG = -1 };
int imp_ap_newton_forward(double P[2], int *branch, const double W[4], const double u[2], double mu, double bn);
/* Reverse pass at the forward's solution P and branch: accumulates (+=)
 * dL/dW (row-major, entries treated as independent), dL/du, dL/dmu, dL/dbn
 * given P_bar = dL/dP; any output may be NULL. Exact away from the branch
 * boundaries (the branch is held fixed). */
void imp_ap_newton_backward(double W_bar[4], double u_bar[2], double *mu_bar, double *bn_bar, const double P_bar[2],
                            const double P[2], int branch, const double W[4], double mu, double bn);

/* ---- batch prediction (one law, many impacts; for bindings) ----
 * Per-impact outcome, one int32 per impact. */
typedef enum imp_impact_status {
    IMP_IMPACT_OK = 0,             /* P holds the law's impulse */
    IMP_IMPACT_NOT_IMPACTING = 1,  /* un >= 0: no impact, P = NaN */
    IMP_IMPACT_BAD_INPUT = 2,      /* non-finite W or u, W not symmetric positive definite,
                                      mu outside [0, 10] or eps outside [0, 1]: P = NaN */
    IMP_IMPACT_NO_SOLUTION = 3     /* the law has no solution here (see imp_impact_predict_fast): P = NaN */
} imp_impact_status;

/* P[i] = law(W[i], u[i]; mu[i], eps[i]) for i < n, every impact checked as by
 * imp_impact_predict. Arrays are C-contiguous float64, row-major:
 *   W       n x 4   (Wtt, Wtn, Wnt, Wnn) of each impact
 *   u       n x 2   (ut, un), tangent first
 *   mu, eps n_param values each, n_param = n (one per impact) or 1 (shared)
 *   P       n x 2   out: (Pt, Pn), NaN where status != IMP_IMPACT_OK
 *   status  n       out: imp_impact_status (int32)
 * Returns IMP_ERR_INVALID for an unknown model/variant, NULL arrays or
 * n_param not in {1, n}; otherwise IMP_OK with *n_failed (may be NULL) the
 * number of impacts whose status is not OK. When *n_failed > 0,
 * imp_last_error() names the first of them ("impact i: ..."). */
int imp_impact_predict_batch(imp_impact_model model, imp_impact_variant variant, size_t n, const double *W,
                             const double *u, const double *mu, const double *eps, size_t n_param, double *P,
                             int32_t *status, size_t *n_failed);

/* Sticking threshold mu_s(eps): the smallest mu at which the law's
 * prediction no longer changes with mu (the impact ends sticking). Closed
 * form for AP Newton, Whittaker (Newton stick impulse) and AP Poisson,
 * Drumwright-Shell (plastic stick impulse); bisection on the prediction
 * (relative tolerance 1e-9) for the others. Returns mu_cap if the prediction
 * still changes at mu_cap (e.g. authors' Mirtich, whose slip never stops). */
int imp_impact_sticking_threshold(const imp_impact_law *law, const double W[4], const double u[2],
                                  double mu_cap, double *mu_s);

#ifdef __cplusplus
}
#endif
#endif
