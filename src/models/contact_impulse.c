/* The impulses and closest-point projection of the CD-Lagrange network, and
 * their reverse passes. Each active pair's impulse comes from the contact
 * module's solver (src/contact/solve.c, imp_contact_solve_law_forward), one
 * pair at a time as in [A] eqs 48-50, with the paper's law ([A] eq 49, sign
 * fixed: the post-impact normal velocity is -e times the half-step one,
 * IMP_CONTACT_LAW_PAPER) or CD-Lagrange's Newton law
 * (IMP_CONTACT_LAW_HALFSTEP), and Coulomb friction for pairs with a tangent
 * and a friction coefficient (docs/derivations/contact.md sec 11).
 *
 * Events are per contact pair: the gate (a body's label or contact network)
 * says when, the pair activity (imp_pair_activity) says which of the body's
 * pairs; a pair's impulse and projection act only where its activity is
 * nonzero (2: forced by the non-penetration guard of rollouts, gate 1). */
#include "cdl_internal.h"
#include "impulse/contact.h"

#include <math.h>
#include <string.h>

int imp_pair_activity(const imp_contact_geometry *g, double tol, int nearest_if_none, const double *qt,
                      const double *v, const double *vh, unsigned char *act)
{
    /* reach[p]: 2 the pair is closing and penetrated at qt, 1 closing and
     * within tol, 0 neither; the per-body choice is the contact module's
     * (imp_contact_choose) */
    unsigned char reach[IMP_MAX_CONTACTS];
    double gap[IMP_MAX_CONTACTS];
    int bi[IMP_MAX_CONTACTS], bj[IMP_MAX_CONTACTS];
    for (int p = 0; p < g->n_pairs; p++) {
        double um = imp_contact_normal_velocity(g, p, vh);
        /* n . (vh + h/2 a0) = 2 um - n . v: the current force pulls the pair closed */
        int closing = um < 0.0 || 2.0 * um - imp_contact_normal_velocity(g, p, v) < 0.0;
        gap[p] = imp_contact_gap(g, p, qt);
        reach[p] = !closing ? 0 : gap[p] <= 0.0 ? 2 : gap[p] <= tol ? 1 : 0;
        bi[p] = g->pairs[p].body_i, bj[p] = g->pairs[p].body_j;
    }
    int nearest[IMP_MAX_BODIES];
    int n = imp_contact_choose(g->n_bodies, g->n_pairs, bi, bj, reach, gap, NULL,
                               IMP_CONTACT_CHOOSE_ONLY | (nearest_if_none ? IMP_CONTACT_CHOOSE_NEAREST : 0), act,
                               nearest);
    if (!imp_contact_geometry_has_spheres(g)) return n;
    /* a disk-disk pair (sphere) chosen only as a body's nearest stays only
       when it is the other disk's nearest too: otherwise it would push the
       other disk whenever that one is gated, however far apart */
    int count[IMP_MAX_BODIES] = {0}, best[IMP_MAX_BODIES] = {0};
    for (int p = 0; p < g->n_pairs; p++)
        for (int side = 0; side < 2; side++) {
            int k = side ? bi[p] : bj[p];
            if (k == IMP_WALL) continue;
            count[k]++;
            if (reach[p] > best[k]) best[k] = reach[p];
        }
    for (int p = 0; p < g->n_pairs; p++) {
        if (!act[p] || g->pairs[p].kind != IMP_PAIR_SPHERE) continue;
        int a = bi[p], b = bj[p];
        int by_reach = (best[a] && reach[p] == best[a]) || (best[b] && reach[p] == best[b]);
        int only = count[a] == 1 || count[b] == 1, mutual = nearest[a] == p && nearest[b] == p;
        if (!by_reach && !only && !mutual) act[p] = 0, n--;
    }
    return n;
}

/* The gates of pair p's two bodies under its activity a (0 off, 1 the
 * bodies' gates, 2 forced on). */
static void pair_gates(const imp_contact_pair *c, const double *gate, int a, double *gj, double *gi)
{
    *gj = a == 2 ? 1.0 : a ? gate[c->body_j] : 0.0;
    *gi = c->body_i == IMP_WALL ? 0.0 : a == 2 ? 1.0 : a ? gate[c->body_i] : 0.0;
}

