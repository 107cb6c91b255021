/* Synthetic drops as impact sets and as .npz files in the layout of the real
 * data (data_ellipse.mat: states_i, states_f, n, d). */
#include "impulse/drop.h"
#include "impulse/impact.h"
#include "impulse/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int imp_drop_to_impact_set(const imp_drop_sample *s, size_t count, const imp_drop_params *p,
                           imp_impact_set *set)
{
    if (!set) return imp_fail(IMP_ERR_INVALID, "drop: set: NULL");
    memset(set, 0, sizeof *set);
    if (!s || !p) return imp_fail(IMP_ERR_INVALID, "drop: samples/params: NULL");
    int st = imp_drop_params_check(p);
    if (st) return st;
    st = imp_impact_set_alloc(set, count);
    if (st) return st;
    for (size_t i = 0; i < count; i++) {
        memcpy(set->pre + 6 * i, s[i].pre, 6 * sizeof(double));
        memcpy(set->post + 6 * i, s[i].post, 6 * sizeof(double));
        memcpy(set->n + 3 * i, s[i].n, 3 * sizeof(double));
        memcpy(set->d + 3 * i, s[i].d, 3 * sizeof(double));
    }
    set->object.mass = p->mass;
    set->object.kg = p->kg;
    set->object.g = p->g;
    set->object.h = 1.0 / p->frame_rate;
    set->convention = IMP_TANGENT_CORRECTED; /* d = (1, 0, -r_y) with CCW theta */
    st = imp_impact_set_validate(set, NULL);
    if (st) imp_impact_set_free(set);
    return st;
}

static void kv_params(imp_json *j, const imp_drop_params *p)
{
#define KV(f) imp_json_kv_number(j, #f, p->f)
    KV(a); KV(b); KV(mass); KV(kg); KV(g); KV(k_n); KV(c_n); KV(mu); KV(k_t); KV(c_t); KV(rho_patch); KV(dt);
    KV(dt_free); KV(frame_rate); KV(noise_pos); KV(noise_theta); KV(vx_mean); KV(vx_sd);
    KV(vy_mean); KV(vy_sd); KV(omega_mean); KV(omega_sd); KV(accel_threshold);
#undef KV
    imp_json_kv_int(j, "pre_first", p->pre_first);
    imp_json_kv_int(j, "pre_last", p->pre_last);
    imp_json_kv_int(j, "post_first", p->post_first);
    imp_json_kv_int(j, "post_count", p->post_count);
}

