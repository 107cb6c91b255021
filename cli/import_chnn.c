/* impulse import FILE --system-file SYS.txt (or --system BENCHMARK) -o data.npz:
 * trajectories of positions and velocities of a constrained system's points
 * from numpy, CSV or HDF5 files (read as by the contact strand's import,
 * src/systems/trajset_import.c), checked against the system (the rods'
 * lengths, imp_ctraj_check) and written as a constrained-strand dataset
 * (docs/data-format.md, "Constrained-strand datasets"). */
#include "cli.h"
#include "impulse/chnn_models.h"
#include "impulse/chnn_systems.h"
#include "impulse/contact_systems.h"
#include "impulse/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 if `name` is one of the constrained strand's benchmarks. */
int cli_import_is_constrained(const char *name)
{
    imp_csys *s = malloc(sizeof *s);
    int yes = s && name && name[0] && imp_chnn_system(s, name) == IMP_OK;
    imp_clear_error();
    free(s);
    return yes;
}

static int write_set(const char *out, const imp_ctraj *ct, const imp_csystem *cs, const char *system_file,
                     const char *input)
{
    const imp_csys *s = &cs->full;
    imp_npz *z = imp_npz_new();
    int st = z ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "out of memory");
    double *t = malloc((size_t)ct->T * sizeof(double));
    if (!st && !t) st = imp_fail(IMP_ERR_NOMEM, "out of memory");
    for (int k = 0; !st && k < ct->T; k++) t[k] = k * ct->dt;
    size_t sh_t[1] = {(size_t)ct->T}, sh_z[5] = {(size_t)ct->n_traj, (size_t)ct->T, 2, (size_t)cs->n_points, (size_t)cs->d};
    if (!st) st = imp_npz_add_f64(z, "t", 1, sh_t, t);
    if (!st) st = imp_npz_add_f64(z, "z", 5, sh_z, ct->z);
    free(t);
    imp_json j;
    cli_chnn_data_meta(&j, "impulse import", s, system_file);
    imp_json_kv_string(&j, "input", input);
    imp_json_kv_int(&j, "trajectories", ct->n_traj);
    imp_json_kv_int(&j, "steps", ct->T - 1);
    imp_json_kv_number(&j, "dt", ct->dt);
    imp_json_kv_number(&j, "noise", NAN); /* unknown: null */
    st = cli_npz_save_with_meta(z, &j, st, out);
    return st;
}

/* An .npz holding the points' arrays as the constrained strand's files do:
 * "x" and "v" (n, T, P, d) or "z" (n, T, 2, P, d), which the column reader
 * (at most (n, T, columns)) does not take. *found = 0: not such a file. */
