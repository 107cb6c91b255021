/* Trajectory sets: allocation, observation noise, and their .npz form. */
#include "impulse/contact_systems.h"
#include "impulse/io.h"
#include "core/num.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int imp_trajset_alloc(imp_trajset *ts, int n_traj, int n_steps, const imp_contact_geometry *g)
{
    memset(ts, 0, sizeof *ts);
    if (n_traj < 1) return imp_fail(IMP_ERR_INVALID, "trajectories: %d, need at least 1", n_traj);
    if (n_steps < 2) return imp_fail(IMP_ERR_INVALID, "steps: %d, need at least 2", n_steps);
    int st = imp_contact_geometry_check(g);
    if (st) return st;
    ts->n_traj = n_traj;
    ts->n_steps = n_steps;
    ts->has_contact = 1;
    ts->geom = *g;
    ts->friction = NAN;
    size_t D = (size_t)g->n_bodies * (size_t)g->dim;
    size_t nq = (size_t)n_traj * (size_t)n_steps * D;
    size_t nc = (size_t)n_traj * (size_t)n_steps * (size_t)g->n_bodies;
    ts->q = calloc(nq, sizeof(double));
    ts->qdot = calloc(nq, sizeof(double));
    ts->q_clean = calloc(nq, sizeof(double));
    ts->qdot_clean = calloc(nq, sizeof(double));
    ts->contact = calloc(nc, sizeof(double));
    ts->interior = calloc((size_t)n_traj * (size_t)n_steps, sizeof(double));
    if (!ts->q || !ts->qdot || !ts->q_clean || !ts->qdot_clean || !ts->contact || !ts->interior) {
        imp_trajset_free(ts);
        return imp_fail(IMP_ERR_NOMEM, "trajectories: cannot allocate %zu values",
                        4 * nq + nc + (size_t)n_traj * (size_t)n_steps);
    }
    return IMP_OK;
}

void imp_trajset_free(imp_trajset *ts)
{
    free(ts->q);
    free(ts->qdot);
    free(ts->q_clean);
    free(ts->qdot_clean);
    free(ts->contact);
    free(ts->interior);
    memset(ts, 0, sizeof *ts);
}

void imp_trajset_add_noise(imp_trajset *ts, double sigma, imp_rng *rng)
{
    size_t n = (size_t)ts->n_traj * ts->n_steps * ts->geom.n_bodies * ts->geom.dim;
    for (size_t i = 0; i < n; i++) ts->q[i] = ts->q_clean[i] + sigma * imp_rng_normal(rng);
    for (size_t i = 0; i < n; i++) ts->qdot[i] = ts->qdot_clean[i] + sigma * imp_rng_normal(rng);
    ts->noise = sigma;
}

