/* Newton-restitution impulses and closest-point projection of the
 * CD-Lagrange network, in the pairwise form of [A] eqs 41 and 48-50 with the
 * sign of eq 49 fixed (the post-impact normal velocity is -e times the
 * pre-impact one), and their reverse passes. Pairs with a tangent and a
 * friction coefficient get Coulomb friction through the impact strand's AP
 * Newton law (imp_ap_newton_forward / _backward, [ISRR] sec 2.1), which keeps
 * un+ = -e un- and adds the maximal tangential impulse in the cone.
 *
 * Events are per contact pair: the gate (a body's label or contact network)
 * says when, the pair activity (imp_pair_activity) says which of the body's
 * pairs; a pair's impulse and projection act only where its activity is
 * nonzero (2: forced by the non-penetration guard of rollouts, gate 1). */
#include "cdl_internal.h"
#include "impulse/impact_models.h"

static double normal_dot(const imp_contact_geometry *g, const imp_contact_pair *c, const double *v)
{
    return imp_contact_normal_velocity(g, (int)(c - g->pairs), v);
}

/* Adds s * dir to the relative-velocity adjoint of pair c (body j +, body i -). */
static void scatter_rel(const imp_contact_geometry *g, const imp_contact_pair *c, const double *dir, double s,
                        double *v_bar)
{
    if (!v_bar) return;
    for (int a = 0; a < g->dim; a++) {
        v_bar[c->body_j * g->dim + a] += s * dir[a];
        if (c->body_i != IMP_WALL) v_bar[c->body_i * g->dim + a] -= s * dir[a];
    }
}

/* The normal velocity bn the impulse removes from uS (un+ = uS - bn) and its
 * partial derivatives in (u-, uS, e):
 *   paper  ([A] eq 49): bn = uS + e u-, un+ = -e u- at the next half step
 *          (the impulse also cancels the force over the step);
 *   newton: bn = min((1 + e) u-, uS), un+ = max(uS - (1 + e) u-, 0): Newton's
 *          law on the half-step velocity with the force kept, or rest. */
static double removed_normal(int law, double e, double um, double uS, double d[3])
{
    if (law == IMP_CDL_IMPACT_NEWTON && (1.0 + e) * um < uS) {
        d[0] = 1.0 + e, d[1] = 0.0, d[2] = um;
        return (1.0 + e) * um;
    }
    if (law == IMP_CDL_IMPACT_NEWTON) {
        d[0] = 0.0, d[1] = 1.0, d[2] = 0.0;
        return uS;
    }
    d[0] = e, d[1] = 1.0, d[2] = um;
    return uS + e * um;
}

/* The frictional impulse of one pair: AP Newton (the impact strand's law,
 * imp_ap_newton_forward) with u = velocity before the impulse (vS) and bn
 * from removed_normal (paper: bn = uS_n + e u-_n, so that un+ = uS_n - bn =
 * -e u-_n). A separating pair (bn >= 0) or a configuration with no sliding
 * solution gets the frictionless impulse (-bn / Wnn normal only), as without
 * friction. Returns the branch (IMP_AP_*, or 2 for frictionless). */
static int friction_impulse(const imp_contact_geometry *g, int p, double wsum, double e, double mu, int law,
                            const double *vh, const double *vS, double W[4], double u[2], double *bn,
                            double dbn[3], double P[2])
{
    imp_contact_pair_compliance(g, p, wsum, W);
    u[0] = imp_contact_slip_velocity(g, p, vS);
    u[1] = imp_contact_normal_velocity(g, p, vS);
    *bn = removed_normal(law, e, imp_contact_normal_velocity(g, p, vh), u[1], dbn);
    int branch = 2;
    if (*bn < 0.0) {
        if (imp_ap_newton_forward(P, &branch, W, u, mu, *bn) == IMP_OK) return branch;
        imp_clear_error(); /* handled: the frictionless impulse below */
    }
    P[0] = 0.0;
    P[1] = -*bn / W[3];
    return 2;
}

