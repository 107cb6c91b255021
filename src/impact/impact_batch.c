/* Batch evaluation of one impact law over arrays of contacts (the flat
 * entry point for bindings): per-impact checks and status codes, no
 * allocation. */
#include "impact_internal.h"
#include "impulse/core.h"
#include "impulse/impact_models.h"

#include <math.h>
#include <stdio.h>

/* law_checked: 1 if the law passed imp_impact_law_check already (shared
 * parameters are checked once per batch). */
static int32_t predict_one(const imp_impact_law *law, int law_checked, const double W[4], const double u[2],
                           double P[2], char *why, size_t cap)
{
    int st = law_checked ? IMP_OK : imp_impact_law_check(law);
    int32_t code = IMP_IMPACT_BAD_INPUT;
    if (!st) {
        st = impact_check_contact(W, u);
        code = st == IMP_ERR_INVALID ? IMP_IMPACT_NOT_IMPACTING : IMP_IMPACT_BAD_INPUT;
    }
    if (!st) {
        st = imp_impact_predict_fast(law, W, u, P);
        if (!st && (P[0] - P[0]) + (P[1] - P[1]) != 0) st = imp_check_finite(P, 2, "P");
        code = IMP_IMPACT_NO_SOLUTION;
    }
    if (!st) return IMP_IMPACT_OK;
    if (why[0] == '\0') snprintf(why, cap, "%s", imp_last_error());
    P[0] = P[1] = NAN;
    return code;
}

int imp_impact_predict_batch(imp_impact_model model, imp_impact_variant variant, size_t n, const double *W,
                             const double *u, const double *mu, const double *eps, size_t n_param, double *P,
                             int32_t *status, size_t *n_failed)
{
    if (n_failed) *n_failed = 0;
    if ((unsigned)model >= IMP_IMPACT_MODEL_COUNT) return imp_fail(IMP_ERR_INVALID, "model: unknown id %d", (int)model);
    if (variant != IMP_VARIANT_TEXTBOOK && variant != IMP_VARIANT_AUTHORS)
        return imp_fail(IMP_ERR_INVALID, "variant: unknown id %d", (int)variant);
    if (n == 0) return IMP_OK;
    if (!W || !u || !mu || !eps || !P || !status)
        return imp_fail(IMP_ERR_INVALID, "%s: NULL array", !W ? "W" : !u ? "u" : !mu ? "mu" : !eps ? "eps" : !P ? "P" : "status");
    if (n_param != 1 && n_param != n)
        return imp_fail(IMP_ERR_INVALID, "mu, eps: %zu values for %zu impacts (give 1 or %zu)", n_param, n, n);
    size_t failed = 0, first = 0;
    char why[256] = "";
    imp_impact_law shared = {model, variant, mu[0], eps[0]};
    int shared_ok = n_param == 1 && imp_impact_law_check(&shared) == IMP_OK;
    for (size_t i = 0; i < n; i++) {
        size_t k = n_param == 1 ? 0 : i;
        imp_impact_law law = {model, variant, mu[k], eps[k]};
        status[i] = predict_one(&law, shared_ok, W + 4 * i, u + 2 * i, P + 2 * i, why, sizeof why);
        if (status[i] != IMP_IMPACT_OK && failed++ == 0) first = i;
    }
    if (n_failed) *n_failed = failed;
    if (failed) imp_fail(IMP_ERR_INVALID, "impact %zu: %s (%zu of %zu impacts failed)", first, why, failed, n);
    return IMP_OK;
}
