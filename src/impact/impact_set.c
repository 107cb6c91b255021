/* The impact set: allocation, copying, convention switching, validation. */
#include "impulse/impact.h"
#include "impulse/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *imp_tangent_sign_name(imp_tangent_sign c)
{
    switch (c) {
    case IMP_TANGENT_STORED: return "stored";
    case IMP_TANGENT_CORRECTED: return "corrected";
    }
    return NULL;
}

int imp_tangent_sign_parse(const char *text, imp_tangent_sign *out, const char *what)
{
    if (text && !strcmp(text, "stored")) { *out = IMP_TANGENT_STORED; return IMP_OK; }
    if (text && !strcmp(text, "corrected")) { *out = IMP_TANGENT_CORRECTED; return IMP_OK; }
    return imp_fail(IMP_ERR_INVALID, "%s: unknown tangent-sign convention '%s' (stored or corrected)",
                    what, text ? text : "(null)");
}

imp_impact_object imp_impact_object_ellipse(void)
{
    /* Data README: m = 36.4 g, g = 9.81, Vicon at 250 Hz. k_g = 19.2 mm is
     * the rounded sqrt((a^2 + b^2)/5) with a = 35 mm, b = 25 mm ([CODE2]
     * I = m (a^2 + b^2)/5); the unrounded value reproduces gpFeature5.mat
     * and w_true_data.mat to round-off, 19.2 mm only to 0.3%. */
    imp_impact_object o = {0.0364, sqrt((0.035 * 0.035 + 0.025 * 0.025) / 5.0), 9.81, 1.0 / 250.0};
    return o;
}

int imp_impact_set_alloc(imp_impact_set *s, size_t count)
{
    memset(s, 0, sizeof *s);
    if (count == 0) return imp_fail(IMP_ERR_INVALID, "impact set: count must be > 0");
    if (count > ((size_t)1 << 40)) return imp_fail(IMP_ERR_INVALID, "impact set: count %zu too large", count);
    s->pre = calloc(count * 6, sizeof(double));
    s->post = calloc(count * 6, sizeof(double));
    s->n = calloc(count * 3, sizeof(double));
    s->d = calloc(count * 3, sizeof(double));
    s->valid = malloc(count);
    if (!s->pre || !s->post || !s->n || !s->d || !s->valid) {
        imp_impact_set_free(s);
        return imp_fail(IMP_ERR_NOMEM, "impact set: out of memory for %zu impacts", count);
    }
    memset(s->valid, 1, count);
    s->count = count;
    s->object = imp_impact_object_ellipse();
    s->convention = IMP_TANGENT_STORED;
    return IMP_OK;
}

void imp_impact_set_free(imp_impact_set *s)
{
    if (!s) return;
    free(s->pre);
    free(s->post);
    free(s->n);
    free(s->d);
    free(s->valid);
    memset(s, 0, sizeof *s);
}

int imp_impact_set_copy(imp_impact_set *dst, const imp_impact_set *src)
{
    int st = imp_impact_set_alloc(dst, src->count);
    if (st) return st;
    memcpy(dst->pre, src->pre, src->count * 6 * sizeof(double));
    memcpy(dst->post, src->post, src->count * 6 * sizeof(double));
    memcpy(dst->n, src->n, src->count * 3 * sizeof(double));
    memcpy(dst->d, src->d, src->count * 3 * sizeof(double));
    memcpy(dst->valid, src->valid, src->count);
    dst->object = src->object;
    dst->convention = src->convention;
    return IMP_OK;
}

void imp_impact_set_convention(imp_impact_set *s, imp_tangent_sign c)
{
    if (s->convention == c) return;
    /* reference sec 4: d := (1, 0, -d3), n and the states unchanged */
    for (size_t i = 0; i < s->count; i++) s->d[3 * i + 2] = -s->d[3 * i + 2];
    s->convention = c;
}

static int check_rows(const double *a, size_t rows, size_t cols, const char *what)
{
    for (size_t i = 0; i < rows * cols; i++)
        if (!isfinite(a[i]))
            return imp_fail(IMP_ERR_NUMERIC, "%s: non-finite value at row %zu, column %zu", what,
                            i / cols, i % cols);
    return IMP_OK;
}

int imp_impact_set_validate(imp_impact_set *s, size_t *n_invalid)
{
    const imp_impact_object *o = &s->object;
    if (!(o->mass > 0) || !isfinite(o->mass)) return imp_fail(IMP_ERR_INVALID, "object.mass: must be > 0 (got %g)", o->mass);
    if (!(o->kg > 0) || !isfinite(o->kg)) return imp_fail(IMP_ERR_INVALID, "object.kg: must be > 0 (got %g)", o->kg);
    if (!isfinite(o->g) || o->g < 0) return imp_fail(IMP_ERR_INVALID, "object.g: must be >= 0 (got %g)", o->g);
    if (!(o->h > 0) || !isfinite(o->h)) return imp_fail(IMP_ERR_INVALID, "object.h: must be > 0 (got %g)", o->h);
    if (s->count == 0 || !s->pre) return imp_fail(IMP_ERR_INVALID, "impact set: empty");
    int st;
    if ((st = check_rows(s->pre, s->count, 6, "pre"))) return st;
    if ((st = check_rows(s->post, s->count, 6, "post"))) return st;
    if ((st = check_rows(s->n, s->count, 3, "n"))) return st;
    if ((st = check_rows(s->d, s->count, 3, "d"))) return st;
    size_t bad = 0;
    for (size_t i = 0; i < s->count; i++) {
        const double *n = s->n + 3 * i, *v = s->pre + 6 * i + 3;
        double un = n[0] * v[0] + n[1] * v[1] + n[2] * v[2];
        s->valid[i] = un < 0.0;
        bad += !s->valid[i];
    }
    if (n_invalid) *n_invalid = bad;
    return IMP_OK;
}
