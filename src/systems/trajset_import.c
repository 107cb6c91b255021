/* Trajectory sets from files impulse did not write: positions, velocities,
 * contact labels and sample times read by name from numpy, CSV or HDF5
 * (src/io/source.c), checked against each other (shapes, dt against the
 * time stamps, labels 0/1), velocities computed by finite differences when
 * asked, the contact geometry and physical constants taken from the
 * options. Every missing piece is named with the option that supplies it. */
#include "impulse/contact_systems.h"
#include "io/io_internal.h"
#include "io/source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void imp_import_opts_default(imp_import_opts *o)
{
    memset(o, 0, sizeof *o);
    o->restitution = o->gravity = o->length = NAN;
}

/* The first of the candidate names the source has (or the given one);
 * *st keeps the first failure other than "absent". */
static const char *pick(imp_source *s, const char *given, const char *a, const char *b, int *st)
{
    if (given || *st) return given;
    const char *names[2] = {a, b};
    for (int i = 0; i < 2 && names[i]; i++) {
        int h = imp_source_has(s, names[i]);
        if (h < 0) return *st = h, NULL;
        if (h) return names[i];
    }
    return NULL;
}

/* dt from time stamps t (n samples): evenly spaced, else an error. */
static int dt_from_times(const double *t, size_t n, int traj, double *dt)
{
    if (n < 2) return imp_fail(IMP_ERR_SHAPE, "time: trajectory %d has fewer than 2 samples", traj);
    double h = (t[n - 1] - t[0]) / (double)(n - 1);
    if (!(h > 0)) return imp_fail(IMP_ERR_INVALID, "time: trajectory %d does not increase (%g to %g)", traj, t[0], t[n - 1]);
    for (size_t i = 1; i < n; i++) {
        double step = t[i] - t[i - 1];
        if (fabs(step - h) > 1e-6 * h)
            return imp_fail(IMP_ERR_INVALID,
                            "time: trajectory %d is not evenly sampled (step %.9g at sample %zu, mean %.9g): "
                            "impulse needs a fixed dt (resample first)", traj, step, i, h);
    }
    *dt = h;
    return IMP_OK;
}