int imp_trajset_save(const imp_trajset *ts, const char *path)
{
    const imp_contact_geometry *g = &ts->geom;
    int K = g->n_bodies, d = g->dim;
    size_t shq[3] = {(size_t)ts->n_traj, (size_t)ts->n_steps, (size_t)(K * d)};
    size_t shc[3] = {(size_t)ts->n_traj, (size_t)ts->n_steps, (size_t)K};

    imp_json j;
    imp_json_init(&j);
    imp_json_begin_object(&j);
    imp_json_kv_string(&j, "kind", "trajectories");
    imp_json_kv_string(&j, "system", ts->system);
    imp_json_kv_number(&j, "dt", ts->dt);
    imp_json_kv_number(&j, "restitution", g->restitution);
    imp_json_kv_number(&j, "gravity", ts->gravity);
    imp_json_kv_number(&j, "length", ts->length);
    if (isfinite(ts->friction)) imp_json_kv_number(&j, "friction", ts->friction);
    imp_json_kv_number(&j, "noise", ts->noise);
    imp_json_kv_int(&j, "seed", (long long)ts->seed);
    imp_json_kv_int(&j, "n_bodies", K);
    imp_json_kv_int(&j, "dim", d);
    imp_json_kv_string(&j, "velocity_convention", "sample-time");
    if (ts->labels[0]) imp_json_kv_string(&j, "labels", ts->labels);
    imp_json_kv_string(&j, "impulse_version", IMP_VERSION_STRING);
    imp_json_end_object(&j);

    imp_npz *z = imp_npz_new();
    int st = z ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "trajectories: out of memory");
    if (!st) st = imp_npz_add_f64(z, "q", 3, shq, ts->q);
    if (!st) st = imp_npz_add_f64(z, "qdot", 3, shq, ts->qdot);
    if (!st) st = imp_npz_add_f64(z, "q_clean", 3, shq, ts->q_clean);
    if (!st) st = imp_npz_add_f64(z, "qdot_clean", 3, shq, ts->qdot_clean);
    if (!st && ts->has_contact) st = imp_npz_add_f64(z, "contact", 3, shc, ts->contact);
    size_t n_int = 0;
    for (size_t i = 0; ts->interior && i < shc[0] * shc[1]; i++) n_int += ts->interior[i] != 0.0;
    if (!st && n_int) st = imp_npz_add_f64(z, "contact_interior", 2, shc, ts->interior);
    if (!st) st = imp_contact_geometry_to_npz(g, z);
    if (!st) st = imp_json_text(&j) ? imp_npz_set_meta(z, imp_json_text(&j))
                                    : imp_fail(IMP_ERR_NOMEM, "meta: out of memory");
    if (!st) st = imp_npz_save(z, path);
    imp_npz_free(z);
    imp_json_free(&j);
    return st;
}

/* A missing member or meta key: one line saying what it is and how to
 * supply it (docs/data-format.md lists them all). */
static int missing(const char *what, const char *key, const char *need)
{
    return imp_fail(IMP_ERR_NOT_FOUND, "%s: no %s: %s (see docs/data-format.md)", what, key, need);
}

/* contact_pairs written as floats (np.array([[-1., 0.]])): integral values
 * become the int64 array the geometry reader expects. */
static int pairs_to_int(imp_npz *z)
{
    const imp_npy_array *a = imp_npz_find(z, "contact_pairs");
    if (!a || a->dtype != IMP_F64) return IMP_OK;
    int64_t buf[IMP_MAX_CONTACTS * 2];
    if (a->count > IMP_MAX_CONTACTS * 2)
        return imp_fail(IMP_ERR_SHAPE, "contact_pairs: %zu values, at most %d pairs", a->count, IMP_MAX_CONTACTS);
    const double *d = a->data;
    for (size_t i = 0; i < a->count; i++) {
        int st = imp_num_to_int64(d[i], "contact_pairs", IMP_WALL, IMP_MAX_BODIES - 1, &buf[i]);
        if (st) return st;
    }
    size_t sh[IMP_NPY_MAX_DIMS];
    int nd = a->ndim;
    memcpy(sh, a->shape, sizeof sh);
    return imp_npz_add_i64(z, "contact_pairs", nd, sh, buf);
}

/* 0/1 flags (contact labels, contact_interior) as float64 (any numeric or
 * bool dtype accepted). */
static int get_flags(const imp_npz *z, const char *name, int ndim, const size_t *shape, double *out)
{
    const imp_npy_array *a = imp_npz_find(z, name);
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    if (a->dtype == IMP_F64) {
        const double *c;
        int st = imp_npz_get_f64(z, name, ndim, shape, &c, NULL);
        if (st) return st;
        memcpy(out, c, n * sizeof(double));
    } else {
        int64_t *c = NULL;
        int st = imp_npz_get_i64_copy(z, name, ndim, shape, &c, NULL);
        if (st) return st;
        for (size_t i = 0; i < n; i++) out[i] = (double)c[i];
        free(c);
    }
    for (size_t i = 0; i < n; i++)
        if (out[i] != 0.0 && out[i] != 1.0)
            return imp_fail(IMP_ERR_INVALID, "%s: value %g at flat index %zu is not 0 or 1", name, out[i], i);
    return IMP_OK;
}