/* One active pair's impulse from the contact module's solver: rows 1
 * (normal) or 2 (normal, tangent: friction), its contact-space compliance
 * A = J M^-1 J^T with M^-1 = diag(w), the velocities u- = J vS the
 * impulse is added to, the restitution reference ur = J vh, and the
 * solution. The pairs of a step are solved one by one, each from the same
 * vh and vS (the pairwise form of [A] eqs 48-50): see
 * docs/derivations/contact.md sec 11 for why not together. */
typedef struct pair_solve {
    int p, rows;
    double A[4], u[2], ur[2], e, mu;
    imp_contact_solution sol;
} pair_solve;

static double dot(const double *x, const double *y, int d)
{
    double s = 0.0;
    for (int a = 0; a < d; a++) s += x[a] * y[a];
    return s;
}

static const double *row_dir(const imp_contact_pair *c, int r) { return r ? c->tangent : c->normal; }

/* w_i + w_j of pair c: A = (w_i + w_j) (dir_r . dir_s) */
static double pair_wsum(const imp_contact_pair *c, const double *w)
{
    return w[c->body_j] + (c->body_i == IMP_WALL ? 0.0 : w[c->body_i]);
}

/* Assemble and solve pair S->p (S->rows set). The law holds exactly (no
 * regularization) unless A is singular, where the solver's default
 * regularization makes the impulse unique. A failed solve with friction is
 * repeated without it (the normal row alone, as where no impulse in the cone
 * exists); one that fails again (non-finite velocities of a diverging
 * training) gives a NaN impulse. */
static void pair_impulse(const imp_contact_geometry *g, const double *w, const double *e, const double *fric, int law,
                         const double *vh, const double *vS, pair_solve *S)
{
    const imp_contact_pair *c = &g->pairs[S->p];
    double wsum = pair_wsum(c, w);
    S->e = e[S->p];
    S->mu = fric ? fric[S->p] : 0.0;
    int law_c = law == IMP_CDL_IMPACT_NEWTON  ? IMP_CONTACT_LAW_HALFSTEP
                : law == IMP_CDL_IMPACT_EVENT ? IMP_CONTACT_LAW_NEWTON
                                              : IMP_CONTACT_LAW_PAPER;
    for (int attempt = 0;; attempt++) {
        int R = S->rows;
        for (int r = 0; r < R; r++) {
            S->u[r] = imp_contact_row_velocity(g, S->p, r, vS);
            S->ur[r] = imp_contact_row_velocity(g, S->p, r, vh);
            for (int q = 0; q < R; q++) S->A[r * R + q] = wsum * dot(row_dir(c, r), row_dir(c, q), g->dim);
        }
        imp_contact_solve_opts o;
        imp_contact_solve_opts_default(&o);
        if (attempt % 2 == 0) o.regularization = 0.0;
        double work[32];
        int iwork[4];
        if (imp_contact_solve_law_forward(&S->sol, S->A, S->u, S->ur, &S->e, &S->mu, 1, R, law_c, &o, work, iwork) ==
            IMP_OK)
            return;
        imp_clear_error(); /* handled: regularized, without friction, else NaN */
        if (attempt % 2 == 0) continue;
        if (R == 1) {
            S->sol.n = 1, S->sol.dim = 1, S->sol.lambda[0] = NAN;
            return;
        }
        S->rows = 1;
    }
}

/* Pair p's solve set up when it is active; rows 2 with friction (fric
 * non-NULL and a tangent), else 1. */
static int pair_setup(const imp_contact_geometry *g, const double *fric, const unsigned char *act, int p,
                      pair_solve *S)
{
    if (act && !act[p]) return 0;
    S->p = p;
    S->rows = fric && imp_contact_pair_has_tangent(g, p) ? 2 : 1;
    return 1;
}

