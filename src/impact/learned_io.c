/* Saving and loading fitted data-driven impact models (.npz, io.h). The GP
 * state is stored as is (standardised inputs, factor, weights), so a loaded
 * model predicts bit-identically without refitting. */
#include "impulse/gp.h"
#include "impulse/io.h"
#include "gp_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_gp(imp_npz *z, size_t j, const imp_gp *gp)
{
    char name[64];
    size_t n = gp->n, d = gp->d;
    size_t s2[2] = {n, d}, sd[1] = {d}, sp[1] = {d + 2}, sn[1] = {n}, snn[2] = {n, n}, s4[1] = {4};
    double scal[4] = {gp->y_mean, gp->y_scale, gp->jitter, gp->lml};
    int st;
#define ADD(suffix, nd, shape, data)                             \
    snprintf(name, sizeof name, "gp%zu_" suffix, j);             \
    if ((st = imp_npz_add_f64(z, name, nd, shape, data))) return st
    ADD("x", 2, s2, gp->x);
    ADD("x_mean", 1, sd, gp->x_mean);
    ADD("x_scale", 1, sd, gp->x_scale);
    ADD("log_theta", 1, sp, gp->log_theta);
    ADD("alpha", 1, sn, gp->alpha);
    ADD("chol", 2, snn, gp->chol);
    ADD("scalars", 1, s4, scal);
#undef ADD
    return IMP_OK;
}

int imp_gpi_save(const imp_gpi_model *m, const size_t *train_index, size_t n_train,
                 const char *extra_meta, const char *path)
{
    if (!m || !m->gp || !path) return imp_fail(IMP_ERR_INVALID, "gpi save: model/path: NULL or not fitted");
    imp_npz *z = imp_npz_new();
    if (!z) return imp_fail(IMP_ERR_NOMEM, "gpi save: out of memory");
    int st = IMP_OK;
    for (size_t j = 0; !st && j < m->gp->k; j++) st = add_gp(z, j, m->gp->gp[j]);
    if (!st && train_index && n_train) {
        int64_t *ti = malloc(n_train * sizeof *ti);
        if (!ti) st = imp_fail(IMP_ERR_NOMEM, "gpi save: out of memory");
        for (size_t a = 0; ti && a < n_train; a++) ti[a] = (int64_t)train_index[a];
        size_t sh[1] = {n_train};
        if (!st) st = imp_npz_add_i64(z, "train_index", 1, sh, ti);
        free(ti);
    }
    if (!st) {
        char head[512];
        snprintf(head, sizeof head,
                 "{\"kind\": \"gp_impact_model\", \"model\": \"%s\", \"law\": \"%s\", \"variant\": \"%s\", "
                 "\"mu\": %.17g, \"eps\": %.17g, \"outputs\": %zu, \"tool\": \"impulse %s\"",
                 imp_gpi_kind_name(m->kind), imp_impact_model_name(m->base.model),
                 imp_impact_variant_name(m->base.variant), m->base.mu, m->base.eps, m->gp->k,
                 IMP_VERSION_STRING);
        size_t len = strlen(head) + (extra_meta ? strlen(extra_meta) : 0) + 8;
        char *meta = malloc(len);
        if (!meta) st = imp_fail(IMP_ERR_NOMEM, "gpi save: out of memory");
        else {
            snprintf(meta, len, "%s%s%s}", head, extra_meta && *extra_meta ? ", " : "",
                     extra_meta ? extra_meta : "");
            st = imp_npz_set_meta(z, meta);
            free(meta);
        }
    }
    if (!st) st = imp_npz_save(z, path);
    imp_npz_free(z);
    return st;
}

static int get_gp(const imp_npz *z, size_t j, imp_gp **out)
{
    char name[64];
    const double *x, *xm, *xs, *th, *al, *ch, *sc;
    size_t shape[2];
    size_t e2[2] = {0, 0};
    snprintf(name, sizeof name, "gp%zu_x", j);
    int st = imp_npz_get_f64(z, name, 2, e2, &x, shape);
    if (st) return st;
    size_t n = shape[0], d = shape[1];
    if (n == 0 || d == 0 || d > IMP_GP__MAX_DIM)
        return imp_fail(IMP_ERR_SHAPE, "%s: shape %zu x %zu invalid", name, n, d);
    size_t ed[1] = {d}, ep[1] = {d + 2}, en[1] = {n}, enn[2] = {n, n}, e4[1] = {4};
#define GET(suffix, nd, shape_, ptr)                                   \
    snprintf(name, sizeof name, "gp%zu_" suffix, j);                   \
    if ((st = imp_npz_get_f64(z, name, nd, shape_, &ptr, NULL))) return st
    GET("x_mean", 1, ed, xm);
    GET("x_scale", 1, ed, xs);
    GET("log_theta", 1, ep, th);
    GET("alpha", 1, en, al);
    GET("chol", 2, enn, ch);
    GET("scalars", 1, e4, sc);
#undef GET
    for (size_t i = 0; i < d; i++)
        if (!(xs[i] > 0.0)) return imp_fail(IMP_ERR_FORMAT, "gp%zu_x_scale[%zu]: %g not positive", j, i, xs[i]);
    if (!(sc[1] > 0.0)) return imp_fail(IMP_ERR_FORMAT, "gp%zu_scalars: y_scale %g not positive", j, sc[1]);
    for (size_t i = 0; i < n; i++)
        if (!(ch[i + i * n] > 0.0))
            return imp_fail(IMP_ERR_FORMAT, "gp%zu_chol: diagonal %zu not positive", j, i);
    imp_gp *gp = imp_gp__alloc(n, d);
    if (!gp) return imp_fail(IMP_ERR_NOMEM, "gpi load: out of memory");
    memcpy(gp->x, x, n * d * sizeof(double));
    memcpy(gp->x_mean, xm, d * sizeof(double));
    memcpy(gp->x_scale, xs, d * sizeof(double));
    memcpy(gp->log_theta, th, (d + 2) * sizeof(double));
    memcpy(gp->alpha, al, n * sizeof(double));
    memcpy(gp->chol, ch, n * n * sizeof(double));
    gp->y_mean = sc[0];
    gp->y_scale = sc[1];
    gp->jitter = sc[2];
    gp->lml = sc[3];
    *out = gp;
    return IMP_OK;
}