/* Labels against the geometry (files with radii, the disks' format): a
 * body labelled in contact at a sample must be within one sample's travel
 * of one of its contacts there (gap <= dt (|v_j| + |v_i|) + g dt^2 / 2 +
 * 8 noise + 1e-9): a label at a body far from everything it can touch is
 * refused, naming the first. */
static int labels_check(const imp_trajset *ts)
{
    const imp_contact_geometry *g = &ts->geom;
    const int K = g->n_bodies, d = g->dim, D = K * d;
    const double dt = ts->dt, grav = isfinite(ts->gravity) ? ts->gravity : 0.0;
    const double slack = 0.5 * grav * dt * dt + 8.0 * (ts->noise > 0.0 ? ts->noise : 0.0) + 1e-9;
    for (int tr = 0; tr < ts->n_traj; tr++)
        for (int t = 0; t < ts->n_steps; t++) {
            size_t i = (size_t)tr * ts->n_steps + t;
            const double *q = ts->q + i * D, *v = ts->qdot + i * D;
            for (int k = 0; k < K; k++) {
                if (ts->contact[i * K + k] == 0.0) continue;
                double best = INFINITY, best_reach = 0.0;
                int ok = 0, bp = -1;
                for (int p = 0; p < g->n_pairs && !ok; p++) {
                    const imp_contact_pair *c = &g->pairs[p];
                    if (c->body_j != k && c->body_i != k) continue;
                    double sj = 0.0, si = 0.0;
                    for (int a = 0; a < d; a++) {
                        sj += v[c->body_j * d + a] * v[c->body_j * d + a];
                        if (c->body_i != IMP_WALL) si += v[c->body_i * d + a] * v[c->body_i * d + a];
                    }
                    double gap = imp_contact_gap(g, p, q), reach = dt * (sqrt(sj) + sqrt(si)) + slack;
                    ok = gap <= reach;
                    if (gap < best) best = gap, best_reach = reach, bp = p;
                }
                if (!ok && bp >= 0)
                    return imp_fail(IMP_ERR_INVALID,
                                    "contact[%d, %d, %d]: body %d is labelled in contact but %.3g m from its nearest "
                                    "contact (pair %d), more than one sample's travel (%.3g m): labels inconsistent "
                                    "with the geometry",
                                    tr, t, k, k, best, bp, best_reach);
            }
        }
    return IMP_OK;
}

