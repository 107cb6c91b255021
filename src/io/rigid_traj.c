/* Rigid-body trajectory files (include/impulse/rigid_traj.h,
 * docs/data-format.md "Rigid-body trajectory files"). */
#include "impulse/rigid_traj.h"

#include "impulse/core.h"
#include "impulse/io.h"
#include "io_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void imp_rigid_traj_default(imp_rigid_traj *t)
{
    memset(t, 0, sizeof *t);
    t->dt = 1.0 / 148.0;
    for (int i = 0; i < 3; i++) {
        t->body.size[i] = 0.1048;
        t->body.inertia[i] = 0.00081;
    }
    t->body.mass = 0.37;
    t->ground_height = 0.0;
    t->gravity = 9.81;
}

void imp_rigid_traj_free(imp_rigid_traj *t)
{
    if (!t) return;
    free(t->states);
    free(t->lengths);
    free(t->ids);
    t->states = NULL;
    t->lengths = t->ids = NULL;
    t->n_rows = 0;
    t->n_episodes = 0;
}

size_t imp_rigid_traj_offset(const imp_rigid_traj *t, int k)
{
    size_t off = 0;
    for (int i = 0; i < k && i < t->n_episodes; i++) off += (size_t)t->lengths[i];
    return off;
}

static int check_positive(double x, const char *what)
{
    if (!isfinite(x) || x <= 0) return imp_fail(IMP_ERR_INVALID, "%s: %g is not a positive number", what, x);
    return IMP_OK;
}

static int check_meta(const imp_rigid_traj *t)
{
    static const char *const sizes[3] = {"body size x", "body size y", "body size z"};
    static const char *const inert[3] = {"body inertia x", "body inertia y", "body inertia z"};
    int st = check_positive(t->dt, "dt");
    for (int i = 0; i < 3 && !st; i++) st = check_positive(t->body.size[i], sizes[i]);
    for (int i = 0; i < 3 && !st; i++) st = check_positive(t->body.inertia[i], inert[i]);
    if (!st) st = check_positive(t->body.mass, "body mass");
    if (!st && !isfinite(t->ground_height))
        st = imp_fail(IMP_ERR_INVALID, "ground height: %g is not finite", t->ground_height);
    if (!st && (!isfinite(t->gravity) || t->gravity < 0))
        st = imp_fail(IMP_ERR_INVALID, "gravity: %g is not a finite number >= 0", t->gravity);
    return st;
}

/* lengths >= 1, summing to n_rows (no overflow on the way) */
static int check_lengths(const int64_t *lengths, size_t n_episodes, size_t n_rows)
{
    if (n_episodes < 1 || n_episodes > IMP_RIGID_MAX_EPISODES)
        return imp_fail(IMP_ERR_SHAPE, "lengths: %zu episodes (need 1 to %d)", n_episodes, IMP_RIGID_MAX_EPISODES);
    size_t sum = 0;
    for (size_t k = 0; k < n_episodes; k++) {
        if (lengths[k] < 1 || (uint64_t)lengths[k] > (uint64_t)n_rows)
            return imp_fail(IMP_ERR_SHAPE, "lengths[%zu] = %lld: each episode needs 1 to %zu samples (the rows of states)",
                            k, (long long)lengths[k], n_rows);
        sum += (size_t)lengths[k];
        if (sum > n_rows)
            return imp_fail(IMP_ERR_SHAPE, "lengths: the first %zu episodes already need %zu rows, states has %zu",
                            k + 1, sum, n_rows);
    }
    if (sum != n_rows) return imp_fail(IMP_ERR_SHAPE, "lengths sum to %zu rows, states has %zu", sum, n_rows);
    return IMP_OK;
}

int imp_rigid_traj_check(const imp_rigid_traj *t, double quat_tol)
{
    if (!t) return imp_fail(IMP_ERR_INVALID, "rigid trajectories: NULL");
    int st = check_meta(t);
    if (st) return st;
    if (!(quat_tol > 0)) return imp_fail(IMP_ERR_INVALID, "quaternion tolerance: %g is not > 0", quat_tol);
    if (!t->states || !t->lengths) return imp_fail(IMP_ERR_INVALID, "rigid trajectories: no data");
    if ((st = check_lengths(t->lengths, (size_t)t->n_episodes, t->n_rows))) return st;
    size_t row = 0;
    for (int k = 0; k < t->n_episodes; k++)
        for (int64_t i = 0; i < t->lengths[k]; i++, row++) {
            const double *x = t->states + row * IMP_RIGID_STATE;
            for (int c = 0; c < IMP_RIGID_STATE; c++)
                if (!isfinite(x[c]))
                    return imp_fail(IMP_ERR_NUMERIC, "states: episode %d sample %lld (row %zu) column %d is %g", k,
                                    (long long)i, row, c, x[c]);
            double nq = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]);
            if (fabs(nq - 1.0) > quat_tol)
                return imp_fail(IMP_ERR_NUMERIC,
                                "states: episode %d sample %lld (row %zu): quaternion norm %.9g is not 1 (tolerance %g)",
                                k, (long long)i, row, nq, quat_tol);
        }
    return IMP_OK;
}