int imp_trajset_import(const char *path, const imp_import_opts *o, imp_trajset *out, imp_import_notes *notes)
{
    memset(out, 0, sizeof *out);
    memset(notes, 0, sizeof *notes);
    imp_source *s = NULL;
    int st = imp_source_open(&s, path, o->traj);
    if (st) return st;
    snprintf(notes->format, sizeof notes->format, "%s", imp_source_format(s));
    char listing[512];
    imp_source_list(s, listing, sizeof listing);
    const char *qn = pick(s, o->q, "q", "qpos", &st), *vn = o->finite_differences ? NULL : pick(s, o->qdot, "qdot", "qvel", &st);
    const char *cn = pick(s, o->contact, "contact", NULL, &st), *tn = pick(s, o->time, "t", "time", &st);
    int n_traj = 0;
    double *q = NULL, *v = NULL, *c = NULL, *t = NULL;
    if (!st && !qn)
        st = imp_fail(IMP_ERR_NOT_FOUND, "%s: no positions 'q' or 'qpos' (%s): name them with --q NAME", path, listing);
    if (!st && !vn && !o->finite_differences)
        st = imp_fail(IMP_ERR_NOT_FOUND,
                      "%s: no velocities 'qdot' or 'qvel' (%s): name them with --qdot NAME, or pass "
                      "--finite-differences to compute them from the positions", path, listing);
    if (!st) st = imp_source_n_traj(s, qn, &n_traj);
    if (!st && n_traj < 1) st = imp_fail(IMP_ERR_SHAPE, "%s: no trajectories", path);
    int K = o->bodies > 0 ? o->bodies : 1, d = o->dim, T = 0;
    double dt = o->dt;
    imp_contact_geometry g;
    memset(&g, 0, sizeof g);
    for (int n = 0; n < n_traj && !st; n++) {
        size_t r, cols, rv, cv;
        st = imp_source_get(s, qn, n, &q, &r, &cols);
        if (st) break;
        if (n == 0) {
            if (d == 0) {
                if (cols % (size_t)K)
                    st = imp_fail(IMP_ERR_SHAPE, "%s: '%s' has %zu columns, not a multiple of %d bodies (--bodies, --dim)",
                                  path, qn, cols, K);
                else if (cols / (size_t)K > IMP_MAX_DIM) /* before it becomes an int */
                    st = imp_fail(IMP_ERR_SHAPE, "%s: %zu coordinates per body, impulse handles 1 to %d (--bodies, "
                                  "--dim, or select columns with %s[i:j])", path, cols / (size_t)K, IMP_MAX_DIM, qn);
                else
                    d = (int)(cols / (size_t)K);
            }
            if (!st && (size_t)K * (size_t)d != cols)
                st = imp_fail(IMP_ERR_SHAPE, "%s: '%s' has %zu columns, --bodies %d x --dim %d needs %d (select "
                              "columns with %s[i:j])", path, qn, cols, K, d, K * d, qn);
            if (!st && (d < 1 || d > IMP_MAX_DIM))
                st = imp_fail(IMP_ERR_SHAPE, "%s: %d coordinates per body, impulse handles 1 to %d (--bodies, --dim, "
                              "or select columns with %s[i:j])", path, d, IMP_MAX_DIM, qn);
            T = o->steps > 0 ? o->steps : (int)(r < (size_t)1 << 28 ? r : (size_t)1 << 28);
            if (!st && (size_t)T > r)
                st = imp_fail(IMP_ERR_SHAPE, "%s: --steps %d, trajectory 0 has %zu samples", path, T, r);
            if (!st && T < 2) st = imp_fail(IMP_ERR_SHAPE, "%s: '%s' has %d samples, need at least 2", path, qn, T);
            for (int p = 0; p < o->n_pairs && !st; p++)
                if (o->normal_components[p] && o->normal_components[p] != d)
                    st = imp_fail(IMP_ERR_INVALID, "--wall/--pair %d: the normal has %d components, the data have %d "
                                  "coordinates per body", p + 1, o->normal_components[p], d);
            if (!st) {
                g.n_bodies = K, g.dim = d, g.n_pairs = o->n_pairs;
                for (int k = 0; k < K; k++) g.mass[k] = o->n_masses ? o->masses[k] : 1.0;
                notes->default_masses = o->n_masses == 0;
                if (o->n_masses && o->n_masses != K)
                    st = imp_fail(IMP_ERR_INVALID, "--masses: %d values for %d bodies", o->n_masses, K);
                memcpy(g.pairs, o->pairs, sizeof g.pairs);
                g.restitution = o->restitution;
                if (isnan(g.restitution)) {
                    /* optional where the model learns it; else a placeholder */
                    if (imp_contact_geometry_check(&g)) g.restitution = 1.0, notes->default_restitution = 1;
                    imp_clear_error();
                }
                if (!st) st = imp_contact_geometry_check(&g);
                /* what import builds (positions, velocities, their clean
                 * copies, labels) is within the input limit too */
                size_t nv = (size_t)n_traj * (size_t)T, per = 4 * (size_t)K * (size_t)d + (size_t)K + 1;
                char what[600];
                snprintf(what, sizeof what, "%s: %d trajectories x %d samples", path, n_traj, T);
                if (!st) st = imp_input_budget(nv <= SIZE_MAX / per ? nv * per : SIZE_MAX, sizeof(double), what);
                if (!st) st = imp_trajset_alloc(out, n_traj, T, &g);
                out->has_contact = cn != NULL;
                notes->n_traj = n_traj;
            }
            if (st) break;
        } else if (cols != (size_t)(K * d)) {
            st = imp_fail(IMP_ERR_SHAPE, "%s: '%s' of trajectory %d has %zu columns, trajectory 0 %d", path, qn, n, cols, K * d);
            break;
        }
        if (r < (size_t)T || (o->steps == 0 && r != (size_t)T)) {
            st = imp_fail(IMP_ERR_SHAPE, "%s: trajectory %d has %zu samples, trajectory 0 %d: impulse needs equal "
                          "lengths (--steps N keeps the first N of each)", path, n, r, T);
            break;
        }
        notes->truncated |= r > (size_t)T;
        size_t D = (size_t)K * d, off = (size_t)n * T;
        memcpy(out->q + off * D, q, (size_t)T * D * sizeof(double));
        if (vn) {
            if ((st = imp_source_get(s, vn, n, &v, &rv, &cv))) break;
            if (rv < (size_t)T || cv != D) {
                st = imp_fail(IMP_ERR_SHAPE, "%s: '%s' of trajectory %d is %zu x %zu, positions %d x %zu", path, vn, n,
                              rv, cv, T, D);
                break;
            }
            memcpy(out->qdot + off * D, v, (size_t)T * D * sizeof(double));
        }
        if (tn) {
            size_t rt, ct;
            if ((st = imp_source_get(s, tn, n, &t, &rt, &ct))) break;
            double h = 0.0;
            if (ct != 1 || rt < (size_t)T) {
                st = imp_fail(IMP_ERR_SHAPE, "%s: time '%s' of trajectory %d is %zu x %zu, need %d x 1", path, tn, n, rt, ct, T);
                break;
            }
            if ((st = dt_from_times(t, (size_t)T, n, &h))) break;
            if (dt == 0) dt = h, notes->dt_from_time = 1;
            else if (fabs(h - dt) > 1e-6 * dt) {
                st = imp_fail(IMP_ERR_INVALID, "%s: dt %.9g (%s) contradicts the time stamps '%s' of trajectory %d (step %.9g)",
                              path, dt, notes->dt_from_time ? "trajectory 0's time stamps" : "--dt", tn, n, h);
                break;
            }
        }
        if (cn) {
            size_t rc, cc;
            if ((st = imp_source_get(s, cn, n, &c, &rc, &cc))) break;
            if (rc < (size_t)T || cc != (size_t)K) {
                st = imp_fail(IMP_ERR_SHAPE, "%s: contact '%s' of trajectory %d is %zu x %zu, need %d x %d (one label per "
                              "body)", path, cn, n, rc, cc, T, K);
                break;
            }
            for (size_t i = 0; i < (size_t)T * K && !st; i++) {
                if (c[i] != 0.0 && c[i] != 1.0)
                    st = imp_fail(IMP_ERR_INVALID, "%s: contact '%s' of trajectory %d: value %g at sample %zu is not 0 "
                                  "or 1 (labels are 0/1 per body)", path, cn, n, c[i], i / (size_t)K);
                out->contact[off * K + i] = c[i];
            }
        }
        free(q), free(v), free(c), free(t);
        q = v = c = t = NULL;
    }
    free(q), free(v), free(c), free(t);
    if (!st && !(dt > 0))
        st = imp_fail(IMP_ERR_NOT_FOUND, "%s: no sample period: give --dt H (seconds) or a time array (--time NAME)", path);
    if (!st && !vn) {
        /* central differences inside, one-sided at the ends */
        size_t D = (size_t)K * d;
        notes->fd_velocities = 1;
        for (int n = 0; n < n_traj && !st; n++) {
            const double *qq = out->q + (size_t)n * T * D;
            double *vv = out->qdot + (size_t)n * T * D;
            for (int i = 0; i < T && !st; i++) {
                int a = i > 0 ? i - 1 : 0, b = i + 1 < T ? i + 1 : T - 1;
                for (size_t j = 0; j < D; j++) vv[(size_t)i * D + j] = (qq[(size_t)b * D + j] - qq[(size_t)a * D + j]) / ((b - a) * dt);
                /* finite positions can still differ by more than a double holds */
                for (size_t j = 0; j < D && !st; j++)
                    if (!isfinite(vv[(size_t)i * D + j]))
                        st = imp_fail(IMP_ERR_NUMERIC, "%s: velocity by finite differences of '%s' overflows at "
                                      "trajectory %d, sample %d, coordinate %zu (positions %g to %g in %g s)",
                                      path, qn, n, i, j, qq[(size_t)a * D + j], qq[(size_t)b * D + j], (b - a) * dt);
            }
        }
    }
    imp_source_free(s);
    if (st) {
        imp_trajset_free(out);
        return st;
    }
    size_t nq = (size_t)n_traj * T * K * d;
    memcpy(out->q_clean, out->q, nq * sizeof(double));
    memcpy(out->qdot_clean, out->qdot, nq * sizeof(double));
    out->dt = dt;
    out->gravity = o->gravity;
    out->length = o->length;
    out->noise = NAN; /* unknown: written as null */
    snprintf(out->system, sizeof out->system, "%s", o->system);
    snprintf(out->labels, sizeof out->labels, "%s", out->has_contact ? "touch" : "");
    return IMP_OK;
}