int imp_gpi_load(imp_gpi_model *m, const char *path, char **meta_out, size_t **train_out,
                 size_t *n_train_out)
{
    if (!m || !path) return imp_fail(IMP_ERR_INVALID, "gpi load: model/path: NULL");
    memset(m, 0, sizeof *m);
    if (meta_out) *meta_out = NULL;
    if (train_out) *train_out = NULL;
    if (n_train_out) *n_train_out = 0;
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return st;
    const char *meta = imp_npz_meta(z);
    char buf[64];
    double outputs = 0, mu = 0, eps = 0;
    if (!meta || imp_json_get_string(meta, "kind", buf, sizeof buf) || strcmp(buf, "gp_impact_model")) {
        st = imp_fail(IMP_ERR_FORMAT, "meta: not a GP impact model (kind != gp_impact_model)");
        goto done;
    }
    if ((st = imp_json_get_string(meta, "model", buf, sizeof buf)) ||
        (st = imp_gpi_kind_parse(buf, &m->kind, "meta model")))
        goto done;
    if ((st = imp_json_get_string(meta, "law", buf, sizeof buf)) ||
        (st = imp_impact_model_parse(buf, &m->base.model, "meta law")))
        goto done;
    if ((st = imp_json_get_string(meta, "variant", buf, sizeof buf)) ||
        (st = imp_impact_variant_parse(buf, &m->base.variant, "meta variant")))
        goto done;
    if ((st = imp_json_get_number(meta, "mu", &mu)) || (st = imp_json_get_number(meta, "eps", &eps)) ||
        (st = imp_json_get_number(meta, "outputs", &outputs)))
        goto done;
    m->base.mu = mu;
    m->base.eps = eps;
    int want = m->kind == IMP_GPI_X1_WRENCH || m->kind == IMP_GPI_RESIDUAL_WRENCH ? 3 : 2;
    if (outputs != want) {
        st = imp_fail(IMP_ERR_FORMAT, "meta outputs: %g, model %s has %d", outputs,
                      imp_gpi_kind_name(m->kind), want);
        goto done;
    }
    if ((st = imp_impact_law_check(&m->base))) goto done;
    m->gp = calloc(1, sizeof *m->gp);
    if (m->gp) m->gp->gp = calloc((size_t)want, sizeof *m->gp->gp);
    if (!m->gp || !m->gp->gp) {
        st = imp_fail(IMP_ERR_NOMEM, "gpi load: out of memory");
        goto done;
    }
    m->gp->k = (size_t)want;
    size_t dim = m->kind == IMP_GPI_X2_IMPULSE ? 2 : 5;
    for (int j = 0; j < want; j++) {
        if ((st = get_gp(z, (size_t)j, &m->gp->gp[j]))) goto done;
        if (m->gp->gp[j]->d != dim) {
            st = imp_fail(IMP_ERR_SHAPE, "gp%d_x: %zu features, model %s needs %zu", j,
                          m->gp->gp[j]->d, imp_gpi_kind_name(m->kind), dim);
            goto done;
        }
    }
    if (train_out && imp_npz_find(z, "train_index")) {
        int64_t *ti = NULL;
        size_t sh[1], e1[1] = {0};
        if ((st = imp_npz_get_i64_copy(z, "train_index", 1, e1, &ti, sh))) goto done;
        *train_out = malloc((sh[0] ? sh[0] : 1) * sizeof **train_out);
        if (!*train_out) {
            free(ti);
            st = imp_fail(IMP_ERR_NOMEM, "gpi load: out of memory");
            goto done;
        }
        for (size_t a = 0; a < sh[0]; a++) (*train_out)[a] = ti[a] < 0 ? (size_t)-1 : (size_t)ti[a];
        if (n_train_out) *n_train_out = sh[0];
        free(ti);
    }
    if (meta_out) {
        *meta_out = malloc(strlen(meta) + 1);
        if (*meta_out) strcpy(*meta_out, meta);
    }
done:
    imp_npz_free(z);
    if (st) {
        imp_gpi_model_free(m);
        if (train_out) {
            free(*train_out);
            *train_out = NULL;
        }
        return imp_fail_context(st, "%s", path);
    }
    return IMP_OK;
}
