/* Newton-restitution impulses and closest-point projection of the
 * CD-Lagrange network, in the pairwise form of [A] eqs 41 and 48-50 with the
 * sign of eq 49 fixed (the post-impact normal velocity is -e times the
 * pre-impact one), and their reverse passes. */
#include "cdl_internal.h"

static double normal_dot(const imp_contact_geometry *g, const imp_contact_pair *c, const double *v)
{
    double s = 0.0;
    for (int a = 0; a < g->dim; a++) {
        double rel = v[c->body_j * g->dim + a] - (c->body_i == IMP_WALL ? 0.0 : v[c->body_i * g->dim + a]);
        s += c->normal[a] * rel;
    }
    return s;
}

void imp_impulse_forward(const imp_contact_geometry *g, const double *w, const double *gate,
                         const double *vh, const double *vS, double *dv)
{
    for (int p = 0; p < g->n_pairs; p++) {
        const imp_contact_pair *c = &g->pairs[p];
        int wall = c->body_i == IMP_WALL;
        double wi = wall ? 0.0 : w[c->body_i], wj = w[c->body_j];
        double mu = 1.0 / (wi + wj); /* H_kk, the reduced mass ([A] eq 43) */
        double P = mu * (-g->restitution * normal_dot(g, c, vh) - normal_dot(g, c, vS));
        for (int a = 0; a < g->dim; a++) {
            dv[c->body_j * g->dim + a] += gate[c->body_j] * P * wj * c->normal[a];
            if (!wall) dv[c->body_i * g->dim + a] -= gate[c->body_i] * P * wi * c->normal[a];
        }
    }
}

void imp_impulse_backward(const imp_contact_geometry *g, const double *w, const double *gate,
                          const double *vh, const double *vS, const double *dv_bar, double *vh_bar,
                          double *vS_bar, double *gate_bar, double *w_bar)
{
    for (int p = 0; p < g->n_pairs; p++) {
        const imp_contact_pair *c = &g->pairs[p];
        int wall = c->body_i == IMP_WALL;
        double wi = wall ? 0.0 : w[c->body_i], wj = w[c->body_j];
        double mu = 1.0 / (wi + wj);
        double um = normal_dot(g, c, vh), uS = normal_dot(g, c, vS);
        double bracket = -g->restitution * um - uS;
        double P = mu * bracket;
        /* projections of dv_bar on the normal, per body */
        double nj = 0.0, ni = 0.0;
        for (int a = 0; a < g->dim; a++) {
            nj += c->normal[a] * dv_bar[c->body_j * g->dim + a];
            if (!wall) ni += c->normal[a] * dv_bar[c->body_i * g->dim + a];
        }
        double P_bar = gate[c->body_j] * wj * nj - (wall ? 0.0 : gate[c->body_i] * wi * ni);
        if (gate_bar) {
            gate_bar[c->body_j] += P * wj * nj;
            if (!wall) gate_bar[c->body_i] -= P * wi * ni;
        }
        double mu_bar = P_bar * bracket;
        if (w_bar) {
            w_bar[c->body_j] += gate[c->body_j] * P * nj - mu * mu * mu_bar;
            if (!wall) w_bar[c->body_i] += -gate[c->body_i] * P * ni - mu * mu * mu_bar;
        }
        double um_bar = -P_bar * mu * g->restitution, uS_bar = -P_bar * mu;
        for (int a = 0; a < g->dim; a++) {
            if (vh_bar) {
                vh_bar[c->body_j * g->dim + a] += um_bar * c->normal[a];
                if (!wall) vh_bar[c->body_i * g->dim + a] -= um_bar * c->normal[a];
            }
            if (vS_bar) {
                vS_bar[c->body_j * g->dim + a] += uS_bar * c->normal[a];
                if (!wall) vS_bar[c->body_i * g->dim + a] -= uS_bar * c->normal[a];
            }
        }
    }
}

void imp_project_forward(const imp_contact_geometry *g, const double *w, const double *gate,
                         double *q, unsigned char *active)
{
    for (int p = 0; p < g->n_pairs; p++) {
        const imp_contact_pair *c = &g->pairs[p];
        int wall = c->body_i == IMP_WALL;
        int on = gate[c->body_j] >= 0.5 && (wall || gate[c->body_i] >= 0.5);
        double gap = imp_contact_gap(g, p, q);
        active[p] = on && gap < 0.0;
        if (!active[p]) continue;
        double wi = wall ? 0.0 : w[c->body_i], wj = w[c->body_j];
        double s = gap / (wi + wj);
        for (int a = 0; a < g->dim; a++) {
            q[c->body_j * g->dim + a] -= s * wj * c->normal[a];
            if (!wall) q[c->body_i * g->dim + a] += s * wi * c->normal[a];
        }
    }
}

void imp_project_backward(const imp_contact_geometry *g, const double *w, const double *q_in,
                          const unsigned char *active, double *q_bar, double *w_bar)
{
    /* pairs are projected in order, so reverse them in reverse order; the
     * gaps of different pairs here never share a body in our systems, so
     * the pre-projection gap of each pair is its gap at q_in. */
    for (int p = g->n_pairs - 1; p >= 0; p--) {
        if (!active[p]) continue;
        const imp_contact_pair *c = &g->pairs[p];
        int wall = c->body_i == IMP_WALL;
        double wi = wall ? 0.0 : w[c->body_i], wj = w[c->body_j];
        double gap = imp_contact_gap(g, p, q_in);
        double den = wi + wj, s = gap / den;
        double aj = 0.0, ai = 0.0;
        for (int a = 0; a < g->dim; a++) {
            aj += c->normal[a] * q_bar[c->body_j * g->dim + a];
            if (!wall) ai += c->normal[a] * q_bar[c->body_i * g->dim + a];
        }
        double s_bar = -wj * aj + (wall ? 0.0 : wi * ai);
        double gap_bar = s_bar / den;
        if (w_bar) {
            w_bar[c->body_j] += -s * aj - s_bar * gap / (den * den);
            if (!wall) w_bar[c->body_i] += s * ai - s_bar * gap / (den * den);
        }
        for (int a = 0; a < g->dim; a++) {
            q_bar[c->body_j * g->dim + a] += gap_bar * c->normal[a];
            if (!wall) q_bar[c->body_i * g->dim + a] -= gap_bar * c->normal[a];
        }
    }
}
