/* Trajectory sets: allocation, observation noise, and their .npz form. */
#include "impulse/contact_systems.h"
#include "impulse/io.h"

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
    if (!ts->q || !ts->qdot || !ts->q_clean || !ts->qdot_clean || !ts->contact) {
        imp_trajset_free(ts);
        return imp_fail(IMP_ERR_NOMEM, "trajectories: cannot allocate %zu values", 4 * nq + nc);
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
    imp_json_kv_string(&j, "impulse_version", IMP_VERSION_STRING);
    imp_json_end_object(&j);

    imp_npz *z = imp_npz_new();
    int st = z ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "trajectories: out of memory");
    if (!st) st = imp_npz_add_f64(z, "q", 3, shq, ts->q);
    if (!st) st = imp_npz_add_f64(z, "qdot", 3, shq, ts->qdot);
    if (!st) st = imp_npz_add_f64(z, "q_clean", 3, shq, ts->q_clean);
    if (!st) st = imp_npz_add_f64(z, "qdot_clean", 3, shq, ts->qdot_clean);
    if (!st) st = imp_npz_add_f64(z, "contact", 3, shc, ts->contact);
    if (!st) st = imp_contact_geometry_to_npz(g, z);
    if (!st) st = imp_json_text(&j) ? imp_npz_set_meta(z, imp_json_text(&j))
                                    : imp_fail(IMP_ERR_NOMEM, "meta: out of memory");
    if (!st) st = imp_npz_save(z, path);
    imp_npz_free(z);
    imp_json_free(&j);
    return st;
}

int imp_trajset_load(imp_trajset *ts, const char *path)
{
    memset(ts, 0, sizeof *ts);
    imp_npz *z = NULL;
    int st = imp_npz_load(&z, path);
    if (st) return st;
    const char *meta = imp_npz_meta(z);
    imp_contact_geometry g;
    if (!meta) st = imp_fail(IMP_ERR_NOT_FOUND, "%s: no 'meta' JSON (not an impulse trajectory file?)", path);
    if (!st) st = imp_contact_geometry_from_npz(z, meta, &g);
    const double *q = NULL, *qdot = NULL, *qc, *qdc, *c = NULL;
    size_t sh[3] = {0, 0, 0};
    if (!st) st = imp_npz_get_f64(z, "q", 3, (size_t[]){0, 0, (size_t)(g.n_bodies * g.dim)}, &q, sh);
    size_t shq[3] = {sh[0], sh[1], sh[2]};
    if (!st && (sh[0] < 1 || sh[1] < 2 || sh[0] > (size_t)1 << 24 || sh[1] > (size_t)1 << 28))
        st = imp_fail(IMP_ERR_SHAPE, "q: shape (%zu, %zu, %zu) needs >= 1 trajectory of >= 2 steps",
                      sh[0], sh[1], sh[2]);
    if (!st) st = imp_npz_get_f64(z, "qdot", 3, shq, &qdot, NULL);
    if (!st) st = imp_npz_get_f64(z, "contact", 3, (size_t[]){sh[0], sh[1], (size_t)g.n_bodies}, &c, NULL);
    /* clean copies are optional: user data may not have them */
    qc = q;
    qdc = qdot;
    if (!st && imp_npz_find(z, "q_clean")) st = imp_npz_get_f64(z, "q_clean", 3, shq, &qc, NULL);
    if (!st && imp_npz_find(z, "qdot_clean")) st = imp_npz_get_f64(z, "qdot_clean", 3, shq, &qdc, NULL);
    double dt = 0;
    if (!st && imp_json_get_number(meta, "dt", &dt))
        st = imp_fail(IMP_ERR_FORMAT, "meta: missing number 'dt'");
    if (!st && !(dt > 0 && isfinite(dt))) st = imp_fail(IMP_ERR_INVALID, "meta: dt = %g must be positive", dt);
    if (!st) st = imp_trajset_alloc(ts, (int)sh[0], (int)sh[1], &g);
    if (!st) {
        size_t nq = sh[0] * sh[1] * sh[2], nc = sh[0] * sh[1] * (size_t)g.n_bodies;
        memcpy(ts->q, q, nq * sizeof(double));
        memcpy(ts->qdot, qdot, nq * sizeof(double));
        memcpy(ts->q_clean, qc, nq * sizeof(double));
        memcpy(ts->qdot_clean, qdc, nq * sizeof(double));
        for (size_t i = 0; i < nc && !st; i++) {
            if (c[i] != 0.0 && c[i] != 1.0)
                st = imp_fail(IMP_ERR_INVALID, "contact: value %g at flat index %zu is not 0 or 1", c[i], i);
            ts->contact[i] = c[i];
        }
        ts->dt = dt;
        imp_json_get_string(meta, "system", ts->system, sizeof ts->system);
        imp_json_get_number(meta, "gravity", &ts->gravity);
        if (imp_json_get_number(meta, "friction", &ts->friction)) ts->friction = NAN;
        imp_json_get_number(meta, "length", &ts->length);
        imp_json_get_number(meta, "noise", &ts->noise);
        double seed = 0;
        if (!imp_json_get_number(meta, "seed", &seed)) ts->seed = (unsigned long long)seed;
        if (st) imp_trajset_free(ts);
    }
    imp_npz_free(z);
    if (st) return imp_fail_context(st, "%s", path);
    return IMP_OK;
}

int imp_system_energy(const char *system, const imp_contact_geometry *g, double gravity,
                      double length, const double *q, const double *v, double *energy)
{
    int D = g->n_bodies * g->dim;
    double T = 0.0, U = 0.0;
    for (int i = 0; i < D; i++) T += 0.5 * g->mass[i / g->dim] * v[i] * v[i];
    if (!strcmp(system, "pendulum") || !strcmp(system, "newtons-cradle")) {
        /* q are angles, v angular velocities of point masses on massless rods:
         * T = m l^2 qdot^2 / 2, U = m g l (1 - cos q). */
        T *= length * length;
        for (int k = 0; k < g->n_bodies; k++) U += g->mass[k] * gravity * length * (1.0 - cos(q[k]));
    } else if (!strcmp(system, "bouncing-ball")) {
        for (int k = 0; k < g->n_bodies; k++) U += g->mass[k] * gravity * q[k * g->dim + g->dim - 1];
    } else if (!strcmp(system, "bouncing-disk") && g->dim == 3) {
        /* q = (x, y, k theta): T as above (M = I), U = m g y */
        for (int k = 0; k < g->n_bodies; k++) U += g->mass[k] * gravity * q[k * g->dim + 1];
    } else {
        return imp_fail(IMP_ERR_UNSUPPORTED, "energy: unknown system '%s'", system);
    }
    *energy = T + U;
    return IMP_OK;
}
