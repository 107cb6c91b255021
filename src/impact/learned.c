/* Data-driven impact models of Fazeli et al. ([CoRL] §4.1-4.2; reference
 * §5): Class I GPs from features to impulses or wrenches, Class II GPs that
 * correct an analytical law (residual) or choose its parameters per impact.
 * One independent GP per output, ARD SE kernel (include/impulse/gp.h). */
#include "impulse/gp.h"
#include "impulse/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[IMP_GPI_KIND_COUNT] = {
    "x1-impulse", "x2-impulse", "x1-wrench", "residual-impulse", "residual-wrench", "param-gp"};

const char *imp_gpi_kind_name(imp_gpi_kind k)
{
    return (int)k >= 0 && k < IMP_GPI_KIND_COUNT ? kind_names[k] : NULL;
}

int imp_gpi_kind_parse(const char *text, imp_gpi_kind *out, const char *what)
{
    for (int k = 0; k < IMP_GPI_KIND_COUNT; k++)
        if (text && strcmp(text, kind_names[k]) == 0) {
            *out = (imp_gpi_kind)k;
            return IMP_OK;
        }
    return imp_fail(IMP_ERR_INVALID,
                    "%s: unknown model '%s' (x1-impulse, x2-impulse, x1-wrench, residual-impulse, "
                    "residual-wrench, param-gp)", what, text ? text : "(null)");
}

/* [CoRL] eq 10: X1 = (Mc11, Mc12, Mc22, ut, un); X2 = Mc u in polar form as
 * stored in gpFeature2.mat (reference §4). */
void imp_gpi_features(const imp_contact *c, double x1[5], double x2[2])
{
    x1[0] = c->Mc[0];
    x1[1] = c->Mc[1];
    x1[2] = c->Mc[3];
    x1[3] = c->u[0];
    x1[4] = c->u[1];
    double pt = c->Mc[0] * c->u[0] + c->Mc[1] * c->u[1];
    double pn = c->Mc[2] * c->u[0] + c->Mc[3] * c->u[1];
    x2[0] = atan2(pn, pt);
    x2[1] = hypot(pt, pn);
}

/* Wrench impulse of an impact: P = (m dvx, m dvy) and the torque impulse a
 * point contact with this J cannot explain, tau = I dw - (J^T P)_3
 * (w_true_data.mat layout). */
static void contact_wrench(const imp_contact *c, double w[3])
{
    double m = 1.0 / c->minv[0], inertia = 1.0 / c->minv[2];
    w[0] = m * (c->v_post[0] - c->v_pre[0]);
    w[1] = m * (c->v_post[1] - c->v_pre[1]);
    w[2] = inertia * (c->v_post[2] - c->v_pre[2]) - (c->J[2] * w[0] + c->J[5] * w[1]);
}

/* v+ from a wrench (Pt, Pn, tau). */
static void velocity_from_wrench(const imp_contact *c, const double w[3], double v[3])
{
    v[0] = c->v_pre[0] + c->minv[0] * w[0];
    v[1] = c->v_pre[1] + c->minv[1] * w[1];
    v[2] = c->v_pre[2] + c->minv[2] * (c->J[2] * w[0] + c->J[5] * w[1] + w[2]);
}

void imp_gpi_data_free(imp_gpi_data *d)
{
    if (!d) return;
    free(d->x1);
    free(d->x2);
    free(d->target);
    free(d->wrench);
    free(d->params);
    memset(d, 0, sizeof *d);
}