int imp_trajset_from_npz(imp_trajset *ts, imp_npz *z, const char *what)
{
    memset(ts, 0, sizeof *ts);
    int widened = 0;
    int st = imp_npz_widen_f32_count(z, &widened);
    if (st) return st;
    const char *meta = imp_npz_meta(z);
    if (!meta)
        return missing(what, "'meta' JSON string",
                       "a trajectory file needs meta {\"dt\": ..., \"dim\": ...}; impulse import writes it");
    const imp_npy_array *qa = imp_npz_find(z, "q");
    if (!qa)
        return missing(what, "array 'q'",
                       "positions, float (trajectories, steps, bodies*dim); impulse import --q NAME names yours");
    if (!imp_npz_find(z, "masses"))
        return missing(what, "array 'masses'", "one mass per body, float (bodies,); impulse import --masses M,...");
    double dimv;
    if ((st = imp_json_get_number(meta, "dim", &dimv)) && st != IMP_ERR_NOT_FOUND)
        return imp_fail_context(st, "meta"); /* present but not a number: say what it is */
    if (st) {
        const imp_npy_array *ma = imp_npz_find(z, "masses");
        size_t K = ma->ndim == 1 ? ma->shape[0] : 0, cols = qa->ndim == 3 ? qa->shape[2] : 0;
        if (K > 0 && cols % K == 0 && cols > 0)
            return imp_fail(IMP_ERR_NOT_FOUND,
                            "%s: meta has no number 'dim' (coordinates per body: q has %zu columns for %zu "
                            "bodies, so probably \"dim\": %zu; impulse import --dim sets it)",
                            what, cols, K, cols / K);
        return missing(what, "meta number 'dim'", "coordinates per body (1-3); impulse import --dim D");
    }
    if ((st = imp_json_get_number(meta, "dt", NULL)) == IMP_ERR_NOT_FOUND)
        return missing(what, "meta number 'dt'", "the sample period in seconds; impulse import --dt H");
    if (st) return imp_fail_context(st, "meta");
    if (!imp_npz_find(z, "contact_pairs"))
        return missing(what, "array 'contact_pairs'",
                       "int (pairs, 2) of body indices, -1 for a wall, (0, 2) for none; impulse import --wall/--pair");
    if ((st = pairs_to_int(z))) return st;
    imp_contact_geometry g;
    if ((st = imp_contact_geometry_from_npz(z, meta, &g))) return st;
    const double *q = NULL, *qdot = NULL, *qc, *qdc;
    size_t sh[3] = {0, 0, 0};
    if ((st = imp_npz_get_f64(z, "q", 3, (size_t[]){0, 0, (size_t)(g.n_bodies * g.dim)}, &q, sh))) return st;
    size_t shq[3] = {sh[0], sh[1], sh[2]};
    if (sh[0] < 1 || sh[1] < 2 || sh[0] > (size_t)1 << 24 || sh[1] > (size_t)1 << 28)
        return imp_fail(IMP_ERR_SHAPE, "q: shape (%zu, %zu, %zu) needs >= 1 trajectory of >= 2 steps", sh[0],
                        sh[1], sh[2]);
    if (!imp_npz_find(z, "qdot"))
        return missing(what, "array 'qdot'",
                       "velocities at the sample times, shaped like q; impulse import computes them by finite "
                       "differences when you have none");
    if ((st = imp_npz_get_f64(z, "qdot", 3, shq, &qdot, NULL))) return st;
    /* clean copies are optional: user data may not have them */
    qc = q;
    qdc = qdot;
    if (imp_npz_find(z, "q_clean") && (st = imp_npz_get_f64(z, "q_clean", 3, shq, &qc, NULL))) return st;
    if (imp_npz_find(z, "qdot_clean") && (st = imp_npz_get_f64(z, "qdot_clean", 3, shq, &qdc, NULL))) return st;
    double dt = 0;
    if ((st = imp_json_get_number(meta, "dt", &dt))) return st;
    if (!(dt > 0 && isfinite(dt))) return imp_fail(IMP_ERR_INVALID, "meta: dt = %g must be positive", dt);
    int n_traj, n_steps;
    if ((st = imp_num_to_int((double)sh[0], "q: trajectories", 1, 1 << 24, &n_traj)) ||
        (st = imp_num_to_int((double)sh[1], "q: steps", 2, 1 << 28, &n_steps)))
        return st;
    if ((st = imp_trajset_alloc(ts, n_traj, n_steps, &g))) return st;
    size_t nq = sh[0] * sh[1] * sh[2];
    memcpy(ts->q, q, nq * sizeof(double));
    memcpy(ts->qdot, qdot, nq * sizeof(double));
    memcpy(ts->q_clean, qc, nq * sizeof(double));
    memcpy(ts->qdot_clean, qdc, nq * sizeof(double));
    ts->has_contact = imp_npz_find(z, "contact") != NULL;
    if (ts->has_contact) st = get_flags(z, "contact", 3, (size_t[]){sh[0], sh[1], (size_t)g.n_bodies}, ts->contact);
    if (!st && imp_npz_find(z, "contact_interior")) st = get_flags(z, "contact_interior", 2, sh, ts->interior);
    if (st) {
        imp_trajset_free(ts);
        return st;
    }
    ts->dt = dt;
    ts->widened_f32 = widened;
    ts->gravity = ts->length = NAN;
    imp_json_get_string(meta, "system", ts->system, sizeof ts->system);
    imp_json_get_number(meta, "gravity", &ts->gravity);
    imp_json_get_number(meta, "length", &ts->length);
    imp_json_get_number(meta, "noise", &ts->noise);
    if (imp_json_get_number(meta, "friction", &ts->friction)) ts->friction = NAN;
    imp_json_get_string(meta, "labels", ts->labels, sizeof ts->labels);
    /* the seed is provenance: optional, but an unsigned integer when given */
    double seed = 0;
    uint64_t seed_u = 0;
    if ((st = imp_json_get_number(meta, "seed", &seed)) == IMP_ERR_NOT_FOUND) st = IMP_OK;
    else if (!st) st = imp_num_to_uint64(seed, "seed", &seed_u);
    if (st) {
        imp_trajset_free(ts);
        return imp_fail_context(st, "meta");
    }
    ts->seed = seed_u;
    imp_clear_error();
    /* files of impulse's event-driven simulators from before the "labels"
     * key: one label per impact (or resting sample) */
    char version[64];
    if (!ts->labels[0] && !imp_json_get_string(meta, "impulse_version", version, sizeof version) &&
        (!strcmp(ts->system, "pendulum") || !strcmp(ts->system, "bouncing-ball") ||
         !strcmp(ts->system, "newtons-cradle") || !strcmp(ts->system, "bouncing-disk") ||
         !strcmp(ts->system, "ball-box")))
        snprintf(ts->labels, sizeof ts->labels, "impact");
    imp_clear_error();
    if (ts->has_contact && ts->geom.has_radii && (st = labels_check(ts))) {
        imp_trajset_free(ts);
        return st;
    }
    return IMP_OK;
}