void imp_impulse_forward(const imp_contact_geometry *g, const double *w, const double *e, const double *fric,
                         int law, const unsigned char *act, const double *gate, const double *vh, const double *vS,
                         double *dv)
{
    pair_solve S;
    for (int p = 0; p < g->n_pairs; p++) {
        if (!pair_setup(g, fric, act, p, &S)) continue;
        const imp_contact_pair *c = &g->pairs[p];
        double gj, gi, dir[IMP_MAX_DIM] = {0, 0, 0}, dir_i[IMP_MAX_DIM] = {0, 0, 0};
        pair_gates(c, gate, act ? act[p] : 1, &gj, &gi);
        if (gj == 0.0 && gi == 0.0) continue; /* gated off: no impulse to apply */
        pair_impulse(g, w, e, fric, law, vh, vS, &S);
        for (int r = 0; r < S.rows; r++)
            for (int a = 0; a < g->dim; a++) {
                dir[a] += S.sol.lambda[r] * row_dir(c, r)[a];
                dir_i[a] += S.sol.lambda[r] * imp_contact_row_i(g, p, r, a);
            }
        for (int a = 0; a < g->dim; a++) {
            dv[c->body_j * g->dim + a] += gj * w[c->body_j] * dir[a];
            if (c->body_i != IMP_WALL) dv[c->body_i * g->dim + a] -= gi * w[c->body_i] * dir_i[a];
        }
    }
}

void imp_impulse_backward(const imp_contact_geometry *g, const double *w, const double *e, const double *fric,
                          int law, const unsigned char *act, const double *gate, const double *vh, const double *vS,
                          const double *dv_bar, double *vh_bar, double *vS_bar, double *gate_bar, double *w_bar,
                          double *e_bar, double *fric_bar)
{
    const int d = g->dim;
    pair_solve S;
    for (int p = 0; p < g->n_pairs; p++) {
        if (!pair_setup(g, fric, act, p, &S)) continue;
        const imp_contact_pair *c = &g->pairs[p];
        int ap = act ? act[p] : 1, wall = c->body_i == IMP_WALL;
        double gj, gi;
        pair_gates(c, gate, ap, &gj, &gi);
        double *gb = ap == 2 ? NULL : gate_bar; /* forced: the gates do not enter */
        if (gj == 0.0 && gi == 0.0 && !gb) continue; /* nothing depends on the impulse */
        pair_impulse(g, w, e, fric, law, vh, vS, &S);
        const int R = S.rows;
        /* dv_j += gate_j w_j sum_r lambda_r dir_r, dv_i -= gate_i w_i (...) */
        double lb[2], dj = 0.0, di = 0.0;
        for (int r = 0; r < R; r++) {
            double pj = dot(row_dir(c, r), dv_bar + c->body_j * d, d);
            double pi = 0.0;
            for (int a = 0; !wall && a < d; a++) pi += imp_contact_row_i(g, p, r, a) * dv_bar[c->body_i * d + a];
            lb[r] = gj * w[c->body_j] * pj - (wall ? 0.0 : gi * w[c->body_i] * pi);
            dj += S.sol.lambda[r] * pj, di += S.sol.lambda[r] * pi;
        }
        if (gb) {
            gb[c->body_j] += w[c->body_j] * dj;
            if (!wall) gb[c->body_i] -= w[c->body_i] * di;
        }
        if (w_bar) {
            w_bar[c->body_j] += gj * dj;
            if (!wall) w_bar[c->body_i] -= gi * di;
        }
        double Ab[4] = {0, 0, 0, 0}, ub[2] = {0, 0}, urb[2] = {0, 0}, eb = 0.0, mb = 0.0, work[32];
        int iwork[4];
        if (!isfinite(S.sol.lambda[0]) || imp_contact_solve_law_backward(Ab, ub, urb, &eb, &mb, lb, &S.sol, S.A, S.u,
                                                                         S.ur, &S.e, &S.mu, work, iwork) != IMP_OK) {
            /* the forward gave NaN, or its branch system is singular: NaN gradients */
            imp_clear_error();
            eb = NAN;
        }
        if (e_bar) e_bar[p] += eb;
        if (fric_bar && R > 1) fric_bar[p] += mb;
        double ws_bar = 0.0; /* A = (w_i + w_j) (dir_r . dir_q) */
        for (int r = 0; r < R; r++) {
            imp_contact_row_backward(g, p, r, ub[r], vS_bar);
            imp_contact_row_backward(g, p, r, urb[r], vh_bar);
            for (int q = 0; q < R; q++) ws_bar += Ab[r * R + q] * dot(row_dir(c, r), row_dir(c, q), d);
        }
        if (w_bar) {
            w_bar[c->body_j] += ws_bar;
            if (!wall) w_bar[c->body_i] += ws_bar;
        }
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
        imp_contact_gap_backward(g, p, q_in, gap_bar, q_bar);
    }
}