int imp_gpi_data_build(imp_gpi_data *d, const imp_impact_table *t, imp_impact_target target_kind,
                       const imp_impact_law *base, int need_params, const imp_ident_options *iopt)
{
    if (!d) return imp_fail(IMP_ERR_INVALID, "gpi: data: NULL");
    memset(d, 0, sizeof *d);
    if (!t || !base) return imp_fail(IMP_ERR_INVALID, "gpi: table/base law: NULL");
    if (t->count == 0) return imp_fail(IMP_ERR_SHAPE, "gpi: table: no valid impacts");
    imp_impact_law law = *base;
    law.mu = 0.1;
    law.eps = 0.5;
    int st = imp_impact_law_check(&law);
    if (st) return imp_fail_context(st, "gpi: base law");
    const size_t n = t->count;
    d->table = t;
    d->count = n;
    d->target_kind = target_kind;
    d->base = law;
    d->x1 = malloc(n * 5 * sizeof(double));
    d->x2 = malloc(n * 2 * sizeof(double));
    d->target = malloc(n * 2 * sizeof(double));
    d->wrench = malloc(n * 3 * sizeof(double));
    if (need_params) d->params = malloc(n * 2 * sizeof(double));
    if (!d->x1 || !d->x2 || !d->target || !d->wrench || (need_params && !d->params)) {
        imp_gpi_data_free(d);
        return imp_fail(IMP_ERR_NOMEM, "gpi: cannot allocate data for %zu impacts", n);
    }
    for (size_t i = 0; i < n; i++) {
        imp_gpi_features(&t->contact[i], d->x1 + 5 * i, d->x2 + 2 * i);
        contact_wrench(&t->contact[i], d->wrench + 3 * i);
    }
    st = imp_impact_targets(t, target_kind, d->target);
    if (st) {
        imp_gpi_data_free(d);
        return st;
    }
    if (need_params) {
        imp_ident_options io = iopt ? *iopt : imp_ident_options_default();
        for (size_t i = 0; i < n; i++) {
            imp_impact_law li = law;
            double res;
            /* [ISRR] eqs 8-9: per-impact (mu*, eps*); an impact the law
             * cannot fit is left out of the parameter GP's training (NaN) */
            if (imp_impact_identify_one(&li, &t->contact[i], d->target + 2 * i, &io, &res) == IMP_OK) {
                d->params[2 * i] = li.mu;
                d->params[2 * i + 1] = li.eps;
            } else {
                d->params[2 * i] = d->params[2 * i + 1] = NAN;
            }
        }
        imp_clear_error();
    }
    return IMP_OK;
}

void imp_gpi_model_free(imp_gpi_model *m)
{
    if (!m) return;
    imp_gp_multi_free(m->gp);
    m->gp = NULL;
}

static int kind_uses_x2(imp_gpi_kind k) { return k == IMP_GPI_X2_IMPULSE; }
static int kind_outputs(imp_gpi_kind k)
{
    return k == IMP_GPI_X1_WRENCH || k == IMP_GPI_RESIDUAL_WRENCH ? 3 : 2;
}
static int kind_is_residual(imp_gpi_kind k)
{
    return k == IMP_GPI_RESIDUAL_IMPULSE || k == IMP_GPI_RESIDUAL_WRENCH;
}

/* Law impulse with a failure fallback of zero impulse (a law that cannot
 * finish predicts no change); returns 1 if it fell back. */
static int law_impulse(const imp_impact_law *law, const imp_contact *c, double P[2])
{
    if (imp_impact_predict_fast(law, c->W, c->u, P) == IMP_OK && isfinite(P[0]) && isfinite(P[1]))
        return 0;
    P[0] = P[1] = 0.0;
    return 1;
}

int imp_gpi_fit(imp_gpi_model *m, imp_gpi_kind kind, const imp_gpi_data *d, const size_t *idx,
                size_t k, const imp_gp_options *gopt, const imp_ident_options *iopt)
{
    if (!m) return imp_fail(IMP_ERR_INVALID, "gpi: model: NULL");
    memset(m, 0, sizeof *m);
    if (!d || !d->table) return imp_fail(IMP_ERR_INVALID, "gpi: data: NULL");
    if (!imp_gpi_kind_name(kind)) return imp_fail(IMP_ERR_INVALID, "gpi: kind: %d unknown", (int)kind);
    if (k < 2) return imp_fail(IMP_ERR_SHAPE, "gpi: training size: %zu (need >= 2)", k);
    if (!idx) return imp_fail(IMP_ERR_INVALID, "gpi: idx: NULL");
    for (size_t a = 0; a < k; a++)
        if (idx[a] >= d->count)
            return imp_fail(IMP_ERR_SHAPE, "gpi: idx[%zu] = %zu out of range (%zu impacts)", a,
                            idx[a], d->count);
    if (kind == IMP_GPI_PARAMS && !d->params)
        return imp_fail(IMP_ERR_INVALID, "gpi: param-gp needs data built with per-impact parameters");
    m->kind = kind;
    m->base = d->base;
    if (kind_is_residual(kind)) {
        imp_ident_options io = iopt ? *iopt : imp_ident_options_default();
        double cost;
        /* [CoRL] eq 6 on the training impacts only */
        int st = imp_impact_identify_set(&m->base, d->table, d->target, idx, k, &io, &cost);
        if (st) return imp_fail_context(st, "gpi: identifying the base law");
    }
    const size_t dim = kind_uses_x2(kind) ? 2 : 5;
    const size_t nout = (size_t)kind_outputs(kind);
    double *X = malloc(k * dim * sizeof *X);
    double *Y = malloc(k * nout * sizeof *Y);
    if (!X || !Y) {
        free(X);
        free(Y);
        return imp_fail(IMP_ERR_NOMEM, "gpi: cannot allocate %zu training rows", k);
    }
    size_t rows = 0;
    for (size_t a = 0; a < k; a++) {
        size_t i = idx[a];
        const imp_contact *c = &d->table->contact[i];
        double *y = Y + rows * nout;
        switch (kind) {
        case IMP_GPI_X1_IMPULSE:
        case IMP_GPI_X2_IMPULSE:
            y[0] = d->target[2 * i];
            y[1] = d->target[2 * i + 1];
            break;
        case IMP_GPI_X1_WRENCH:
            memcpy(y, d->wrench + 3 * i, 3 * sizeof *y);
            break;
        case IMP_GPI_RESIDUAL_IMPULSE:
        case IMP_GPI_RESIDUAL_WRENCH: {
            double P[2];
            law_impulse(&m->base, c, P);
            const double *tgt = kind == IMP_GPI_RESIDUAL_IMPULSE ? d->target + 2 * i : d->wrench + 3 * i;
            y[0] = tgt[0] - P[0];
            y[1] = tgt[1] - P[1];
            if (nout == 3) y[2] = tgt[2]; /* a point-contact law has no free torque */
            break;
        }
        case IMP_GPI_PARAMS:
            if (!isfinite(d->params[2 * i]) || !isfinite(d->params[2 * i + 1])) continue;
            y[0] = d->params[2 * i];
            y[1] = d->params[2 * i + 1];
            break;
        default:
            break;
        }
        memcpy(X + rows * dim, kind_uses_x2(kind) ? d->x2 + 2 * i : d->x1 + 5 * i, dim * sizeof *X);
        rows++;
    }
    int st = rows >= 2 ? imp_gp_multi_fit(&m->gp, X, Y, rows, dim, nout, gopt)
                       : imp_fail(IMP_ERR_SHAPE, "gpi: fewer than 2 usable training impacts");
    free(X);
    free(Y);
    if (st) return imp_fail_context(st, "gpi: fitting %s", imp_gpi_kind_name(kind));
    return IMP_OK;
}