int imp_pair_activity(const imp_contact_geometry *g, double tol, int nearest_if_none, const double *qt,
                      const double *v, const double *vh, unsigned char *act)
{
    /* reach[p]: 2 the pair is closing and penetrated at qt, 1 closing and
     * within tol, 0 neither */
    unsigned char reach[IMP_MAX_CONTACTS];
    double gap[IMP_MAX_CONTACTS];
    for (int p = 0; p < g->n_pairs; p++) {
        double um = imp_contact_normal_velocity(g, p, vh);
        /* n . (vh + h/2 a0) = 2 um - n . v: the current force pulls the pair closed */
        int closing = um < 0.0 || 2.0 * um - imp_contact_normal_velocity(g, p, v) < 0.0;
        gap[p] = imp_contact_gap(g, p, qt);
        reach[p] = !closing ? 0 : gap[p] <= 0.0 ? 2 : gap[p] <= tol ? 1 : 0;
        act[p] = 0;
    }
    /* nearest[k]: body k's pair with the smallest gap */
    int nearest[IMP_MAX_BODIES];
    for (int k = 0; k < g->n_bodies; k++) {
        nearest[k] = -1;
        for (int p = 0; p < g->n_pairs; p++)
            if ((g->pairs[p].body_j == k || g->pairs[p].body_i == k) && (nearest[k] < 0 || gap[p] < gap[nearest[k]]))
                nearest[k] = p;
    }
    for (int k = 0; k < g->n_bodies; k++) {
        int n = 0, best = 0, near = nearest[k];
        for (int p = 0; p < g->n_pairs; p++) {
            const imp_contact_pair *c = &g->pairs[p];
            if (c->body_j != k && c->body_i != k) continue;
            n++;
            if (reach[p] > best) best = reach[p];
        }
        if (n > 1 && !best && nearest_if_none && near >= 0 && g->pairs[near].kind == IMP_PAIR_SPHERE) {
            /* a disk-disk pair (sphere) as a fallback only when it is the
               other disk's nearest pair too: otherwise it would push the
               other disk whenever that one is gated, however far apart */
            const imp_contact_pair *c = &g->pairs[near];
            if (nearest[c->body_j == k ? c->body_i : c->body_j] != near) near = -1;
        }
        if (n == 1 || (n > 1 && !best && nearest_if_none)) {
            if (near >= 0) act[near] = 1; /* the body's only pair, or its nearest */
        } else
            for (int p = 0; p < g->n_pairs; p++)
                if (reach[p] == best && best && (g->pairs[p].body_j == k || g->pairs[p].body_i == k)) act[p] = 1;
    }
    int n = 0;
    for (int p = 0; p < g->n_pairs; p++) n += act[p];
    return n;
}

/* The gates of pair p's two bodies under its activity a (0 off, 1 the
 * bodies' gates, 2 forced on). */
static void pair_gates(const imp_contact_pair *c, const double *gate, int a, double *gj, double *gi)
{
    *gj = a == 2 ? 1.0 : a ? gate[c->body_j] : 0.0;
    *gi = c->body_i == IMP_WALL ? 0.0 : a == 2 ? 1.0 : a ? gate[c->body_i] : 0.0;
}