/* ---- impacts at their event time (imp_cdl_config.impact_timing event) ---- */

/* Pair p's event (only: p alone active, with its activity): its time tau
 * (imp_contact_time_of_impact), the velocities at it vev = v + tau a0 (D), and its
 * velocity jump (D, zeroed first). */
static double event_pair(const imp_contact_geometry *g, const double *w, const double *e, const double *fric, int p,
                         const unsigned char *only, const double *gate, double h, const double *q, const double *v,
                         const double *a0, int D, double dtau[3], double *vev, double *jump)
{
    double tau = imp_contact_time_of_impact(g, p, q, v, a0, h, dtau);
    for (int i = 0; i < D; i++) vev[i] = v[i] + tau * a0[i], jump[i] = 0.0;
    imp_impulse_forward(g, w, e, fric, IMP_CDL_IMPACT_EVENT, only, gate, vev, vev, jump);
    return tau;
}

/* The adjoints of imp_event_backward (NULL in imp_event_forward). */
typedef struct event_adjoint {
    const double *dv_bar, *dq_bar;
    double *q_bar, *v_bar, *a0_bar, *gate_bar, *w_bar, *e_bar, *fric_bar;
} event_adjoint;

/* Every active pair's event, forward (adj NULL: dv, dq accumulate) or reverse. */
static void event_pass(const imp_contact_geometry *g, const double *w, const double *e, const double *fric,
                       const unsigned char *act, const double *gate, double h, const double *q, const double *v,
                       const double *a0, double *dv, double *dq, const event_adjoint *adj)
{
    const int D = g->n_bodies * g->dim;
    for (int p = 0; p < g->n_pairs; p++) {
        if (!act[p]) continue;
        unsigned char only[IMP_MAX_CONTACTS] = {0};
        only[p] = act[p];
        double vev[IMP_MAX_BODIES * IMP_MAX_DIM], jump[IMP_MAX_BODIES * IMP_MAX_DIM], dtau[3];
        double tau = event_pair(g, w, e, fric, p, only, gate, h, q, v, a0, D, dtau, vev, jump);
        if (!adj) {
            for (int i = 0; i < D; i++) dv[i] += jump[i], dq[i] += (h - tau) * jump[i];
            continue;
        }
        /* dv += jump, dq += (h - tau) jump */
        double jb[IMP_MAX_BODIES * IMP_MAX_DIM], vevb[IMP_MAX_BODIES * IMP_MAX_DIM] = {0}, tau_bar = 0.0;
        for (int i = 0; i < D; i++) jb[i] = adj->dv_bar[i] + (h - tau) * adj->dq_bar[i], tau_bar -= jump[i] * adj->dq_bar[i];
        imp_impulse_backward(g, w, e, fric, IMP_CDL_IMPACT_EVENT, only, gate, vev, vev, jb, vevb, vevb, adj->gate_bar,
                             adj->w_bar, adj->e_bar, adj->fric_bar);
        /* vev = v + tau a0 */
        for (int i = 0; i < D; i++) {
            adj->v_bar[i] += vevb[i];
            adj->a0_bar[i] += tau * vevb[i];
            tau_bar += a0[i] * vevb[i];
        }
        /* tau(c, b, a): c the gap at q, b the normal velocity of v, a half
         * that of a0, all along the gap's row (linear pairs) */
        imp_contact_gap_backward(g, p, q, tau_bar * dtau[0], adj->q_bar);
        imp_contact_gap_backward(g, p, q, tau_bar * dtau[1], adj->v_bar);
        imp_contact_gap_backward(g, p, q, 0.5 * tau_bar * dtau[2], adj->a0_bar);
    }
}

/* sum over the bodies of x_bar . (J x), J the rotation generator
 * (x, y) -> (-y, x) of each body's position (spin coordinates do not turn) */
static double turn(const double *x_bar, const double *x, int D, int d)
{
    double s = 0.0;
    for (int o = 0; o < D; o += d) s += x_bar[o] * -x[o + 1] + x_bar[o + 1] * x[o];
    return s;
}

