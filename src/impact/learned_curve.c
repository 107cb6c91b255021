/* Learning curves of the data-driven impact models ([CoRL] §5, Fig. 8):
 * error on held-out impacts against training-set size over seeded random
 * splits, with Best Post Hoc and the IRB bound on the same test sets. */
#include "impulse/gp.h"
#include "impulse/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void imp_lc_result_free(imp_lc_result *res)
{
    if (!res) return;
    free(res->sizes);
    res->sizes = NULL;
}

/* Mean error of a law with fixed parameters over test contacts; per-impact
 * errors into err (n). A law that cannot finish predicts no impulse. */
static double law_errors(const imp_impact_law *law, const imp_contact *c, size_t n, double kg,
                         double *err)
{
    double s = 0.0;
    for (size_t a = 0; a < n; a++) {
        double P[2];
        if (imp_impact_predict_fast(law, c[a].W, c[a].u, P) != IMP_OK) P[0] = P[1] = 0.0;
        err[a] = imp_contact_impulse_error(&c[a], P, kg);
        s += err[a];
    }
    imp_clear_error();
    return s / (double)n;
}

static int check_options(const imp_gpi_data *d, const imp_lc_options *o)
{
    if (!d || !d->table) return imp_fail(IMP_ERR_INVALID, "learning curve: data: NULL");
    if (!o) return imp_fail(IMP_ERR_INVALID, "learning curve: options: NULL");
    if (o->n_sizes == 0 || o->n_sizes > 64 || !o->sizes)
        return imp_fail(IMP_ERR_INVALID, "learning curve: sizes: need 1..64 sizes");
    if (o->repeats == 0) return imp_fail(IMP_ERR_INVALID, "learning curve: repeats: 0");
    if (o->n_test == 0) return imp_fail(IMP_ERR_INVALID, "learning curve: n_test: 0");
    if (o->n_ident == 0) return imp_fail(IMP_ERR_INVALID, "learning curve: n_ident: 0");
    if (o->kinds >> IMP_GPI_KIND_COUNT)
        return imp_fail(IMP_ERR_INVALID, "learning curve: kinds: unknown bits 0x%x", o->kinds);
    size_t pool = d->count > o->n_test ? d->count - o->n_test : 0;
    for (size_t s = 0; s < o->n_sizes; s++) {
        if (o->sizes[s] < 2)
            return imp_fail(IMP_ERR_INVALID, "learning curve: sizes[%zu]: %zu < 2", s, o->sizes[s]);
        if (o->sizes[s] > pool)
            return imp_fail(IMP_ERR_SHAPE,
                            "learning curve: sizes[%zu]: %zu exceeds the %zu impacts left after %zu test impacts",
                            s, o->sizes[s], pool, o->n_test);
    }
    if (o->n_ident > pool)
        return imp_fail(IMP_ERR_SHAPE, "learning curve: n_ident: %zu exceeds the training pool %zu",
                        o->n_ident, pool);
    if ((o->kinds & (1u << IMP_GPI_PARAMS)) && !d->params)
        return imp_fail(IMP_ERR_INVALID,
                        "learning curve: param-gp needs data built with per-impact parameters");
    return IMP_OK;
}