int imp_drop_save_npz(const imp_drop_sample *s, size_t count, const imp_drop_params *p,
                      uint64_t seed, const char *path)
{
    if (!s || !p || !path) return imp_fail(IMP_ERR_INVALID, "drop: save: NULL argument");
    if (count == 0) return imp_fail(IMP_ERR_SHAPE, "drop: save: count is 0");
    int st = imp_drop_params_check(p);
    if (st) return st;
    double *buf = malloc(count * 6 * 4 * sizeof *buf);
    imp_npz *z = imp_npz_new();
    imp_json j;
    imp_json_init(&j);
    if (!buf || !z) {
        free(buf);
        imp_npz_free(z);
        return imp_fail(IMP_ERR_NOMEM, "drop: save: out of memory");
    }
    double *a6 = buf, *b6 = buf + 6 * count, *c6 = buf + 12 * count, *d6 = buf + 18 * count;
    size_t sh6[2] = {count, 6}, sh3[2] = {count, 3}, sh1[1] = {count};
    for (size_t i = 0; i < count; i++) {
        memcpy(a6 + 6 * i, s[i].pre, 6 * sizeof(double));
        memcpy(b6 + 6 * i, s[i].post, 6 * sizeof(double));
        memcpy(c6 + 6 * i, s[i].true_pre, 6 * sizeof(double));
        memcpy(d6 + 6 * i, s[i].true_post, 6 * sizeof(double));
    }
    st = imp_npz_add_f64(z, "states_i", 2, sh6, a6);
    if (!st) st = imp_npz_add_f64(z, "states_f", 2, sh6, b6);
    if (!st) st = imp_npz_add_f64(z, "states_i_true", 2, sh6, c6);
    if (!st) st = imp_npz_add_f64(z, "states_f_true", 2, sh6, d6);
    for (size_t i = 0; !st && i < count; i++) {
        memcpy(a6 + 3 * i, s[i].n, 3 * sizeof(double));
        memcpy(b6 + 3 * i, s[i].d, 3 * sizeof(double));
        c6[i] = s[i].t_ref;
        c6[count + i] = s[i].t_contact;
        c6[2 * count + i] = s[i].duration;
    }
    if (!st) st = imp_npz_add_f64(z, "n", 2, sh3, a6);
    if (!st) st = imp_npz_add_f64(z, "d", 2, sh3, b6);
    if (!st) st = imp_npz_add_f64(z, "t_ref", 1, sh1, c6);
    if (!st) st = imp_npz_add_f64(z, "t_contact", 1, sh1, c6 + count);
    if (!st) st = imp_npz_add_f64(z, "duration", 1, sh1, c6 + 2 * count);
    if (!st) {
        imp_json_begin_object(&j);
        imp_json_kv_string(&j, "kind", "drop_set");
        imp_json_kv_string(&j, "convention", "corrected");
        imp_json_kv_string(&j, "tool", "impulse " IMP_VERSION_STRING);
        imp_json_kv_int(&j, "seed", (long long)seed);
        imp_json_kv_int(&j, "count", (long long)count);
        kv_params(&j, p);
        imp_json_end_object(&j);
        const char *text = imp_json_text(&j);
        st = text ? imp_npz_set_meta(z, text) : imp_fail(IMP_ERR_NOMEM, "drop: save: meta JSON");
    }
    if (!st) st = imp_npz_save(z, path);
    imp_json_free(&j);
    imp_npz_free(z);
    free(buf);
    return st;
}

int imp_drop_load_impact_set(imp_impact_set *set, const char *path)
{
    if (!set) return imp_fail(IMP_ERR_INVALID, "drop: set: NULL");
    memset(set, 0, sizeof *set);
    if (!path) return imp_fail(IMP_ERR_INVALID, "drop: path: NULL");
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return st;
    const double *si, *sf, *n, *d;
    size_t shape[2], e6[2] = {0, 6}, e3[2] = {0, 3};
    st = imp_npz_get_f64(z, "states_i", 2, e6, &si, shape);
    size_t count = shape[0];
    if (!st && count == 0) st = imp_fail(IMP_ERR_SHAPE, "%s: states_i: no rows", path);
    e6[0] = e3[0] = count;
    if (!st) st = imp_npz_get_f64(z, "states_f", 2, e6, &sf, NULL);
    if (!st) st = imp_npz_get_f64(z, "n", 2, e3, &n, NULL);
    if (!st) st = imp_npz_get_f64(z, "d", 2, e3, &d, NULL);
    if (!st) st = imp_impact_set_alloc(set, count);
    if (!st) {
        memcpy(set->pre, si, count * 6 * sizeof(double));
        memcpy(set->post, sf, count * 6 * sizeof(double));
        memcpy(set->n, n, count * 3 * sizeof(double));
        memcpy(set->d, d, count * 3 * sizeof(double));
        const char *meta = imp_npz_meta(z);
        char conv[32];
        if (meta && imp_json_get_string(meta, "convention", conv, sizeof conv) == IMP_OK)
            st = imp_tangent_sign_parse(conv, &set->convention, "meta convention");
        double v;
        if (meta && imp_json_get_number(meta, "mass", &v) == IMP_OK) set->object.mass = v;
        if (meta && imp_json_get_number(meta, "kg", &v) == IMP_OK) set->object.kg = v;
        if (meta && imp_json_get_number(meta, "g", &v) == IMP_OK) set->object.g = v;
        if (meta && imp_json_get_number(meta, "frame_rate", &v) == IMP_OK && v > 0) set->object.h = 1.0 / v;
        if (!st) {
            imp_clear_error(); /* absent optional keys are not errors */
            st = imp_impact_set_validate(set, NULL);
        }
    }
    imp_npz_free(z);
    if (st) {
        imp_impact_set_free(set);
        return imp_fail_context(st, "%s", path);
    }
    return IMP_OK;
}
