/* Identification of (mu, eps) from measured impulses ([ISRR] eqs 8-9,
 * [CoRL] eq 6), the predictive-range fraction (Table 2), and the contact
 * table these analyses run on. */
#include "impulse/core.h"
#include "impulse/impact_analysis.h"
#include "impact_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int imp_impact_table_build(imp_impact_table *t, const imp_impact_set *s)
{
    memset(t, 0, sizeof *t);
    size_t n = 0;
    for (size_t i = 0; i < s->count; i++) n += s->valid[i] != 0;
    t->contact = malloc((n ? n : 1) * sizeof *t->contact);
    t->index = malloc((n ? n : 1) * sizeof *t->index);
    if (!t->contact || !t->index) {
        imp_impact_table_free(t);
        return imp_fail(IMP_ERR_NOMEM, "impact table: out of memory");
    }
    size_t away = 0, flagged = 0;
    for (size_t i = 0; i < s->count; i++) {
        const double *nr = s->n + 3 * i, *v = s->pre + 6 * i + 3;
        double un = nr[0] * v[0] + nr[1] * v[1] + nr[2] * v[2]; /* n does not depend on the convention */
        if (!(un < 0)) { away++; continue; }
        if (!s->valid[i]) { flagged++; continue; }
        int st = imp_impact_contact(s, i, &t->contact[t->count]);
        if (st) { imp_impact_table_free(t); return imp_fail_context(st, "impact %zu", i); }
        t->index[t->count++] = i;
    }
    if (t->count == 0) {
        imp_impact_table_free(t);
        return imp_fail(IMP_ERR_INVALID, "impact set: no valid impact among %zu rows (%zu not impacting, un = n.v- >= 0; "
                        "%zu flagged invalid)", s->count, away, flagged);
    }
    t->kg = s->object.kg;
    t->convention = s->convention;
    t->rows = s->count;
    t->not_impacting = away;
    t->flagged = flagged;
    return IMP_OK;
}

void imp_impact_table_free(imp_impact_table *t)
{
    if (!t) return;
    free(t->contact);
    free(t->index);
    memset(t, 0, sizeof *t);
}

static const char *target_names[4] = {"contact", "irb-velocity", "irb-momentum", "p-data"};

const char *imp_impact_target_name(imp_impact_target t)
{
    return (unsigned)t < 4 ? target_names[t] : NULL;
}

int imp_impact_target_parse(const char *text, imp_impact_target *out, const char *what)
{
    for (int k = 0; text && k < 4; k++)
        if (!strcmp(text, target_names[k])) { *out = (imp_impact_target)k; return IMP_OK; }
    return imp_fail(IMP_ERR_INVALID, "%s: unknown target '%s' (contact, irb-velocity, irb-momentum, p-data)", what,
                    text ? text : "(null)");
}

int imp_impact_targets(const imp_impact_table *t, imp_impact_target kind, double *P)
{
    for (size_t i = 0; i < t->count; i++) {
        const imp_contact *c = &t->contact[i];
        int st = IMP_OK;
        if (kind == IMP_TARGET_CONTACT) {
            double du[2] = {c->u_post[0] - c->u[0], c->u_post[1] - c->u[1]};
            P[2 * i] = c->Mc[0] * du[0] + c->Mc[1] * du[1];
            P[2 * i + 1] = c->Mc[2] * du[0] + c->Mc[3] * du[1];
        } else if (kind == IMP_TARGET_IRB_VELOCITY) {
            st = imp_impact_irb(c, t->kg, IMP_IRB_VELOCITY, P + 2 * i, NULL);
        } else if (kind == IMP_TARGET_IRB_MOMENTUM) {
            st = imp_impact_irb(c, t->kg, IMP_IRB_MOMENTUM, P + 2 * i, NULL);
        } else if (kind == IMP_TARGET_GIVEN) {
            return imp_fail(IMP_ERR_INVALID, "target: 'p-data' impulses are read from a file, not computed");
        } else {
            return imp_fail(IMP_ERR_INVALID, "target: unknown value %d", (int)kind);
        }
        if (st) return imp_fail_context(st, "impact %zu", t->index[i]);
    }
    return IMP_OK;
}