/* The impacts of a step in the order they happen (imp_event_forward): which
 * pairs act, with which activity, each one's inputs (q_k, v_k): the step's
 * start shifted by the impacts before it, so that its flight
 * q_k + s v_k + s^2/2 a0 is the step's piecewise flight after them, and its
 * outputs: the velocity jump and the shift (h - tau) jump (event_pass). */
typedef struct event_seq {
    int n, order[IMP_MAX_CONTACTS];
    unsigned char act[IMP_MAX_CONTACTS];
    double q[IMP_MAX_CONTACTS][IMP_MAX_BODIES * IMP_MAX_DIM], v[IMP_MAX_CONTACTS][IMP_MAX_BODIES * IMP_MAX_DIM];
    double jump[IMP_MAX_CONTACTS][IMP_MAX_BODIES * IMP_MAX_DIM], dq[IMP_MAX_CONTACTS][IMP_MAX_BODIES * IMP_MAX_DIM];
} event_seq;

/* Orders a step's impacts (docs/derivations/contact.md sec 12): repeatedly
 * the pair with the earliest event time along the flight after the impacts
 * so far acts (event_pass of that pair alone), and the flight goes on with
 * its velocity jump dv from its time tau: q_k = q + DQ - h DV, v_k = v + DV
 * with DV, DQ the sums of the earlier jumps and of (h - tau) times them.
 * Candidates: the active pairs (act), and, once an impact changed the
 * velocity of one of its bodies, a pair whose bodies are all gated on
 * (gate >= 0.5; a chain: a disk knocked into a third body or a wall in
 * the same step). A pair one of whose bodies an earlier impact moved acts
 * only if it is reached within the step (tau < h); a pair whose bodies no
 * impact moved acts as each pair alone (at h when not reached), so a step
 * whose impacts share no body gives each pair's event from the step's
 * start, as before. Each pair acts at most once in a step. DV, DQ (D)
 * receive the sums. */
static void event_order(const imp_contact_geometry *g, const double *w, const double *e, const double *fric,
                        const unsigned char *act, const double *gate, double h, const double *q, const double *v,
                        const double *a0, event_seq *seq, double *DV, double *DQ)
{
    const int D = g->n_bodies * g->dim, P = g->n_pairs;
    unsigned char done[IMP_MAX_CONTACTS] = {0};
    int moved[IMP_MAX_BODIES] = {0};
    memset(DV, 0, (size_t)D * sizeof(double));
    memset(DQ, 0, (size_t)D * sizeof(double));
    seq->n = 0;
    for (;;) {
        double qc[IMP_MAX_BODIES * IMP_MAX_DIM], vc[IMP_MAX_BODIES * IMP_MAX_DIM], best_t = 0.0;
        for (int i = 0; i < D; i++) qc[i] = q[i] + DQ[i] - h * DV[i], vc[i] = v[i] + DV[i];
        int best = -1;
        unsigned char best_a = 0;
        for (int p = 0; p < P; p++) {
            if (done[p]) continue;
            const imp_contact_pair *c = &g->pairs[p];
            const int wall = c->body_i == IMP_WALL;
            const int shared = moved[c->body_j] || (!wall && moved[c->body_i]);
            unsigned char a = act[p];
            if (!a && (!shared || gate[c->body_j] < 0.5 || (!wall && gate[c->body_i] < 0.5))) continue;
            if (!a) a = 1;
            double dtau[3], t = imp_contact_time_of_impact(g, p, qc, vc, a0, h, dtau);
            if (shared && !(t < h)) continue; /* not reached after the impacts before it */
            if (!act[p] && !(t < h)) continue;
            if (best < 0 || t < best_t) best = p, best_t = t, best_a = a;
        }
        if (best < 0) return;
        const int k = seq->n++;
        seq->order[k] = best, seq->act[k] = best_a;
        memcpy(seq->q[k], qc, (size_t)D * sizeof(double));
        memcpy(seq->v[k], vc, (size_t)D * sizeof(double));
        done[best] = 1;
        unsigned char only[IMP_MAX_CONTACTS] = {0};
        only[best] = best_a;
        double *jump = seq->jump[k], *dq = seq->dq[k];
        memset(jump, 0, (size_t)D * sizeof(double));
        memset(dq, 0, (size_t)D * sizeof(double));
        event_pass(g, w, e, fric, only, gate, h, qc, vc, a0, jump, dq, NULL);
        for (int i = 0; i < D; i++) {
            DV[i] += jump[i], DQ[i] += dq[i];
            if (jump[i] != 0.0) moved[i / g->dim] = 1;
        }
    }
}

