/* Impact set <-> .npz (include/impulse/io.h). */
#include "impulse/impact.h"
#include "impulse/core.h"
#include "impulse/io.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int imp_impact_save_npz(const imp_impact_set *s, const char *path)
{
    if (!s || s->count == 0) return imp_fail(IMP_ERR_INVALID, "impact set: empty");
    imp_npz *z = imp_npz_new();
    if (!z) return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", path);
    int st = IMP_OK;
    size_t sh6[2] = {s->count, 6}, sh3[2] = {s->count, 3}, sh1[1] = {s->count};
    int64_t *valid = malloc(s->count * sizeof(int64_t));
    if (!valid) { imp_npz_free(z); return imp_fail(IMP_ERR_NOMEM, "%s: out of memory", path); }
    for (size_t i = 0; i < s->count; i++) valid[i] = s->valid[i];
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "kind", "impact_set");
    imp_json_kv_string(&j, "convention", imp_tangent_sign_name(s->convention));
    imp_json_kv_number(&j, "mass", s->object.mass);
    imp_json_kv_number(&j, "kg", s->object.kg);
    imp_json_kv_number(&j, "g", s->object.g);
    imp_json_kv_number(&j, "h", s->object.h);
    imp_json_kv_string(&j, "tool", "impulse " IMP_VERSION_STRING);
    imp_json_end_object(&j);
    const char *meta = imp_json_text(&j);
    if (!meta) st = imp_fail(IMP_ERR_NOMEM, "%s: out of memory", path);
    if (!st) st = imp_npz_add_f64(z, "pre", 2, sh6, s->pre);
    if (!st) st = imp_npz_add_f64(z, "post", 2, sh6, s->post);
    if (!st) st = imp_npz_add_f64(z, "n", 2, sh3, s->n);
    if (!st) st = imp_npz_add_f64(z, "d", 2, sh3, s->d);
    if (!st) st = imp_npz_add_i64(z, "valid", 1, sh1, valid);
    if (!st) st = imp_npz_set_meta(z, meta);
    if (!st) st = imp_npz_save(z, path);
    imp_json_free(&j);
    free(valid);
    imp_npz_free(z);
    return st;
}

int imp_impact_load_npz(imp_impact_set *s, const char *path)
{
    memset(s, 0, sizeof *s);
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return st;
    const double *pre = NULL, *post = NULL, *n = NULL, *d = NULL;
    int64_t *valid = NULL;
    size_t shape[2] = {0, 0}, want6[2] = {0, 6}, want3[2] = {0, 3};
    const char *meta = imp_npz_meta(z);
    char conv[32];
    double mass, kg, g, h;
    if ((st = imp_npz_get_f64(z, "pre", 2, want6, &pre, shape))) goto done;
    size_t count = shape[0];
    want6[0] = want3[0] = count;
    if ((st = imp_npz_get_f64(z, "post", 2, want6, &post, NULL))) goto done;
    if ((st = imp_npz_get_f64(z, "n", 2, want3, &n, NULL))) goto done;
    if ((st = imp_npz_get_f64(z, "d", 2, want3, &d, NULL))) goto done;
    if ((st = imp_npz_get_i64_copy(z, "valid", 1, &count, &valid, NULL))) goto done;
    if (!meta) { st = imp_fail(IMP_ERR_NOT_FOUND, "meta: missing"); goto done; }
    if ((st = imp_json_get_string(meta, "kind", conv, sizeof conv)) || strcmp(conv, "impact_set")) {
        st = imp_fail(IMP_ERR_FORMAT, "meta.kind: not an impact set");
        goto done;
    }
    if ((st = imp_json_get_string(meta, "convention", conv, sizeof conv))) { imp_fail_context(st, "meta.convention"); goto done; }
    if ((st = imp_json_get_number(meta, "mass", &mass))) { imp_fail_context(st, "meta.mass"); goto done; }
    if ((st = imp_json_get_number(meta, "kg", &kg))) { imp_fail_context(st, "meta.kg"); goto done; }
    if ((st = imp_json_get_number(meta, "g", &g))) { imp_fail_context(st, "meta.g"); goto done; }
    if ((st = imp_json_get_number(meta, "h", &h))) { imp_fail_context(st, "meta.h"); goto done; }
    if ((st = imp_impact_set_alloc(s, count))) goto done;
    if ((st = imp_tangent_sign_parse(conv, &s->convention, "meta.convention"))) goto done;
    memcpy(s->pre, pre, count * 6 * sizeof(double));
    memcpy(s->post, post, count * 6 * sizeof(double));
    memcpy(s->n, n, count * 3 * sizeof(double));
    memcpy(s->d, d, count * 3 * sizeof(double));
    s->object.mass = mass;
    s->object.kg = kg;
    s->object.g = g;
    s->object.h = h;
    st = imp_impact_set_validate(s, NULL);
    /* keep flags the writer stored only where validation agrees the impact is usable */
    for (size_t i = 0; !st && i < count; i++) s->valid[i] = s->valid[i] && valid[i] != 0;
done:
    if (st) {
        imp_fail_context(st, "%s", path);
        imp_impact_set_free(s);
    }
    free(valid);
    imp_npz_free(z);
    return st;
}