int imp_trajset_load(imp_trajset *ts, const char *path)
{
    memset(ts, 0, sizeof *ts);
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return st;
    st = imp_trajset_from_npz(ts, z, path);
    imp_npz_free(z);
    if (st) return imp_fail_context(st, "%s", path);
    return IMP_OK;
}

int imp_system_energy_known(const char *system, int dim)
{
    static const char *names[] = {"pendulum", "newtons-cradle", "compliant-cradle", "bouncing-ball", "compliant-ball",
                                  "ball-box", "compliant-ball-box"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(system, names[i])) return 1;
    if (!strncmp(system, "bouncing-points", 15)) return 1;
    return (!strcmp(system, "bouncing-disk") || !strncmp(system, "bouncing-disks", 14)) && dim == 3;
}

int imp_system_energy(const char *system, const imp_contact_geometry *g, double gravity,
                      double length, const double *q, const double *v, double *energy)
{
    int D = g->n_bodies * g->dim;
    double T = 0.0, U = 0.0;
    int pend = !strcmp(system, "pendulum") || !strcmp(system, "newtons-cradle") || !strcmp(system, "compliant-cradle");
    if (!strcmp(system, "bouncing-disk") && g->dim != 3)
        return imp_fail(IMP_ERR_UNSUPPORTED, "energy: bouncing-disk data have 3 coordinates (x, y, k theta), not %d",
                        g->dim);
    /* any other system (data from elsewhere): point masses in Cartesian
     * coordinates, the height the last one (as for impulse's walls) */
    if (!isfinite(gravity))
        return imp_fail(IMP_ERR_INVALID, "energy: gravity unknown (meta key 'gravity'; impulse import --gravity G)");
    if (pend && !(length > 0.0 && isfinite(length)))
        return imp_fail(IMP_ERR_INVALID, "energy: pendulum length unknown (meta key 'length'; impulse import --length L)");
    for (int i = 0; i < D; i++) T += 0.5 * g->mass[i / g->dim] * v[i] * v[i];
    if (pend) {
        /* q are angles, v angular velocities of point masses on massless rods:
         * T = m l^2 qdot^2 / 2, U = m g l (1 - cos q). */
        T *= length * length;
        for (int k = 0; k < g->n_bodies; k++) U += g->mass[k] * gravity * length * (1.0 - cos(q[k]));
    } else if ((!strcmp(system, "bouncing-disk") || !strncmp(system, "bouncing-disks", 14)) && g->dim == 3) {
        /* q = (x, y, k theta): T as above (M = I), U = m g y */
        for (int k = 0; k < g->n_bodies; k++) U += g->mass[k] * gravity * q[k * g->dim + 1];
    } else {
        for (int k = 0; k < g->n_bodies; k++) U += g->mass[k] * gravity * q[k * g->dim + g->dim - 1];
    }
    *energy = T + U;
    return IMP_OK;
}