int imp_rigid_traj_set(imp_rigid_traj *t, const double *states, size_t n_rows, const int64_t *lengths,
                       const int64_t *ids, size_t n_episodes, double quat_tol)
{
    if (!t || !states || !lengths) return imp_fail(IMP_ERR_INVALID, "rigid trajectories: NULL argument");
    t->states = NULL;
    t->lengths = t->ids = NULL;
    t->n_rows = 0;
    t->n_episodes = 0;
    int st = check_lengths(lengths, n_episodes, n_rows);
    if (st) return st;
    size_t bytes, per_ep, ep_bytes;
    if (!imp_size_mul(n_rows, IMP_RIGID_STATE * sizeof(double), &bytes) ||
        !imp_size_mul(n_episodes, sizeof(int64_t), &per_ep) || !imp_size_mul(per_ep, 2, &ep_bytes) ||
        !imp_size_add(bytes, ep_bytes, &bytes) || bytes > imp_input_limit())
        return imp_fail(IMP_ERR_FORMAT, "states: %zu rows and %zu episodes exceed the input limit of %zu bytes", n_rows,
                        n_episodes, imp_input_limit());
    t->states = malloc(n_rows * IMP_RIGID_STATE * sizeof(double));
    t->lengths = malloc(per_ep);
    t->ids = ids ? malloc(per_ep) : NULL;
    if (!t->states || !t->lengths || (ids && !t->ids)) {
        imp_rigid_traj_free(t);
        return imp_fail(IMP_ERR_NOMEM, "states: %zu rows", n_rows);
    }
    memcpy(t->states, states, n_rows * IMP_RIGID_STATE * sizeof(double));
    memcpy(t->lengths, lengths, per_ep);
    if (ids) memcpy(t->ids, ids, per_ep);
    t->n_rows = n_rows;
    t->n_episodes = (int)n_episodes;
    if ((st = imp_rigid_traj_check(t, quat_tol))) imp_rigid_traj_free(t);
    return st;
}

static int read_arrays(imp_rigid_traj *t, const imp_npz *z, const char *sname, const char *lname,
                       const char *iname, double quat_tol)
{
    size_t shape[2], lshape[1];
    const size_t expect[2] = {0, IMP_RIGID_STATE};
    const imp_npy_array *a = imp_npz_find(z, sname);
    if (a && (a->ndim != 2 || a->shape[1] != IMP_RIGID_STATE))
        return imp_fail(IMP_ERR_SHAPE, "%s: a %d-d array with %zu columns, expected (N, 13): quaternion w x y z, "
                        "position, body-frame angular velocity, linear velocity", sname, a->ndim,
                        a->ndim > 1 ? a->shape[a->ndim - 1] : (size_t)0);
    const double *states;
    int st = imp_npz_get_f64(z, sname, 2, expect, &states, shape);
    if (st) return st;
    int64_t *lengths = NULL, *ids = NULL;
    if ((st = imp_npz_get_i64_copy(z, lname, 1, NULL, &lengths, lshape))) return st;
    if (iname && imp_npz_find(z, iname)) {
        size_t ishape[1];
        st = imp_npz_get_i64_copy(z, iname, 1, lshape, &ids, ishape);
    }
    if (!st) st = imp_rigid_traj_set(t, states, shape[0], lengths, ids, lshape[0], quat_tol);
    free(lengths);
    free(ids);
    return st;
}

int imp_rigid_traj_read_arrays(imp_rigid_traj *t, const char *path, const char *states_name,
                               const char *lengths_name, const char *ids_name, double quat_tol)
{
    if (!t || !path || !states_name || !lengths_name) return imp_fail(IMP_ERR_INVALID, "rigid read: NULL argument");
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return st;
    st = imp_npz_widen_f32(z);
    if (!st) st = check_meta(t);
    if (!st) st = read_arrays(t, z, states_name, lengths_name, ids_name, quat_tol);
    imp_npz_free(z);
    if (st) return imp_fail_context(st, "%s", path);
    return IMP_OK;
}