void imp_impulse_forward(const imp_contact_geometry *g, const double *w, const double *e, const double *fric,
                         int law, const unsigned char *act, const double *gate, const double *vh, const double *vS,
                         double *dv)
{
    for (int p = 0; p < g->n_pairs; p++) {
        const imp_contact_pair *c = &g->pairs[p];
        int wall = c->body_i == IMP_WALL, ap = act ? act[p] : 1;
        if (!ap) continue;
        double gj, gi;
        pair_gates(c, gate, ap, &gj, &gi);
        double wi = wall ? 0.0 : w[c->body_i], wj = w[c->body_j];
        if (fric && imp_contact_pair_has_tangent(g, p)) {
            double W[4], u[2], bn, dbn[3], P[2];
            friction_impulse(g, p, wi + wj, e[p], fric[p], law, vh, vS, W, u, &bn, dbn, P);
            for (int a = 0; a < g->dim; a++) {
                double dir = P[0] * c->tangent[a] + P[1] * c->normal[a];
                dv[c->body_j * g->dim + a] += gj * wj * dir;
                if (!wall) dv[c->body_i * g->dim + a] += gi * wi * (P[0] * imp_contact_tangent_i(g, p, a) - P[1] * c->normal[a]);
            }
            continue;
        }
        double mu_red = 1.0 / (wi + wj); /* H_kk, the reduced mass ([A] eq 43) */
        double d[3], um = normal_dot(g, c, vh), uS = normal_dot(g, c, vS);
        double P = mu_red * (law == IMP_CDL_IMPACT_PAPER ? -e[p] * um - uS : -removed_normal(law, e[p], um, uS, d));
        for (int a = 0; a < g->dim; a++) {
            dv[c->body_j * g->dim + a] += gj * P * wj * c->normal[a];
            if (!wall) dv[c->body_i * g->dim + a] -= gi * P * wi * c->normal[a];
        }
    }
}

static void friction_impulse_backward(const imp_contact_geometry *g, int p, double wi, double wj, double e,
                                      double mu, int law, double gj, double gi, const double *vh, const double *vS,
                                      const double *dv_bar, double *vh_bar, double *vS_bar, double *gate_bar,
                                      double *w_bar, double *e_bar, double *mu_bar)
{
    const imp_contact_pair *c = &g->pairs[p];
    int wall = c->body_i == IMP_WALL;
    double W[4], u[2], bn, dbn[3], P[2];
    int branch = friction_impulse(g, p, wi + wj, e, mu, law, vh, vS, W, u, &bn, dbn, P);
    /* dv_j += gate_j wj (Pt t + Pn n), dv_i -= gate_i wi (Pt t + Pn n) */
    double tj = 0.0, nj = 0.0, ti = 0.0, ni = 0.0;
    for (int a = 0; a < g->dim; a++) {
        tj += c->tangent[a] * dv_bar[c->body_j * g->dim + a];
        nj += c->normal[a] * dv_bar[c->body_j * g->dim + a];
        if (!wall) {
            ti -= imp_contact_tangent_i(g, p, a) * dv_bar[c->body_i * g->dim + a];
            ni += c->normal[a] * dv_bar[c->body_i * g->dim + a];
        }
    }
    double P_bar[2] = {gj * wj * tj - gi * wi * ti, gj * wj * nj - gi * wi * ni};
    if (gate_bar) {
        gate_bar[c->body_j] += wj * (P[0] * tj + P[1] * nj);
        if (!wall) gate_bar[c->body_i] -= wi * (P[0] * ti + P[1] * ni);
    }
    double W_bar[4] = {0, 0, 0, 0}, u_bar[2] = {0, 0}, bn_bar = 0.0, m_bar = 0.0;
    if (branch == 2) {
        /* P = (0, -bn / Wnn) */
        bn_bar = -P_bar[1] / W[3];
        W_bar[3] = -P_bar[1] * P[1] / W[3];
    } else {
        imp_ap_newton_backward(W_bar, u_bar, &m_bar, &bn_bar, P_bar, P, branch, W, mu, bn);
    }
    if (mu_bar) *mu_bar += m_bar;
    /* bn(u-_n, uS_n, e) */
    if (e_bar) *e_bar += bn_bar * dbn[2];
    scatter_rel(g, c, c->normal, bn_bar * dbn[0], vh_bar);
    scatter_rel(g, c, c->normal, bn_bar * dbn[1] + u_bar[1], vS_bar);
    if (vS_bar) /* slip = t . v_j + row_i . v_i (imp_contact_tangent_i) */
        for (int a = 0; a < g->dim; a++) {
            vS_bar[c->body_j * g->dim + a] += u_bar[0] * c->tangent[a];
            if (!wall) vS_bar[c->body_i * g->dim + a] += u_bar[0] * imp_contact_tangent_i(g, p, a);
        }
    if (w_bar) {
        /* W = (wi + wj) W1 with W1 the compliance of unit inverse mass */
        double W1[4];
        imp_contact_pair_compliance(g, p, 1.0, W1);
        double ws_bar = W_bar[0] * W1[0] + W_bar[1] * W1[1] + W_bar[2] * W1[2] + W_bar[3] * W1[3];
        w_bar[c->body_j] += gj * (P[0] * tj + P[1] * nj) + ws_bar;
        if (!wall) w_bar[c->body_i] += -gi * (P[0] * ti + P[1] * ni) + ws_bar;
    }
}