static int read_point_npz(const char *in, const imp_csystem *cs, double dt, imp_ctraj *ct, int *found)
{
    *found = 0;
    size_t n = strlen(in);
    if (n < 4 || strcmp(in + n - 4, ".npz")) return IMP_OK;
    imp_npz *z = NULL;
    if (imp_npz_load(&z, in)) return imp_clear_error(), IMP_OK; /* the column reader says why */
    const imp_npy_array *ax = imp_npz_find(z, "x"), *az = imp_npz_find(z, "z");
    if (!(az && az->ndim == 5) && !(ax && ax->ndim == 4)) {
        imp_npz_free(z);
        return IMP_OK;
    }
    *found = 1;
    int nd = cs->n_points * cs->d, st;
    const double *x = NULL, *v = NULL, *zz = NULL, *t = NULL;
    size_t sh[5], sv[4];
    if (az && az->ndim == 5) {
        size_t e[5] = {0, 0, 2, (size_t)cs->n_points, (size_t)cs->d};
        st = imp_npz_get_f64(z, "z", 5, e, &zz, sh);
    } else {
        size_t e[4] = {0, 0, (size_t)cs->n_points, (size_t)cs->d};
        st = imp_npz_get_f64(z, "x", 4, e, &x, sh);
        if (!st) st = imp_npz_get_f64(z, "v", 4, e, &v, sv);
        if (!st && (sv[0] != sh[0] || sv[1] != sh[1]))
            st = imp_fail(IMP_ERR_SHAPE, "v: shape (%zu, %zu, ...) differs from x's (%zu, %zu, ...)", sv[0], sv[1], sh[0],
                          sh[1]);
    }
    if (!st && (sh[0] < 1 || sh[1] < 2))
        st = imp_fail(IMP_ERR_SHAPE, "need at least 1 trajectory of 2 states, got %zu x %zu", sh[0], sh[1]);
    if (!st && imp_npz_find(z, "t")) {
        size_t et[1] = {sh[1]};
        st = imp_npz_get_f64(z, "t", 1, et, &t, NULL);
        double h = !st ? (t[sh[1] - 1] - t[0]) / (double)(sh[1] - 1) : 0;
        for (size_t k = 1; !st && k < sh[1]; k++)
            if (!(h > 0) || fabs(t[k] - t[k - 1] - h) > 1e-6 * h)
                st = imp_fail(IMP_ERR_INVALID, "t: not evenly sampled (step %.9g at sample %zu, mean %.9g): impulse "
                              "needs a fixed dt (resample first)", t[k] - t[k - 1], k, h);
        if (!st && dt > 0 && fabs(h - dt) > 1e-6 * dt)
            st = imp_fail(IMP_ERR_INVALID, "--dt %.9g contradicts the time stamps 't' (step %.9g)", dt, h);
        if (!st) dt = h;
    }
    if (!st && !(dt > 0)) st = imp_fail(IMP_ERR_NOT_FOUND, "no sample period: give --dt H (seconds) or an array 't'");
    if (!st) {
        ct->n_traj = (int)sh[0], ct->T = (int)sh[1], ct->dim = 2 * nd, ct->dt = dt;
        ct->z = malloc(sh[0] * sh[1] * 2 * (size_t)nd * sizeof(double));
        if (!ct->z) st = imp_fail(IMP_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; !st && k < sh[0] * sh[1]; k++) {
        if (zz) {
            memcpy(ct->z + k * 2 * nd, zz + k * 2 * nd, 2 * (size_t)nd * sizeof(double));
        } else {
            memcpy(ct->z + k * 2 * nd, x + k * nd, (size_t)nd * sizeof(double));
            memcpy(ct->z + k * 2 * nd + nd, v + k * nd, (size_t)nd * sizeof(double));
        }
    }
    imp_npz_free(z);
    return st ? imp_fail_context(st, "%s", in) : IMP_OK;
}

/* The points' positions and velocities as columns (the contact strand's
 * reader: CSV, HDF5, .npy, .npz of at most (trajectories, samples, columns)),
 * every point a "body" of d coordinates. */
static int read_columns(const char *in, struct imp_import_opts *o, const imp_csystem *cs, imp_ctraj *ct,
                        imp_import_notes *nt)
{
    o->bodies = cs->n_points;
    o->dim = cs->d;
    o->system[0] = '\0';
    imp_trajset ts;
    int st = imp_trajset_import(in, o, &ts, nt);
    if (st == IMP_ERR_NOT_FOUND && !o->q && strstr(imp_last_error(), "no positions")) {
        /* x and v: the names of the constrained strand's own files */
        char why[512];
        snprintf(why, sizeof why, "%s", imp_last_error());
        o->q = "x";
        if (!o->qdot && !o->finite_differences) o->qdot = "v";
        st = imp_trajset_import(in, o, &ts, nt);
        const char *was = "no positions 'q' or 'qpos'", *at = strstr(why, was);
        if (st == IMP_ERR_NOT_FOUND && at)
            return imp_fail(st, "%.*sno positions 'q', 'qpos' or 'x'%s", (int)(at - why), why, at + strlen(was));
    }
    if (st) {
        if (strstr(imp_last_error(), "columns")) /* a shape the system's points do not have */
            imp_fail_context(st, "system '%s' has %d points%s x %d coordinates", cs->name, cs->n_points,
                             cs->n_points != cs->n_bodies ? " (each body's centre of mass, then its axis points)" : "",
                             cs->d);
        return st;
    }
    int nd = cs->n_points * cs->d;
    ct->n_traj = ts.n_traj, ct->T = ts.n_steps, ct->dim = 2 * nd, ct->dt = ts.dt;
    ct->z = malloc((size_t)ct->n_traj * ct->T * 2 * nd * sizeof(double));
    st = ct->z ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "out of memory");
    for (size_t k = 0; !st && k < (size_t)ct->n_traj * ct->T; k++) {
        memcpy(ct->z + k * 2 * nd, ts.q + k * nd, (size_t)nd * sizeof(double));
        memcpy(ct->z + k * 2 * nd + nd, ts.qdot + k * nd, (size_t)nd * sizeof(double));
    }
    imp_trajset_free(&ts);
    return st;
}