imp_ident_options imp_ident_options_default(void)
{
    imp_ident_options o = {1.0, 21, 1e-6};
    return o;
}

int impact_ident_check_options(const imp_ident_options *o)
{
    if (!(o->mu_cap > 0 && o->mu_cap <= 10)) return imp_fail(IMP_ERR_INVALID, "mu_cap: must be in (0, 10] (got %g)", o->mu_cap);
    if (o->grid < 2 || o->grid > 1001) return imp_fail(IMP_ERR_INVALID, "grid: must be in [2, 1001] (got %d)", o->grid);
    if (!(o->tol > 0 && o->tol < 0.1)) return imp_fail(IMP_ERR_INVALID, "tol: must be in (0, 0.1) (got %g)", o->tol);
    return IMP_OK;
}

/* Objective over the box [0, mu_cap] x [0, 1]; INFINITY where undefined. */
typedef double (*objective_fn)(double mu, double eps, void *ctx);

/* Grid start then compass search with step halving. */
static void box_minimise(objective_fn f, void *ctx, const imp_ident_options *o, double *mu, double *eps,
                         double *fbest)
{
    int G = o->grid;
    double best = INFINITY, bm = 0, be = 0;
    for (int i = 0; i < G; i++)
        for (int j = 0; j < G; j++) {
            double m = o->mu_cap * i / (G - 1), e = (double)j / (G - 1);
            double v = f(m, e, ctx);
            if (v < best) { best = v; bm = m; be = e; }
        }
    double sm = o->mu_cap / (G - 1), se = 1.0 / (G - 1);
    while (sm > o->tol * o->mu_cap || se > o->tol) {
        int moved = 0;
        static const int dirs[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
        for (int d = 0; d < 4; d++) {
            double m = bm + dirs[d][0] * sm, e = be + dirs[d][1] * se;
            if (m < 0) m = 0;
            if (m > o->mu_cap) m = o->mu_cap;
            if (e < 0) e = 0;
            if (e > 1) e = 1;
            if (m == bm && e == be) continue;
            double v = f(m, e, ctx);
            if (v < best) { best = v; bm = m; be = e; moved = 1; }
        }
        if (!moved) { sm *= 0.5; se *= 0.5; }
    }
    *mu = bm;
    *eps = be;
    *fbest = best;
}

typedef struct one_ctx {
    imp_impact_law law;
    const imp_contact *c;
    const double *P;
    double mu_cap;
} one_ctx;

/* mu above the sticking threshold is mapped onto it ([ISRR] eq 9 constraint) */
static double clip_to_mu_s(one_ctx *q, double mu, double eps)
{
    imp_impact_law L = q->law;
    L.eps = eps;
    double ms;
    if (imp_impact_sticking_threshold(&L, q->c->W, q->c->u, q->mu_cap, &ms)) return mu;
    return mu < ms ? mu : ms;
}

static double one_objective(double mu, double eps, void *ctx)
{
    one_ctx *q = ctx;
    imp_impact_law L = q->law;
    L.mu = clip_to_mu_s(q, mu, eps);
    L.eps = eps;
    double P[2];
    if (imp_impact_predict_fast(&L, q->c->W, q->c->u, P)) return INFINITY;
    return hypot(P[0] - q->P[0], P[1] - q->P[1]);
}

int imp_impact_identify_one(imp_impact_law *law, const imp_contact *c, const double P_target[2],
                            const imp_ident_options *opt, double *residual)
{
    imp_ident_options o = opt ? *opt : imp_ident_options_default();
    int st;
    if ((st = impact_ident_check_options(&o))) return st;
    imp_impact_law L = *law;
    L.mu = 0;
    L.eps = 0;
    if ((st = imp_impact_law_check(&L))) return st;
    if ((st = imp_check_finite(P_target, 2, "P_target"))) return st;
    if (!(c->u[1] < 0)) return imp_fail(IMP_ERR_INVALID, "u: normal contact velocity %g >= 0, not an impact", c->u[1]);
    one_ctx q = {L, c, P_target, o.mu_cap};
    double mu, eps, f;
    box_minimise(one_objective, &q, &o, &mu, &eps, &f);
    if (!isfinite(f)) return imp_fail(IMP_ERR_NUMERIC, "identification: the law fails everywhere on the box");
    law->mu = clip_to_mu_s(&q, mu, eps);
    law->eps = eps;
    if (residual) *residual = f;
    return IMP_OK;
}

typedef struct set_ctx {
    imp_impact_law law;
    const imp_impact_table *t;
    const double *P;
    const size_t *idx;
    size_t k;
} set_ctx;

static double set_objective(double mu, double eps, void *ctx)
{
    set_ctx *q = ctx;
    imp_impact_law L = q->law;
    L.mu = mu;
    L.eps = eps;
    double sum = 0;
    for (size_t j = 0; j < q->k; j++) {
        size_t i = q->idx ? q->idx[j] : j;
        const imp_contact *c = &q->t->contact[i];
        double P[2];
        if (imp_impact_predict_fast(&L, c->W, c->u, P)) return INFINITY;
        sum += hypot(P[0] - q->P[2 * i], P[1] - q->P[2 * i + 1]); /* [CoRL] eq 6: sum of norms */
    }
    return sum;
}

int imp_impact_identify_set(imp_impact_law *law, const imp_impact_table *t, const double *P_target,
                            const size_t *idx, size_t k, const imp_ident_options *opt, double *cost)
{
    imp_ident_options o = opt ? *opt : imp_ident_options_default();
    int st;
    if ((st = impact_ident_check_options(&o))) return st;
    imp_impact_law L = *law;
    L.mu = 0;
    L.eps = 0;
    if ((st = imp_impact_law_check(&L))) return st;
    if (k == 0 || k > t->count) return imp_fail(IMP_ERR_INVALID, "k: must be in [1, %zu] (got %zu)", t->count, k);
    for (size_t j = 0; idx && j < k; j++)
        if (idx[j] >= t->count) return imp_fail(IMP_ERR_INVALID, "idx[%zu]: %zu out of range", j, idx[j]);
    set_ctx q = {L, t, P_target, idx, k};
    double mu, eps, f;
    box_minimise(set_objective, &q, &o, &mu, &eps, &f);
    if (!isfinite(f)) return imp_fail(IMP_ERR_NUMERIC, "identification: the law fails everywhere on the box");
    law->mu = mu;
    law->eps = eps;
    if (cost) *cost = f;
    return IMP_OK;
}

int imp_impact_identify_ensemble(imp_impact_model model, imp_impact_variant variant,
                                 const imp_impact_table *t, const double *P_target, size_t k,
                                 size_t reps, uint64_t seed, const imp_ident_options *opt,
                                 imp_ensemble_result *out)
{
    if (k == 0 || k > t->count) return imp_fail(IMP_ERR_INVALID, "k: must be in [1, %zu] (got %zu)", t->count, k);
    if (reps < 1) return imp_fail(IMP_ERR_INVALID, "reps: must be >= 1");
    size_t *perm = malloc(t->count * sizeof *perm);
    double *mus = malloc(reps * sizeof(double)), *epss = malloc(reps * sizeof(double));
    int st = IMP_OK;
    if (!perm || !mus || !epss) { st = imp_fail(IMP_ERR_NOMEM, "ensemble: out of memory"); goto done; }
    imp_rng rng;
    imp_rng_seed(&rng, seed);
    for (size_t r = 0; r < reps; r++) {
        for (size_t i = 0; i < t->count; i++) perm[i] = i;
        imp_rng_shuffle(&rng, perm, t->count); /* first k: drawn without replacement */
        imp_impact_law law = {model, variant, 0, 0};
        if ((st = imp_impact_identify_set(&law, t, P_target, perm, k, opt, NULL))) goto done;
        mus[r] = law.mu;
        epss[r] = law.eps;
    }
    double sm = 0, se = 0, vm = 0, ve = 0;
    for (size_t r = 0; r < reps; r++) { sm += mus[r]; se += epss[r]; }
    sm /= reps;
    se /= reps;
    for (size_t r = 0; r < reps; r++) {
        vm += (mus[r] - sm) * (mus[r] - sm);
        ve += (epss[r] - se) * (epss[r] - se);
    }
    out->mu_mean = sm;
    out->eps_mean = se;
    out->mu_std = reps > 1 ? sqrt(vm / (reps - 1)) : 0;
    out->eps_std = reps > 1 ? sqrt(ve / (reps - 1)) : 0;
    out->k = k;
    out->reps = reps;
done:
    free(perm);
    free(mus);
    free(epss);
    return st;
}

int imp_impact_predictive_fraction(imp_impact_model model, imp_impact_variant variant,
                                   const imp_impact_table *t, const double *P_target,
                                   double rel_tol, const imp_ident_options *opt, double *fraction,
                                   double *per_impact)
{
    if (!(rel_tol >= 0 && rel_tol < 1)) return imp_fail(IMP_ERR_INVALID, "rel_tol: must be in [0, 1) (got %g)", rel_tol);
    size_t inside = 0;
    for (size_t i = 0; i < t->count; i++) {
        imp_impact_law law = {model, variant, 0, 0};
        double res;
        int st = imp_impact_identify_one(&law, &t->contact[i], P_target + 2 * i, opt, &res);
        if (st) return imp_fail_context(st, "impact %zu", t->index[i]);
        if (res <= rel_tol * hypot(P_target[2 * i], P_target[2 * i + 1])) inside++;
        if (per_impact) {
            per_impact[3 * i] = law.mu;
            per_impact[3 * i + 1] = law.eps;
            per_impact[3 * i + 2] = res;
        }
    }
    *fraction = (double)inside / (double)t->count;
    return IMP_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int imp_impact_evaluate_law(const imp_impact_law *law, const imp_impact_table *t, double *errors,
                            imp_law_stats *stats)
{
    int st;
    if ((st = imp_impact_law_check(law))) return st;
    double *e = malloc(t->count * sizeof(double));
    if (!e) return imp_fail(IMP_ERR_NOMEM, "evaluate: out of memory");
    imp_law_stats s;
    memset(&s, 0, sizeof s);
    size_t ok = 0, gain = 0, pen = 0, cone = 0;
    double sum = 0;
    s.first_failure = SIZE_MAX;
    for (size_t i = 0; i < t->count; i++) {
        const imp_contact *c = &t->contact[i];
        double P[2], up[2];
        if (imp_impact_predict(law, c->W, c->u, P)) {
            if (s.failures++ == 0) s.first_failure = t->index[i];
            if (errors) errors[i] = NAN;
            continue;
        }
        double err = imp_contact_impulse_error(c, P, t->kg);
        if (errors) errors[i] = err;
        e[ok++] = err;
        sum += err;
        imp_contact_u_after(c, P, up);
        gain += imp_contact_ellipse_alpha(c, P) > 1 + 1e-9;
        pen += up[1] < -1e-9 * fabs(c->u[1]);
        cone += P[1] < 0 || fabs(P[0]) > law->mu * P[1] * (1 + 1e-9) + 1e-15;
    }
    if (ok) {
        qsort(e, ok, sizeof(double), cmp_double);
        s.mean_error = sum / ok;
        s.median_error = ok % 2 ? e[ok / 2] : 0.5 * (e[ok / 2 - 1] + e[ok / 2]);
        s.energy_gain_share = (double)gain / ok;
        s.penetration_share = (double)pen / ok;
        s.cone_violation_share = (double)cone / ok;
    } else {
        s.mean_error = s.median_error = NAN;
    }
    free(e);
    if (stats) *stats = s;
    return IMP_OK;
}

int imp_impact_irb_errors(const imp_impact_table *t, imp_irb_metric metric, double *errors)
{
    for (size_t i = 0; i < t->count; i++) {
        double P[2];
        int st = imp_impact_irb(&t->contact[i], t->kg, metric, P, NULL);
        if (st) return imp_fail_context(st, "impact %zu", t->index[i]);
        errors[i] = imp_contact_impulse_error(&t->contact[i], P, t->kg);
    }
    return IMP_OK;
}
