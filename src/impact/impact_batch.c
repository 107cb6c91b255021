/* Batch entry points over arrays of impacts (the flat API for bindings):
 * one law's predictions, the IRB bound and per-impact identification, with
 * per-impact checks and status codes and no allocation. Each impact goes
 * through the single-impact function, so the results are exactly its. */
#include "impact_internal.h"
#include "impulse/core.h"
#include "impulse/impact_analysis.h"
#include "impulse/impact_models.h"

#include <math.h>
#include <stdio.h>

/* The failures of a batch: how many, the first one and its message. */
typedef struct batch_failures {
    size_t count, first;
    char why[256];
} batch_failures;

static void note_status(batch_failures *f, size_t i, int32_t status)
{
    if (status == IMP_IMPACT_OK) return;
    if (f->count++ == 0) {
        f->first = i;
        snprintf(f->why, sizeof f->why, "%s", imp_last_error());
    }
}

/* IMP_OK, with *n_failed and (if any failed) the message naming the first. */
static int batch_end(const batch_failures *f, size_t n, size_t *n_failed)
{
    if (n_failed) *n_failed = f->count;
    if (f->count) imp_fail(IMP_ERR_INVALID, "impact %zu: %s (%zu of %zu impacts failed)", f->first, f->why, f->count, n);
    return IMP_OK;
}

/* law_checked: 1 if the law passed imp_impact_law_check already (shared
 * parameters are checked once per batch). */
static int32_t predict_one(const imp_impact_law *law, int law_checked, const double W[4], const double u[2],
                           double P[2])
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
    batch_failures f = {0, 0, ""};
    imp_impact_law shared = {model, variant, mu[0], eps[0]};
    int shared_ok = n_param == 1 && imp_impact_law_check(&shared) == IMP_OK;
    for (size_t i = 0; i < n; i++) {
        size_t k = n_param == 1 ? 0 : i;
        imp_impact_law law = {model, variant, mu[k], eps[k]};
        status[i] = predict_one(&law, shared_ok, W + 4 * i, u + 2 * i, P + 2 * i);
        note_status(&f, i, status[i]);
    }
    return batch_end(&f, n, n_failed);
}

/* Contact space of impact i of the geometry arrays: IMP_IMPACT_OK,
 * BAD_INPUT or NOT_IMPACTING (imp_last_error() says why). */
static int32_t contact_of(imp_contact *c, size_t i, const double *d, const double *nrm, const double *v_pre,
                          const double *v_post, double mass, double inertia)
{
    if (imp_contact_make(c, d + 3 * i, nrm + 3 * i, mass, inertia, v_pre + 3 * i, v_post ? v_post + 3 * i : NULL))
        return IMP_IMPACT_BAD_INPUT;
    if (!(c->u[1] < 0)) {
        imp_fail(IMP_ERR_INVALID, "u: normal contact velocity %g >= 0, not an impact", c->u[1]);
        return IMP_IMPACT_NOT_IMPACTING;
    }
    return IMP_IMPACT_OK;
}

static int check_body(double mass, double inertia)
{
    if (!(mass > 0) || !isfinite(mass)) return imp_fail(IMP_ERR_INVALID, "mass: must be > 0 (got %g)", mass);
    if (!(inertia > 0) || !isfinite(inertia)) return imp_fail(IMP_ERR_INVALID, "inertia: must be > 0 (got %g)", inertia);
    return IMP_OK;
}

int imp_impact_irb_batch(imp_irb_metric metric, size_t n, const double *d, const double *nrm, const double *v_pre,
                         const double *v_post, double mass, double inertia, double kg, double *P, double *error,
                         int32_t *active, int32_t *status, size_t *n_failed)
{
    if (n_failed) *n_failed = 0;
    if (!imp_irb_metric_name(metric)) return imp_fail(IMP_ERR_INVALID, "metric: unknown id %d", (int)metric);
    int st = check_body(mass, inertia);
    if (st) return st;
    if (!(kg > 0) || !isfinite(kg)) return imp_fail(IMP_ERR_INVALID, "kg: must be > 0 (got %g)", kg);
    if (n == 0) return IMP_OK;
    if (!d || !nrm || !v_pre || !v_post || !P || !status)
        return imp_fail(IMP_ERR_INVALID, "%s: NULL array",
                        !d ? "d" : !nrm ? "n" : !v_pre ? "v_pre" : !v_post ? "v_post" : !P ? "P" : "status");
    batch_failures f = {0, 0, ""};
    for (size_t i = 0; i < n; i++) {
        imp_contact c;
        int act = -1;
        int32_t code = contact_of(&c, i, d, nrm, v_pre, v_post, mass, inertia);
        if (code == IMP_IMPACT_OK && imp_impact_irb(&c, kg, metric, P + 2 * i, &act)) code = IMP_IMPACT_NO_SOLUTION;
        if (code != IMP_IMPACT_OK) P[2 * i] = P[2 * i + 1] = NAN;
        if (error) error[i] = code == IMP_IMPACT_OK ? imp_contact_impulse_error(&c, P + 2 * i, kg) : NAN;
        if (active) active[i] = code == IMP_IMPACT_OK ? act : -1;
        status[i] = code;
        note_status(&f, i, code);
    }
    return batch_end(&f, n, n_failed);
}

int imp_impact_identify_batch(imp_impact_model model, imp_impact_variant variant, size_t n, const double *d,
                              const double *nrm, const double *v_pre, double mass, double inertia,
                              const double *P_target, const imp_ident_options *opt, double *out, int32_t *status,
                              size_t *n_failed)
{
    if (n_failed) *n_failed = 0;
    imp_ident_options o = opt ? *opt : imp_ident_options_default();
    imp_impact_law proto = {model, variant, 0, 0};
    int st = imp_impact_law_check(&proto);
    if (!st) st = impact_ident_check_options(&o);
    if (!st) st = check_body(mass, inertia);
    if (st) return st;
    if (n == 0) return IMP_OK;
    if (!d || !nrm || !v_pre || !P_target || !out || !status)
        return imp_fail(IMP_ERR_INVALID, "%s: NULL array",
                        !d ? "d" : !nrm ? "n" : !v_pre ? "v_pre" : !P_target ? "P_target" : !out ? "out" : "status");
    batch_failures f = {0, 0, ""};
    for (size_t i = 0; i < n; i++) {
        imp_contact c;
        imp_impact_law law = proto;
        double res = NAN;
        int32_t code = contact_of(&c, i, d, nrm, v_pre, NULL, mass, inertia);
        if (code == IMP_IMPACT_OK && imp_check_finite(P_target + 2 * i, 2, "P_target")) code = IMP_IMPACT_BAD_INPUT;
        if (code == IMP_IMPACT_OK && imp_impact_identify_one(&law, &c, P_target + 2 * i, &o, &res))
            code = IMP_IMPACT_NO_SOLUTION;
        out[3 * i] = code == IMP_IMPACT_OK ? law.mu : NAN;
        out[3 * i + 1] = code == IMP_IMPACT_OK ? law.eps : NAN;
        out[3 * i + 2] = code == IMP_IMPACT_OK ? res : NAN;
        status[i] = code;
        note_status(&f, i, code);
    }
    return batch_end(&f, n, n_failed);
}