int cli_import_chnn(const char *in, struct imp_import_opts *o, const char *system_file, const char *out, int json)
{
    const char *verb = "import";
    if (o->n_pairs > 0 || o->contact || o->n_masses > 0 || isfinite(o->restitution) || isfinite(o->gravity) ||
        isfinite(o->length) || o->bodies > 0 || o->dim > 0)
        return cli_failf(verb, "--wall, --pair, --contact, --masses, --restitution, --gravity, --length, --bodies and "
                               "--dim are the contact strand's: with %s the system %s says them",
                         system_file ? "--system-file" : "--system", system_file ? "file" : "name");
    imp_csys *s = malloc(sizeof *s);
    imp_csystem *cs = malloc(sizeof *cs);
    int st = s && cs ? IMP_OK : imp_fail(IMP_ERR_NOMEM, "out of memory");
    if (!st) st = system_file ? imp_csys_load(s, system_file) : imp_chnn_system(s, o->system);
    if (!st) st = imp_csystem_from_csys(cs, s);
    free(s);
    if (st) {
        free(cs);
        return cli_fail(verb);
    }
    imp_ctraj ct = {0};
    imp_import_notes nt;
    memset(&nt, 0, sizeof nt);
    int whole = 0;
    st = read_point_npz(in, cs, o->dt, &ct, &whole);
    if (!st && whole) snprintf(nt.format, sizeof nt.format, "npz");
    if (!st && !whole) st = read_columns(in, o, cs, &ct, &nt);
    if (!st) st = imp_ctraj_check(cs, &ct, in);
    if (!st) cli_import_notes_print(in, &nt, ct.dt, ct.T);
    if (!st) st = write_set(out, &ct, cs, system_file, in);
    if (st) {
        imp_ctraj_free(&ct);
        free(cs);
        return cli_fail(verb);
    }
    int rc = 0;
    if (json) {
        imp_json j;
        cli_json_begin(&j, verb);
        imp_json_kv_string(&j, "input", in);
        imp_json_kv_string(&j, "format", nt.format);
        imp_json_kv_string(&j, "system", cs->name);
        imp_json_kv_int(&j, "trajectories", ct.n_traj);
        imp_json_kv_int(&j, "steps", ct.T);
        imp_json_kv_int(&j, "points", cs->n_points);
        imp_json_kv_int(&j, "dim", cs->d);
        imp_json_kv_number(&j, "dt", ct.dt);
        imp_json_kv_string(&j, "output", out);
        rc = cli_json_print(&j, verb);
    } else {
        fprintf(stderr, "impulse import: %s (%s): %d trajectories x %d states of system '%s' (%d points x %d "
                        "coordinates), dt %g; rod lengths match the system -> %s\n",
                in, nt.format, ct.n_traj, ct.T, cs->name, cs->n_points, cs->d, ct.dt, out);
    }
    imp_ctraj_free(&ct);
    free(cs);
    return rc;
}