int imp_gpi_predict(const imp_gpi_model *m, const imp_contact *c, size_t k, double *v_out)
{
    if (!m || !m->gp) return imp_fail(IMP_ERR_INVALID, "gpi: model: not fitted");
    if (k == 0) return IMP_OK;
    if (!c || !v_out) return imp_fail(IMP_ERR_INVALID, "gpi: contacts/output: NULL");
    const size_t dim = kind_uses_x2(m->kind) ? 2 : 5;
    const size_t nout = (size_t)kind_outputs(m->kind);
    double *X = malloc(k * (dim + nout) * sizeof *X);
    if (!X) return imp_fail(IMP_ERR_NOMEM, "gpi: cannot allocate %zu predictions", k);
    double *Y = X + k * dim;
    for (size_t a = 0; a < k; a++) {
        double x1[5], x2[2];
        imp_gpi_features(&c[a], x1, x2);
        memcpy(X + a * dim, dim == 2 ? x2 : x1, dim * sizeof *X);
    }
    int st = imp_gp_multi_predict(m->gp, X, k, Y, NULL);
    if (st) {
        free(X);
        return st;
    }
    for (size_t a = 0; a < k; a++) {
        const double *y = Y + a * nout;
        double *v = v_out + 3 * a;
        double P[2], w[3];
        switch (m->kind) {
        case IMP_GPI_X1_IMPULSE:
        case IMP_GPI_X2_IMPULSE:
            imp_contact_velocity_after(&c[a], y, v);
            break;
        case IMP_GPI_X1_WRENCH:
            velocity_from_wrench(&c[a], y, v);
            break;
        case IMP_GPI_RESIDUAL_IMPULSE:
            law_impulse(&m->base, &c[a], P);
            P[0] += y[0];
            P[1] += y[1];
            imp_contact_velocity_after(&c[a], P, v);
            break;
        case IMP_GPI_RESIDUAL_WRENCH:
            law_impulse(&m->base, &c[a], P);
            w[0] = P[0] + y[0];
            w[1] = P[1] + y[1];
            w[2] = y[2];
            velocity_from_wrench(&c[a], w, v);
            break;
        case IMP_GPI_PARAMS: {
            imp_impact_law law = m->base;
            /* keep the predicted parameters admissible ([ISRR] eq 9 bounds) */
            law.mu = y[0] < 0.0 ? 0.0 : (y[0] > 10.0 ? 10.0 : y[0]);
            law.eps = y[1] < 0.0 ? 0.0 : (y[1] > 1.0 ? 1.0 : y[1]);
            law_impulse(&law, &c[a], P);
            imp_contact_velocity_after(&c[a], P, v);
            break;
        }
        default:
            break;
        }
    }
    free(X);
    return IMP_OK;
}
