/* Data estimates of the contact law (restitution, friction) around labelled
 * contacts: the starting point of a CD-Lagrange network that learns them
 * (imp_cdl_estimate_contact_law, include/impulse/cdl.h). */
#include "cdl_internal.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}


/* the value below which a fraction f of v lies (nearest rank) */
static double quantile(double *v, int n, double f)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int k = (int)ceil(f * n) - 1;
    return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

int imp_cdl_estimate_contact_law(const imp_trajset *d, double *e, double *mu, int *n_events)
{
    const imp_contact_geometry *g = &d->geom;
    const int K = g->n_bodies, D = K * g->dim, P = g->n_pairs;
    if (!e) return imp_fail(IMP_ERR_INVALID, "estimate: e: NULL");
    size_t cap = (size_t)d->n_traj * (size_t)d->n_steps;
    double *re = malloc((cap + 1) * sizeof(double)), *rm = malloc((cap + 1) * sizeof(double));
    if (!re || !rm) {
        free(re), free(rm);
        return imp_fail(IMP_ERR_NOMEM, "estimate: out of memory");
    }
    const int spheres = imp_contact_geometry_has_spheres(g);
    for (int p = 0; p < P; p++) {
        const imp_contact_pair *c = &g->pairs[p];
        int wall = c->body_i == IMP_WALL, ne = 0, nm = 0;
        for (int tr = 0; tr < d->n_traj; tr++)
            for (int n = 1; n < d->n_steps; n++) {
                size_t t = (size_t)tr * d->n_steps + n;
                const double *lab = d->contact + t * K, *lab0 = d->contact + (t - 1) * K;
                int on = lab[c->body_j] > 0.5 && (wall || lab[c->body_i] > 0.5);
                int rising = lab0[c->body_j] < 0.5 || (!wall && lab0[c->body_i] < 0.5);
                if (!on || !rising) continue;
                /* after the impact: the first sample not inside it */
                size_t t1 = t;
                while (d->interior && d->interior[t1] != 0.0 && (int)(t1 % d->n_steps) + 1 < d->n_steps) t1++;
                const double *v0 = d->qdot + (t - 1) * D, *v1 = d->qdot + t1 * D, *q0 = d->q + (t - 1) * D;
                /* sphere pairs (disks): linearised before the impact */
                imp_contact_geometry gl;
                const imp_contact_geometry *g = &d->geom;
                if (spheres) imp_contact_geometry_at(g, q0, &gl), g = &gl;
                double u0 = imp_contact_normal_velocity(g, p, v0), u1 = imp_contact_normal_velocity(g, p, v1);
                /* this pair, not another one of the body: approaching and
                 * within reach of contact in one step */
                if (!(u0 < 0.0) || imp_contact_gap(g, p, q0) > 2.0 * -u0 * d->dt) continue;
                re[ne++] = -u1 / u0;
                if (mu && imp_contact_pair_has_tangent(g, p)) {
                    /* P = W^-1 du */
                    double ws = 1.0 / g->mass[c->body_j] + (wall ? 0.0 : 1.0 / g->mass[c->body_i]), W[4];
                    imp_contact_pair_compliance(g, p, ws, W);
                    double dut = imp_contact_slip_velocity(g, p, v1) - imp_contact_slip_velocity(g, p, v0), dun = u1 - u0;
                    double det = W[0] * W[3] - W[1] * W[2];
                    if (!(det > 0.0)) continue;
                    double Pt = (W[3] * dut - W[1] * dun) / det, Pn = (-W[2] * dut + W[0] * dun) / det;
                    if (Pn > 0.0) rm[nm++] = fabs(Pt) / Pn;
                }
            }
        e[p] = ne ? fmin(fmax(imp_median_sort(re, (size_t)ne), 0.05), 0.95) : NAN;
        /* |Pt| <= mu Pn with equality when the impact slides, < when it
         * sticks: a high quantile, not the median */
        if (mu) mu[p] = nm ? fmin(fmax(quantile(rm, nm, 0.9), 0.01), 2.0) : NAN;
        if (n_events) n_events[p] = ne;
    }
    free(re), free(rm);
    return IMP_OK;
}

int imp_model_init_contact_law(imp_model *m, const imp_trajset *data, imp_law_init e_from, double e_value,
                               imp_law_init mu_from, double mu_value, imp_contact_law_start *start)
{
    if (!m || !data) return imp_fail(IMP_ERR_INVALID, "contact law: NULL model or data");
    const int P = m->geom.n_pairs;
    imp_contact_law_start s;
    memset(&s, 0, sizeof s);
    if (P == 0 || (!m->cfg.learn_restitution && !m->cfg.friction)) {
        if (start) *start = s;
        return IMP_OK;
    }
    double e_est[IMP_MAX_CONTACTS], mu_est[IMP_MAX_CONTACTS];
    int st = imp_cdl_estimate_contact_law(data, e_est, mu_est, s.n_events);
    if (st) return st;
    double *e = NULL, *mu = NULL;
    if (m->cfg.learn_restitution) {
        if (e_from == IMP_LAW_INIT_DEFAULT) e_from = isnan(data->geom.restitution) ? IMP_LAW_INIT_DATA : IMP_LAW_INIT_META;
        if (e_from == IMP_LAW_INIT_META && isnan(data->geom.restitution))
            return imp_fail(IMP_ERR_INVALID, "restitution init 'meta': the data's meta has no restitution");
        if (e_from == IMP_LAW_INIT_VALUE && !(e_value >= 1e-3 && e_value <= 1 - 1e-3))
            return imp_fail(IMP_ERR_INVALID, "restitution init: %g is out of range [0.001, 0.999]", e_value);
        for (int p = 0; p < P; p++)
            s.e[p] = e_from == IMP_LAW_INIT_META    ? fmin(fmax(data->geom.restitution, 0.01), 0.99)
                     : e_from == IMP_LAW_INIT_VALUE ? e_value
                     : isnan(e_est[p])              ? 0.5
                                                    : e_est[p];
        e = s.e;
    }
    if (m->cfg.friction) {
        if (mu_from == IMP_LAW_INIT_DEFAULT || mu_from == IMP_LAW_INIT_META) mu_from = IMP_LAW_INIT_DATA;
        if (mu_from == IMP_LAW_INIT_VALUE && !(mu_value >= 1e-4 && mu_value <= 10))
            return imp_fail(IMP_ERR_INVALID, "friction init: %g is out of range [0.0001, 10]", mu_value);
        for (int p = 0; p < P; p++)
            s.mu[p] = mu_from == IMP_LAW_INIT_VALUE ? mu_value : isnan(mu_est[p]) ? 0.3 : mu_est[p];
        mu = s.mu;
    }
    if ((st = imp_model_set_contact_law(m, e, mu))) return st;
    imp_model_get_contact_law(m, s.e, s.mu);
    s.e_from = e_from;
    s.mu_from = mu_from;
    if (start) *start = s;
    return IMP_OK;
}
