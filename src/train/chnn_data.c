/* Trajectory files of the constrained systems, in the model's coordinates.
 * Accepted layouts (float64, or float32 converted): "x" and "v" of shape (n_traj, T, n, d), or the
 * reference's "z" of shape (n_traj, T, 2, n, d); the time step comes from
 * "t" (T) or meta "dt"; the system name from meta "system". */
#include "impulse/chnn_models.h"
#include "impulse/io.h"
#include "impulse/chnn_systems.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void imp_ctraj_free(imp_ctraj *t)
{
    if (!t) return;
    free(t->z);
    t->z = NULL;
}

int imp_ctraj_load_cartesian(const char *path, imp_ctraj *out, char *sys_name)
{
    if (!sys_name) return imp_fail(IMP_ERR_INVALID, "data: NULL argument");
    imp_csystem *cs = malloc(sizeof *cs);
    if (!cs) return imp_fail(IMP_ERR_NOMEM, "data: out of memory");
    int st = imp_ctraj_load(path, out, cs);
    if (!st) snprintf(sys_name, 64, "%s", cs->name);
    free(cs);
    return st;
}

/* The data against the system (issue 27): each rod (a distance row) as long
 * in the data as in the system, within 1 % of its length plus the bias
 * observation noise puts on a mean distance (about its variance / length).
 * A mismatch would train bit-identically to matching data and learn the
 * wrong system: refused, naming the rod and both lengths. */
int imp_ctraj_check(const imp_csystem *cs, const imp_ctraj *d, const char *path)
{
    const imp_csys *s = &cs->full;
    int nd = cs->n_points * cs->d;
    size_t n = (size_t)d->n_traj * d->T;
    for (int r = 0; r < s->n_rows; r++) {
        const imp_crow *row = &s->rows[r];
        if (row->kind != IMP_CROW_DISTANCE || !(row->length > 0)) continue;
        double sum = 0, sum2 = 0;
        for (size_t k = 0; k < n; k++) {
            const double *x = d->z + k * 2 * (size_t)nd, *b = row->j >= 0 ? x + row->j * cs->d : row->anchor;
            double dd = 0;
            for (int c = 0; c < cs->d; c++) dd += (x[row->i * cs->d + c] - b[c]) * (x[row->i * cs->d + c] - b[c]);
            sum += sqrt(dd), sum2 += dd;
        }
        double mean = sum / n, var = fmax(sum2 / n - mean * mean, 0.0), L = row->length;
        if (fabs(mean - L) > 0.01 * L + 2.0 * var / L) {
            const imp_ccon *c = &s->cons[row->con];
            char where[32] = "";
            if (c->line > 0) snprintf(where, sizeof where, ", line %d of the system", c->line);
            return imp_fail(IMP_ERR_INVALID,
                            "%s: constraint '%s'%s: length %.6g in the data (mean over %zu samples), %.6g in the "
                            "system '%s': the data do not follow the system (fix the length in the system file or "
                            "check the data's points)", path, c->label, where, mean, n, L, cs->name);
        }
    }
    return IMP_OK;
}