int imp_rigid_traj_save(const imp_rigid_traj *t, const char *path)
{
    int st = imp_rigid_traj_check(t, IMP_RIGID_QUAT_TOL);
    if (st) return st;
    imp_npz *z = imp_npz_new();
    if (!z) return imp_fail(IMP_ERR_NOMEM, "rigid save: out of memory");
    size_t shape[2] = {t->n_rows, IMP_RIGID_STATE}, eshape[1] = {(size_t)t->n_episodes}, three[1] = {3};
    st = imp_npz_add_f64(z, "states", 2, shape, t->states);
    if (!st) st = imp_npz_add_i64(z, "lengths", 1, eshape, t->lengths);
    if (!st && t->ids) st = imp_npz_add_i64(z, "ids", 1, eshape, t->ids);
    if (!st) st = imp_npz_add_f64(z, "body_size", 1, three, t->body.size);
    if (!st) st = imp_npz_add_f64(z, "body_inertia", 1, three, t->body.inertia);
    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "kind", "rigid-trajectories");
    imp_json_kv_string(&j, "state", "quat_wxyz,position,angular_velocity_body,velocity_world");
    imp_json_kv_number(&j, "dt", t->dt);
    imp_json_kv_string(&j, "shape", "box");
    imp_json_kv_number(&j, "mass", t->body.mass);
    imp_json_kv_number(&j, "ground_height", t->ground_height);
    imp_json_kv_number(&j, "gravity", t->gravity);
    imp_json_kv_string(&j, "source", t->source);
    imp_json_kv_string(&j, "impulse_version", IMP_VERSION_STRING);
    imp_json_end_object(&j);
    if (!st) st = imp_json_text(&j) ? imp_npz_set_meta(z, imp_json_text(&j))
                                    : imp_fail(IMP_ERR_NOMEM, "meta: out of memory");
    imp_json_free(&j);
    if (!st) st = imp_npz_save(z, path);
    imp_npz_free(z);
    return st;
}

static int meta_number(const char *meta, const char *key, double *out)
{
    int st = imp_json_get_number(meta, key, out);
    if (st) return imp_fail(st, "meta has no number '%s' (impulse import writes it)", key);
    return IMP_OK;
}

static int load_body_vector(const imp_npz *z, const char *name, double out[3])
{
    const size_t three[1] = {3};
    const double *v;
    int st = imp_npz_get_f64(z, name, 1, three, &v, NULL);
    if (!st) memcpy(out, v, 3 * sizeof *out);
    return st;
}

int imp_rigid_traj_load(imp_rigid_traj *t, const char *path)
{
    if (!t || !path) return imp_fail(IMP_ERR_INVALID, "rigid load: NULL argument");
    imp_rigid_traj_default(t);
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return st;
    st = imp_npz_widen_f32(z);
    const char *meta = imp_npz_meta(z);
    char kind[64] = "";
    if (!st && !meta) st = imp_fail(IMP_ERR_NOT_FOUND, "no 'meta' (not a rigid-body trajectory file)");
    if (!st) st = imp_json_check_object(meta, "meta");
    if (!st && (imp_json_get_string(meta, "kind", kind, sizeof kind) || strcmp(kind, "rigid-trajectories")))
        st = imp_fail(IMP_ERR_FORMAT, "meta 'kind' is '%s', not 'rigid-trajectories' (impulse import writes one)",
                      kind);
    if (!st) st = meta_number(meta, "dt", &t->dt);
    if (!st) st = meta_number(meta, "mass", &t->body.mass);
    if (!st) st = meta_number(meta, "ground_height", &t->ground_height);
    if (!st) st = meta_number(meta, "gravity", &t->gravity);
    if (!st) {
        char shape[32] = "";
        if (imp_json_get_string(meta, "shape", shape, sizeof shape) || strcmp(shape, "box"))
            st = imp_fail(IMP_ERR_UNSUPPORTED, "meta 'shape' is '%s' (only 'box' is known)", shape);
    }
    if (!st && imp_json_get_string(meta, "source", t->source, sizeof t->source)) /* optional */
        imp_clear_error();
    if (!st) st = load_body_vector(z, "body_size", t->body.size);
    if (!st) st = load_body_vector(z, "body_inertia", t->body.inertia);
    if (!st) st = check_meta(t);
    if (!st) st = read_arrays(t, z, "states", "lengths", "ids", IMP_RIGID_QUAT_TOL);
    imp_npz_free(z);
    if (st) return imp_fail_context(st, "%s", path);
    return IMP_OK;
}

int imp_rigid_traj_load_any(imp_rigid_traj *t, const char *path, int *nominal)
{
    if (nominal) *nominal = 0;
    if (!imp_rigid_traj_load(t, path)) return IMP_OK;
    char first[1024];
    snprintf(first, sizeof first, "%s", imp_last_error());
    imp_rigid_traj_default(t);
    if (!imp_rigid_traj_read_arrays(t, path, "states", "lengths", "toss", IMP_RIGID_QUAT_TOL)) {
        if (nominal) *nominal = 1;
        return IMP_OK;
    }
    imp_rigid_traj_free(t);
    return imp_fail(IMP_ERR_FORMAT, "%s", first);
}
