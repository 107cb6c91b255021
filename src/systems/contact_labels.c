/* Contact labels against the motion: which labels mark an impact, which are
 * extra labels of the same impact (a compliant contact or a touch sensor
 * spanning several samples), which are resting contact, which show no
 * velocity change at all; and the "onset" handling that keeps one label per
 * impact (at the first sample of its contact interval) plus resting contact
 * and marks the impact's interior samples. CD-Lagrange's training forces an
 * impulse at every labelled step, so a second label of one bounce flips the
 * rebound back, and a mid-impact sample as a target teaches the potential
 * the contact force (see docs/your-data.md). Definitions in include/impulse/contact_systems.h. */
#include "impulse/contact_systems.h"
#include "core/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int imp_label_mode_from_name(const char *name, imp_label_mode *mode)
{
    if (!strcmp(name, "auto")) *mode = IMP_LABELS_AUTO;
    else if (!strcmp(name, "as-given")) *mode = IMP_LABELS_AS_GIVEN;
    else if (!strcmp(name, "onset")) *mode = IMP_LABELS_ONSET;
    else if (!strcmp(name, "geometry")) *mode = IMP_LABELS_GEOMETRY;
    else return imp_fail(IMP_ERR_INVALID, "--contact-labels: '%s' is not auto, as-given, onset or geometry", name);
    return IMP_OK;
}

const char *imp_label_mode_name(imp_label_mode mode)
{
    switch (mode) {
    case IMP_LABELS_AS_GIVEN: return "as-given";
    case IMP_LABELS_ONSET: return "onset";
    case IMP_LABELS_GEOMETRY: return "geometry";
    default: return "auto";
    }
}


/* The pair of body k with the smallest gap at positions q, or -1. */
static int nearest_pair(const imp_contact_geometry *g, int k, const double *q)
{
    int best = -1;
    double gbest = INFINITY;
    for (int p = 0; p < g->n_pairs; p++) {
        if (g->pairs[p].body_j != k && g->pairs[p].body_i != k) continue;
        double gap = imp_contact_gap(g, p, q);
        if (best < 0 || gap < gbest) best = p, gbest = gap;
    }
    return best;
}

/* The normal velocity's change between unlabelled samples of body k (along
 * pair `pair`, or the nearest pair of the body when pair < 0): its median a
 * (g dt for a falling ball) and sigma, a robust (median absolute deviation)
 * estimate of its noise; both 0 with fewer than 8 samples. */
static int normal_change(const imp_trajset *ts, int k, int pair, double *a, double *sigma)
{
    const imp_contact_geometry *g = &ts->geom;
    int T = ts->n_steps, K = g->n_bodies, D = K * g->dim;
    size_t cap = (size_t)ts->n_traj * T, n = 0;
    double *du = malloc(cap * sizeof *du);
    if (!du) return imp_fail(IMP_ERR_NOMEM, "contact labels: out of memory");
    for (int tr = 0; tr < ts->n_traj; tr++)
        for (int t = 1; t < T; t++) {
            size_t i = (size_t)tr * T + t;
            if (ts->contact[i * K + k] != 0.0 || ts->contact[(i - 1) * K + k] != 0.0) continue;
            int p = pair >= 0 ? pair : nearest_pair(g, k, ts->q + i * D);
            if (p < 0) continue;
            du[n++] = imp_contact_normal_velocity_at(g, p, ts->q + i * D, ts->qdot + i * D) -
                      imp_contact_normal_velocity_at(g, p, ts->q + (i - 1) * D, ts->qdot + (i - 1) * D);
        }
    *a = *sigma = 0.0;
    if (n >= 8) {
        *a = imp_median_sort(du, n);
        for (size_t i = 0; i < n; i++) du[i] = fabs(du[i] - *a);
        *sigma = 1.4826 * imp_median_sort(du, n) / sqrt(2.0);
    }
    free(du);
    return IMP_OK;
}

/* Rest threshold of body k: 3 sigma + 2 |a| (normal_change, nearest pair). */
static int rest_threshold(const imp_trajset *ts, int k, double *v_rest)
{
    double a, sigma;
    int st = normal_change(ts, k, -1, &a, &sigma);
    *v_rest = 3.0 * sigma + 2.0 * fabs(a);
    return st;
}

static void label_pair(const imp_contact_pair *cp, double *c_t)
{
    c_t[cp->body_j] = 1.0;
    if (cp->body_i != IMP_WALL) c_t[cp->body_i] = 1.0;
}

/* The geometry handling's labels (include/impulse/contact_systems.h): every
 * given label is replaced by those of the impacts and rests that the motion
 * shows near a contact pair. */