int imp_ctraj_load(const char *path, imp_ctraj *out, imp_csystem *sys)
{
    if (!path || !out) return imp_fail(IMP_ERR_INVALID, "data: NULL argument");
    memset(out, 0, sizeof *out);
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return st; /* the message names the file */
    const char *meta = imp_npz_meta(z);
    if (!meta) {
        imp_npz_free(z);
        return imp_fail(IMP_ERR_FORMAT, "%s: meta: missing \"system\"", path);
    }
    int widened = 0;
    if ((st = imp_npz_widen_f32_count(z, &widened))) {
        imp_npz_free(z);
        return imp_fail_context(st, "%s", path);
    }
    imp_csystem cs;
    st = imp_csystem_from_meta(&cs, meta, path);
    if (st) {
        imp_npz_free(z);
        return st;
    }
    int nd = cs.n_points * cs.d;
    const double *x = NULL, *v = NULL, *zz = NULL;
    size_t shape[5];
    if (imp_npz_find(z, "z")) {
        size_t expect[5] = {0, 0, 2, (size_t)cs.n_points, (size_t)cs.d};
        st = imp_npz_get_f64(z, "z", 5, expect, &zz, shape);
    } else {
        size_t expect[4] = {0, 0, (size_t)cs.n_points, (size_t)cs.d}, s2[4];
        st = imp_npz_get_f64(z, "x", 4, expect, &x, shape);
        if (!st) st = imp_npz_get_f64(z, "v", 4, expect, &v, s2);
        if (!st && (s2[0] != shape[0] || s2[1] != shape[1]))
            st = imp_fail(IMP_ERR_SHAPE, "v: shape (%zu, %zu, ...) differs from x's (%zu, %zu, ...)", s2[0],
                          s2[1], shape[0], shape[1]);
    }
    if (st) {
        imp_npz_free(z);
        return imp_fail_context(st, "%s", path);
    }
    int n_traj = (int)shape[0], T = (int)shape[1];
    if (n_traj < 1 || T < 2) {
        imp_npz_free(z);
        return imp_fail(IMP_ERR_SHAPE, "%s: need at least 1 trajectory of 2 states, got %d x %d", path, n_traj, T);
    }
    double dt = 0;
    const double *t = NULL;
    size_t tshape[1], texp[1] = {(size_t)T};
    double meta_dt = NAN;
    if (imp_json_get_number(meta, "dt", &meta_dt)) meta_dt = NAN;
    imp_clear_error();
    if (imp_npz_find(z, "t")) {
        st = imp_npz_get_f64(z, "t", 1, texp, &t, tshape);
        if (st) {
            imp_npz_free(z);
            return imp_fail_context(st, "%s", path);
        }
        dt = t[1] - t[0];
        /* a t stepping unevenly, or otherwise than meta dt, would be used
         * as a step it is not */
        for (int k = 1; k + 1 < T; k++)
            if (fabs((t[k + 1] - t[k]) - dt) > 1e-6 * fabs(dt)) {
                double step = t[k + 1] - t[k]; /* t lives in z */
                imp_npz_free(z);
                return imp_fail(IMP_ERR_FORMAT, "%s: t: steps unevenly (t[1] - t[0] = %g, t[%d] - t[%d] = %g): "
                                "the samples need a fixed period", path, dt, k + 1, k, step);
            }
        if (isfinite(meta_dt) && fabs(meta_dt - dt) > 1e-6 * fabs(dt)) {
            imp_npz_free(z);
            return imp_fail(IMP_ERR_FORMAT, "%s: t steps by %g but meta \"dt\" is %g: make them agree (or drop one)",
                            path, dt, meta_dt);
        }
    } else {
        dt = isfinite(meta_dt) ? meta_dt : cs.dt;
    }
    if (!(dt > 0) || !isfinite(dt)) {
        imp_npz_free(z);
        return imp_fail(IMP_ERR_FORMAT, "%s: time step %g must be positive", path, dt);
    }
    out->z = malloc((size_t)n_traj * T * 2 * nd * sizeof(double));
    if (!out->z) {
        imp_npz_free(z);
        return imp_fail(IMP_ERR_NOMEM, "data: out of memory");
    }
    out->n_traj = n_traj;
    out->T = T;
    out->dim = 2 * nd;
    out->dt = dt;
    out->widened_f32 = widened;
    for (size_t s = 0; s < (size_t)n_traj * T; s++) {
        double *dst = out->z + s * 2 * nd;
        if (zz) {
            memcpy(dst, zz + s * 2 * nd, 2 * (size_t)nd * sizeof(double));
        } else {
            memcpy(dst, x + s * nd, (size_t)nd * sizeof(double));
            memcpy(dst + nd, v + s * nd, (size_t)nd * sizeof(double));
        }
    }
    imp_npz_free(z);
    st = imp_ctraj_check(&cs, out, path);
    if (st) {
        imp_ctraj_free(out);
        return st;
    }
    if (sys) *sys = cs;
    return IMP_OK;
}

int imp_ctraj_to_generalised(const imp_csystem *sys, const imp_ctraj *in, imp_ctraj *out)
{
    int k = sys->n_gen, nd = sys->n_points * sys->d;
    if (k < 1) return imp_fail(IMP_ERR_UNSUPPORTED, "system: '%s' has no generalised coordinates", sys->name);
    if (in->dim != 2 * nd) return imp_fail(IMP_ERR_SHAPE, "data: state size %d is not 2nd = %d", in->dim, 2 * nd);
    memset(out, 0, sizeof *out);
    out->z = malloc((size_t)in->n_traj * in->T * 2 * k * sizeof(double));
    if (!out->z) return imp_fail(IMP_ERR_NOMEM, "data: out of memory");
    out->n_traj = in->n_traj;
    out->T = in->T;
    out->dim = 2 * k;
    out->dt = in->dt;
    for (int i = 0; i < in->n_traj; i++) {
        for (int s = 0; s < in->T; s++) {
            size_t r = (size_t)i * in->T + s;
            int st = imp_csystem_to_generalised(sys, in->z + r * in->dim, out->z + r * out->dim);
            if (st) {
                imp_ctraj_free(out);
                return st;
            }
        }
        /* unwrap angles along time so chunks see continuous q */
        imp_chnn_unwrap(&sys->full, out->z + (size_t)i * in->T * out->dim, in->T);
    }
    return IMP_OK;
}