int imp_gpi_learning_curve(const imp_gpi_data *d, const imp_lc_options *o, imp_lc_result *res)
{
    if (!res) return imp_fail(IMP_ERR_INVALID, "learning curve: result: NULL");
    memset(res, 0, sizeof *res);
    int st = check_options(d, o);
    if (st) return st;
    const imp_impact_table *t = d->table;
    const size_t n = d->count, R = o->repeats, S = o->n_sizes;
    res->n_sizes = S;
    res->repeats = R;
    res->kinds = o->kinds;
    res->base = d->base;
    res->sizes = malloc(S * sizeof *res->sizes);
    size_t *perm = malloc(n * sizeof *perm);
    imp_contact *test = malloc(o->n_test * sizeof *test);
    double *err = malloc(o->n_test * IMP_IMPACT_MODEL_COUNT * sizeof *err);
    double *v = malloc(o->n_test * 3 * sizeof *v);
    double *irb = malloc(n * sizeof *irb);
    /* sums over repeats for mean and std */
    double (*sum)[64] = calloc(IMP_GPI_KIND_COUNT, sizeof *sum);
    double (*sum2)[64] = calloc(IMP_GPI_KIND_COUNT, sizeof *sum2);
    double rsum[IMP_LC_REF_COUNT] = {0}, rsum2[IMP_LC_REF_COUNT] = {0};
    if (!res->sizes || !perm || !test || !err || !v || !irb || !sum || !sum2) {
        st = imp_fail(IMP_ERR_NOMEM, "learning curve: cannot allocate for %zu impacts", n);
        goto done;
    }
    memcpy(res->sizes, o->sizes, S * sizeof *res->sizes);
    /* the IRB bound does not depend on the split */
    st = imp_impact_irb_errors(t, IMP_IRB_VELOCITY, irb);
    if (st) goto done;

    imp_rng rng;
    imp_rng_seed(&rng, o->seed);
    for (size_t i = 0; i < n; i++) perm[i] = i;
    for (size_t r = 0; r < R; r++) {
        imp_rng_shuffle(&rng, perm, n);
        const size_t *pool = perm + o->n_test;
        double irb_mean = 0.0;
        for (size_t a = 0; a < o->n_test; a++) {
            test[a] = t->contact[perm[a]];
            irb_mean += irb[perm[a]];
        }
        irb_mean /= (double)o->n_test;

        /* references: the six laws identified on n_ident training impacts */
        double base_mean = 0.0;
        for (int mdl = 0; mdl < IMP_IMPACT_MODEL_COUNT; mdl++) {
            imp_impact_law law = d->base;
            law.model = (imp_impact_model)mdl;
            double cost;
            st = imp_impact_identify_set(&law, t, d->target, pool, o->n_ident, &o->ident, &cost);
            if (st) goto done;
            double mean = law_errors(&law, test, o->n_test, t->kg, err + mdl * o->n_test);
            if (law.model == d->base.model) base_mean = mean;
            if (r == 0) {
                res->law_mu[mdl] = law.mu;
                res->law_eps[mdl] = law.eps;
            }
        }
        double bph = 0.0;
        for (size_t a = 0; a < o->n_test; a++) {
            double best = INFINITY;
            for (int mdl = 0; mdl < IMP_IMPACT_MODEL_COUNT; mdl++)
                best = fmin(best, err[mdl * o->n_test + a]);
            bph += best;
        }
        bph /= (double)o->n_test;
        double refs[IMP_LC_REF_COUNT] = {bph, irb_mean, base_mean};
        for (int q = 0; q < IMP_LC_REF_COUNT; q++) {
            rsum[q] += refs[q];
            rsum2[q] += refs[q] * refs[q];
        }

        for (size_t s = 0; s < S; s++) {
            for (int kind = 0; kind < IMP_GPI_KIND_COUNT; kind++) {
                if (!(o->kinds & (1u << kind))) continue;
                imp_gpi_model m;
                imp_gp_options go = o->gp;
                go.seed = o->gp.seed + 1000003u * r + 7919u * s; /* distinct, reproducible starts */
                double t0 = imp_time_now();
                st = imp_gpi_fit(&m, (imp_gpi_kind)kind, d, pool, o->sizes[s], &go, &o->ident);
                if (!st) st = imp_gpi_predict(&m, test, o->n_test, v);
                res->fit_seconds[kind] += imp_time_now() - t0;
                imp_gpi_model_free(&m);
                if (st) {
                    imp_fail_context(st, "learning curve: repeat %zu, size %zu", r, o->sizes[s]);
                    goto done;
                }
                double mean = 0.0;
                for (size_t a = 0; a < o->n_test; a++)
                    mean += imp_impact_velocity_error(v + 3 * a, test[a].v_post, t->kg);
                mean /= (double)o->n_test;
                sum[kind][s] += mean;
                sum2[kind][s] += mean * mean;
            }
        }
    }
    for (int kind = 0; kind < IMP_GPI_KIND_COUNT; kind++)
        for (size_t s = 0; s < S; s++) {
            double m = sum[kind][s] / (double)R;
            double var = R > 1 ? (sum2[kind][s] - (double)R * m * m) / (double)(R - 1) : 0.0;
            res->mean[kind][s] = (o->kinds & (1u << kind)) ? m : NAN;
            res->std[kind][s] = (o->kinds & (1u << kind)) ? sqrt(var > 0.0 ? var : 0.0) : NAN;
        }
    for (int q = 0; q < IMP_LC_REF_COUNT; q++) {
        double m = rsum[q] / (double)R;
        double var = R > 1 ? (rsum2[q] - (double)R * m * m) / (double)(R - 1) : 0.0;
        res->ref_mean[q] = m;
        res->ref_std[q] = sqrt(var > 0.0 ? var : 0.0);
    }
    st = IMP_OK;
done:
    free(perm);
    free(test);
    free(err);
    free(v);
    free(irb);
    free(sum);
    free(sum2);
    if (st) imp_lc_result_free(res);
    return st;
}