void imp_impulse_backward(const imp_contact_geometry *g, const double *w, const double *e, const double *fric,
                          int law, const unsigned char *act, const double *gate, const double *vh, const double *vS,
                          const double *dv_bar, double *vh_bar, double *vS_bar, double *gate_bar, double *w_bar,
                          double *e_bar, double *fric_bar)
{
    for (int p = 0; p < g->n_pairs; p++) {
        const imp_contact_pair *c = &g->pairs[p];
        int wall = c->body_i == IMP_WALL, ap = act ? act[p] : 1;
        if (!ap) continue;
        double gj, gi;
        pair_gates(c, gate, ap, &gj, &gi);
        double *gb = ap == 2 ? NULL : gate_bar; /* forced: the gates do not enter */
        double wi = wall ? 0.0 : w[c->body_i], wj = w[c->body_j];
        if (fric && imp_contact_pair_has_tangent(g, p)) {
            friction_impulse_backward(g, p, wi, wj, e[p], fric[p], law, gj, gi, vh, vS, dv_bar, vh_bar, vS_bar, gb,
                                      w_bar, e_bar ? e_bar + p : NULL, fric_bar ? fric_bar + p : NULL);
            continue;
        }
        double mu_red = 1.0 / (wi + wj);
        double um = normal_dot(g, c, vh), uS = normal_dot(g, c, vS);
        double d[3] = {e[p], 1.0, um}; /* d bn / d(u-, uS, e) */
        double bracket = law == IMP_CDL_IMPACT_PAPER ? -e[p] * um - uS : -removed_normal(law, e[p], um, uS, d);
        double P = mu_red * bracket;
        /* projections of dv_bar on the normal, per body */
        double nj = 0.0, ni = 0.0;
        for (int a = 0; a < g->dim; a++) {
            nj += c->normal[a] * dv_bar[c->body_j * g->dim + a];
            if (!wall) ni += c->normal[a] * dv_bar[c->body_i * g->dim + a];
        }
        double P_bar = gj * wj * nj - gi * wi * ni;
        if (gb) {
            gb[c->body_j] += P * wj * nj;
            if (!wall) gb[c->body_i] -= P * wi * ni;
        }
        double mu_bar_red = P_bar * bracket;
        if (w_bar) {
            w_bar[c->body_j] += gj * P * nj - mu_red * mu_red * mu_bar_red;
            if (!wall) w_bar[c->body_i] += -gi * P * ni - mu_red * mu_red * mu_bar_red;
        }
        if (e_bar) e_bar[p] += -P_bar * mu_red * d[2];
        double um_bar = -P_bar * mu_red * d[0], uS_bar = -P_bar * mu_red * d[1];
        scatter_rel(g, c, c->normal, um_bar, vh_bar);
        scatter_rel(g, c, c->normal, uS_bar, vS_bar);
    }
}

void imp_project_forward(const imp_contact_geometry *g, const double *w, const unsigned char *act,
                         const double *gate, double *q, unsigned char *active)
{
    for (int p = 0; p < g->n_pairs; p++) {
        const imp_contact_pair *c = &g->pairs[p];
        int wall = c->body_i == IMP_WALL, ap = act ? act[p] : 1;
        int on = ap == 2 || (ap && gate[c->body_j] >= 0.5 && (wall || gate[c->body_i] >= 0.5));
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