static int labels_from_geometry(imp_trajset *ts)
{
    const imp_contact_geometry *g = &ts->geom;
    const int T = ts->n_steps, K = g->n_bodies, D = K * g->dim;
    const double tol = isfinite(ts->noise) && ts->noise > 0.0 ? 3.0 * ts->noise : 0.0, h = ts->dt;
    double v_rest[IMP_MAX_BODIES];
    memset(ts->contact, 0, (size_t)ts->n_traj * T * K * sizeof(double));
    double free_du[IMP_MAX_CONTACTS];
    for (int k = 0; k < K; k++) {
        int st = rest_threshold(ts, k, &v_rest[k]);
        if (st) return st;
    }
    for (int p = 0; p < g->n_pairs; p++) {
        /* a body rests on a pair only where its free motion presses it in
         * (gravity on a floor, not on a side wall): the median change of the
         * normal velocity per sample (free_du) closing beyond its noise */
        double sigma = NAN;
        int st = normal_change(ts, g->pairs[p].body_j, p, &free_du[p], &sigma);
        if (st) return st;
        if (!(free_du[p] < -sigma)) free_du[p] = NAN;
    }
    for (int tr = 0; tr < ts->n_traj; tr++) {
        double *c = ts->contact + (size_t)tr * T * K;
        const double *q = ts->q + (size_t)tr * T * D, *qd = ts->qdot + (size_t)tr * T * D;
        for (int p = 0; p < g->n_pairs; p++) {
            const imp_contact_pair *cp = &g->pairs[p];
            const int wall = cp->body_i == IMP_WALL;
            const double v = wall || v_rest[cp->body_j] > v_rest[cp->body_i] ? v_rest[cp->body_j] : v_rest[cp->body_i];
#define U(t) imp_contact_normal_velocity(g, p, qd + (size_t)(t) * D)
            for (int t = 1; t < T; t++) {
                double u0 = U(t - 1), u1 = U(t);
                if (u0 < 0.0 && imp_contact_gap(g, p, q + (size_t)(t - 1) * D) + h * u0 <= tol && u1 - u0 > v) {
                    label_pair(cp, c + (size_t)t * K);
                    if (t + 1 < T && U(t + 1) - u1 > v) label_pair(cp, c + (size_t)(t + 1) * K);
                }
                /* at rest: near, slow, and not in free flight (the normal
                 * velocity's change over two samples nearer 0 than 2 free_du;
                 * a slow bounce's apex is not a rest) */
                if (!isnan(free_du[p]) && t + 1 < T && imp_contact_gap(g, p, q + (size_t)t * D) <= tol &&
                    fabs(u0) <= v && fabs(u1) <= v && U(t + 1) - u0 > free_du[p])
                    label_pair(cp, c + (size_t)t * K);
            }
#undef U
        }
    }
    ts->has_contact = 1;
    return IMP_OK;
}

int imp_contact_labels_apply(imp_trajset *ts, imp_label_mode mode, imp_label_report *report)
{
    imp_label_report r;
    memset(&r, 0, sizeof r);
    if (mode == IMP_LABELS_AUTO)
        mode = !strcmp(ts->labels, "impact") || !strcmp(ts->labels, "as-given") || !strcmp(ts->labels, "onset")
                   ? IMP_LABELS_AS_GIVEN
                   : IMP_LABELS_ONSET;
    r.mode = mode;
    const imp_contact_geometry *g = &ts->geom;
    int T = ts->n_steps, K = g->n_bodies, D = K * g->dim;
    int st = IMP_OK;
    if (mode == IMP_LABELS_GEOMETRY) {
        if ((st = labels_from_geometry(ts))) return st;
        mode = IMP_LABELS_ONSET;
    }
    for (int k = 0; k < K && ts->has_contact && !st; k++) {
        double v = 0.0;
        if ((st = rest_threshold(ts, k, &v))) break;
        if (v > r.v_rest) r.v_rest = v;
        for (int tr = 0; tr < ts->n_traj; tr++) {
            double *c = ts->contact + (size_t)tr * T * K;
            const double *q = ts->q + (size_t)tr * T * D, *qd = ts->qdot + (size_t)tr * T * D;
            for (int a = 0; a < T; a++) {
                if (c[(size_t)a * K + k] == 0.0) continue;
                int b = a;
                while (b + 1 < T && c[(size_t)(b + 1) * K + k] != 0.0) b++;
                r.intervals++;
                r.labels += b - a + 1;
                int p = nearest_pair(g, k, q + (size_t)a * D);
                if (p < 0) {
                    r.no_pair += b - a + 1;
                    r.kept += b - a + 1;
                    a = b;
                    continue;
                }
#define U(t) imp_contact_normal_velocity_at(g, p, q + (size_t)(t) * D, qd + (size_t)(t) * D)
                /* the normal velocity reverses within the interval or at the
                 * sample after it (a single label at an impact's first
                 * sample, as onset leaves it) */
                int rev = -1;
                for (int t = a > 0 ? a : 1; t <= b + 1 && t < T && rev < 0; t++)
                    if (U(t - 1) < 0.0 && U(t) >= 0.0) rev = t;
                /* the impulse goes to the interval's first sample (the step in
                 * which the bodies met); the samples between it and the last
                 * label are mid-impact (interior) */
                int imp_at = rev >= 0 ? a : -1;
                int extra = 0;
                for (int t = a; t <= b; t++) {
                    int keep = 1, rest = t > 0 && fabs(U(t - 1)) <= v && fabs(U(t)) <= v;
                    if (rev >= 0 && t < b && !rest) {
                        r.interior++;
                        if (mode == IMP_LABELS_ONSET) ts->interior[(size_t)tr * T + t] = 1.0;
                    }
                    if (t == imp_at) {
                        /* the impact */
                    } else if (rest) {
                        r.resting++;
                    } else if (rev >= 0) {
                        extra++;
                        if (t > rev && U(t - 1) > v) r.separating++;
                        keep = 0;
                    } else {
                        r.no_change++;
                        keep = 0;
                    }
#undef U
                    if (keep) r.kept++;
                    if (!keep && mode == IMP_LABELS_ONSET) c[(size_t)t * K + k] = 0.0;
                }
                if (rev >= 0) r.impacts++;
                if (extra) r.multi++, r.extra += extra;
                a = b;
            }
        }
    }
    if (mode == IMP_LABELS_AS_GIVEN) r.kept = r.labels;
    else if (ts->has_contact && !st) snprintf(ts->labels, sizeof ts->labels, "onset");
    if (report) *report = r;
    return st;
}