void imp_event_forward(const imp_contact_geometry *g, const double *w, const double *e, const double *fric,
                       const unsigned char *act, const double *gate, double h, const double *q, const double *v,
                       const double *a0, double *dv, double *dq, unsigned char *acted)
{
    event_seq seq;
    double DV[IMP_MAX_BODIES * IMP_MAX_DIM], DQ[IMP_MAX_BODIES * IMP_MAX_DIM];
    event_order(g, w, e, fric, act, gate, h, q, v, a0, &seq, DV, DQ);
    if (acted) {
        memset(acted, 0, (size_t)g->n_pairs);
        for (int k = 0; k < seq.n; k++) acted[seq.order[k]] = 1;
    }
    for (int i = 0; i < g->n_bodies * g->dim; i++) dv[i] += DV[i], dq[i] += DQ[i];
}

void imp_event_backward(const imp_contact_geometry *g, const double *w, const double *e, const double *fric,
                        const unsigned char *act, const double *gate, double h, const double *q, const double *v,
                        const double *a0, const double *dv_bar, const double *dq_bar, double *q_bar, double *v_bar,
                        double *a0_bar, double *gate_bar, double *w_bar, double *e_bar, double *fric_bar,
                        double *phi_bar)
{
    const int D = g->n_bodies * g->dim, d = g->dim;
    event_seq seq;
    double DV[IMP_MAX_BODIES * IMP_MAX_DIM], DQ[IMP_MAX_BODIES * IMP_MAX_DIM];
    event_order(g, w, e, fric, act, gate, h, q, v, a0, &seq, DV, DQ);
    /* S_q, S_v: the adjoints of the later impacts' inputs q_k, v_k, which
     * this impact's jump dv and shift dq enter as DV and DQ */
    double S_q[IMP_MAX_BODIES * IMP_MAX_DIM] = {0}, S_v[IMP_MAX_BODIES * IMP_MAX_DIM] = {0};
    for (int k = seq.n - 1; k >= 0; k--) {
        const int p = seq.order[k];
        unsigned char only[IMP_MAX_CONTACTS] = {0};
        only[p] = seq.act[k];
        double dvb[IMP_MAX_BODIES * IMP_MAX_DIM], dqb[IMP_MAX_BODIES * IMP_MAX_DIM];
        double qb[IMP_MAX_BODIES * IMP_MAX_DIM] = {0}, vb[IMP_MAX_BODIES * IMP_MAX_DIM] = {0},
               ab[IMP_MAX_BODIES * IMP_MAX_DIM] = {0};
        for (int i = 0; i < D; i++) dvb[i] = dv_bar[i] + S_v[i] - h * S_q[i], dqb[i] = dq_bar[i] + S_q[i];
        event_adjoint adj = {dvb, dqb, qb, vb, ab, gate_bar, w_bar, e_bar, fric_bar};
        event_pass(g, w, e, fric, only, gate, h, seq.q[k], seq.v[k], a0, NULL, NULL, &adj);
        if (phi_bar && g->pairs[p].kind == IMP_PAIR_SPHERE) {
            /* the pair's jump and shift (the forward's, event_order) turn with
               its normal, and so do its inputs (cdl_structured.c,
               sphere_normal_backward) */
            phi_bar[p] += turn(dvb, seq.jump[k], D, d) + turn(dqb, seq.dq[k], D, d) - turn(qb, seq.q[k], D, d) -
                          turn(vb, seq.v[k], D, d) - turn(ab, a0, D, d);
        }
        for (int i = 0; i < D; i++) {
            q_bar[i] += qb[i], v_bar[i] += vb[i], a0_bar[i] += ab[i];
            S_q[i] += qb[i], S_v[i] += vb[i];
        }
    }
}
