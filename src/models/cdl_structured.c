/* The structured models: the CD-Lagrange network (CDL) and the variational
 * integrator network with velocity Verlet (VIN = CDL without contacts), their
 * window loss with its exact reverse pass, and rollouts.
 *
 * One step, n -> n+1, in the synchronised form of the central-difference
 * Lagrange scheme (see include/impulse/cdl.h and [A] eqs 39, 45-50):
 *   a0 = M^-1(-grad U(q_n) - C v_n)           vh = v_n + h/2 a0
 *   qt = q_n + h vh                            (45)
 *   p  = c_theta(qt, vh)                       contact probability per body
 *   q_{n+1} = projection(qt) at impacts        (closest point, optional)
 *   a1 = M^-1(-grad U(q_{n+1}) - C vh)         vS = vh + h a1        (39)
 *   v_{n+1} = vh + h/2 a1 + M^-1 I(vh, vS, gate)                     (48-50)
 * grad U(q_{n+1}) is computed once and reused by the next step's a0.
 * With impact_timing event the gated pairs' impulses act at their contact
 * times tau instead (imp_event_forward, before a1): q_{n+1} = qt + (h - tau)
 * dv, v_{n+1} = vh + h/2 a1 + dv (docs/derivations/contact.md sec 12). */
#include "cdl_internal.h"

#include <math.h>
#include <string.h>

/* GATE_GEOMETRY (cfg.gate_geometry): every body gated, the impulse on the
 * closing pairs it penetrates in the step (tolerance 0, no nearest pair):
 * geometry alone, no labels, the contact network unused. */
enum gate_mode { GATE_LABELS, GATE_SOFT, GATE_HARD, GATE_GEOMETRY };

/* With observed contact labels (touch feedback) the gates are the labels, so
 * the rollout of a window does not depend on the contact network: its H
 * steps are evaluated as one stacked batch of H*B rows after the rollout,
 * and differentiated as one batch before the reverse pass. */
static int stacked_contact(const imp_model *m, enum gate_mode mode, const imp_model_work *w)
{
    return m->has_contact_net && mode == GATE_LABELS && w->contact_stack != NULL;
}

#define SLOT(arr, k, stride) ((arr) + (size_t)(k) * (stride))

/* The non-penetration guard of rollouts: a pair that the gates leave alone
 * (activity 0, or its bodies not gated on) but whose gap at the drifted
 * position is below zero while closing is forced (activity 2): projected
 * onto its surface and given its impulse, so that a missed classification
 * cannot sink a body through a wall. A rollout starts from a clean state,
 * so no noise tolerance enters: the guard acts at any penetration. */
static void guard_pairs(const imp_contact_geometry *g, const double *gate, const double *qt, const double *vh,
                        unsigned char *act)
{
    for (int p = 0; p < g->n_pairs; p++) {
        const imp_contact_pair *c = &g->pairs[p];
        int gated = act[p] && gate[c->body_j] >= 0.5 && (c->body_i == IMP_WALL || gate[c->body_i] >= 0.5);
        if (!gated && imp_contact_gap(g, p, qt) < 0.0 && imp_contact_normal_velocity(g, p, vh) < 0.0) act[p] = 2;
    }
}

/* The geometry of one batch row for the step from positions q with
 * half-step velocities vh: the contact module's detection with sphere pairs
 * (disks) linearised at their contact in the step
 * (imp_contact_geometry_swept), held through the step; m->geom itself when
 * it has none. The reverse pass of the optional projection (--projection)
 * holds these normals constant. */
static const imp_contact_geometry *geom_at(const imp_model *m, const double *q, const double *vh,
                                           imp_contact_geometry *buf)
{
    return imp_contact_geometry_swept(&m->geom, q, vh, m->dt, buf);
}

/* The reverse pass through the sphere pairs' normals n = c / |c|, c = d +
 * w s* (geom_at): each pair's impulse is equivariant under a rotation of
 * the plane applied to its normal and to the bodies' velocities (the spin
 * coordinates do not turn), dv_p(R n, vh, vS) = R dv_p(n, R^T vh, R^T vS),
 * so its derivative along the normal's only direction of change (its angle
 * phi) is J dv_p - d(dv_p)/d(vh) J vh - d(dv_p)/d(vS) J vS with J the
 * rotation generator (x, y) -> (-y, x) of each body; phi's own derivative
 * is imp_contact_swept_normal_backward's. With event timing (phi_ev non-NULL) pair
 * p's velocity jump dv and position shift dq turn with the plane, and so
 * do its inputs q, v and a0 (its gap n . (x_j - x_i) - R does not change),
 * so phi's adjoint is dv_bar . J dv + dq_bar . J dq - (q_b . J q + v_b . J v
 * + a0_b . J a0) with the inputs' adjoints of the pair alone at fixed
 * normal: imp_event_backward's phi_bar, given in phi_ev (n_pairs). Adds to
 * q_bar (D) and vh_bar (D). */

static void sphere_normal_backward(const imp_model *m, const imp_contact_geometry *gb, const double *winv,
                                   const double *e, const double *fric, const unsigned char *act, const double *gate,
                                   const double *q, const double *vh, const double *vS, const double *phi_ev,
                                   const double *dv_bar, double *q_bar, double *vh_bar)
{
    const int D = m->D, d = gb->dim;
    for (int p = 0; p < gb->n_pairs; p++) {
        const imp_contact_pair *c = &gb->pairs[p];
        if (c->kind != IMP_PAIR_SPHERE || !act[p]) continue;
        unsigned char only[IMP_MAX_CONTACTS] = {0};
        only[p] = act[p];
        double dv[IMP_MAX_BODIES * IMP_MAX_DIM] = {0}, vh_b[IMP_MAX_BODIES * IMP_MAX_DIM] = {0},
               vS_b[IMP_MAX_BODIES * IMP_MAX_DIM] = {0};
        double phi_bar = 0.0;
        if (phi_ev) {
            phi_bar = phi_ev[p];
        } else {
            imp_impulse_forward(gb, winv, e, fric, m->cfg.impact_law, only, gate, vh, vS, dv);
            imp_impulse_backward(gb, winv, e, fric, m->cfg.impact_law, only, gate, vh, vS, dv_bar, vh_b, vS_b, NULL,
                                 NULL, NULL, NULL);
            for (int k = 0; k < D / d; k++) {
                const int o = k * d;
                phi_bar += dv_bar[o] * -dv[o + 1] + dv_bar[o + 1] * dv[o];
                phi_bar -= vh_b[o] * -vh[o + 1] + vh_b[o + 1] * vh[o];
                phi_bar -= vS_b[o] * -vS[o + 1] + vS_b[o + 1] * vS[o];
            }
        }
        imp_contact_swept_normal_backward(gb, p, q, vh, m->dt, phi_bar, q_bar, vh_bar);
    }
}

/* Forward of step n for the whole batch. labels_n: B x K (GATE_LABELS).
 * guard: rollouts (B = 1) apply the non-penetration guard (guard_pairs). */
static void step_forward(const imp_model *m, const double *params, imp_model_work *w, int n, int B,
                         enum gate_mode mode, const double *labels_n, const double *winv,
                         const double *C, const double *e, const double *fric, int stack, int guard)
{
    const int D = m->D, K = m->K, d = m->geom.dim, P = m->geom.n_pairs;
    const double h = m->dt;
    const size_t sBD = (size_t)B * D, sBK = (size_t)B * K;
    const double *q = SLOT(w->q, n, sBD), *v = SLOT(w->v, n, sBD), *g = SLOT(w->g, n, sBD);
    double *vh = SLOT(w->vh, n, sBD), *qt = SLOT(w->qt, n, sBD);
    double *qn = SLOT(w->q, n + 1, sBD), *vn = SLOT(w->v, n + 1, sBD), *gn = SLOT(w->g, n + 1, sBD);
    double *vS = SLOT(w->vS, n, sBD);
    double *p = SLOT(w->p, n, sBK), *gate = SLOT(w->gate, n, sBK);

    for (int b = 0; b < B; b++)
        for (int i = 0; i < D; i++) {
            size_t bi = (size_t)b * D + i;
            double a0 = winv[i / d] * (-g[bi] - C[i] * v[bi]);
            vh[bi] = v[bi] + 0.5 * h * a0;
            qt[bi] = q[bi] + h * vh[bi];
        }
    if (m->has_contact_net) {
        double *in = stack ? w->in_stack + (size_t)n * B * 2 * D : w->in;
        for (int b = 0; b < B; b++) {
            memcpy(in + (size_t)b * 2 * D, qt + (size_t)b * D, D * sizeof(double));
            memcpy(in + (size_t)b * 2 * D + D, vh + (size_t)b * D, D * sizeof(double));
        }
        if (!stack && B == 1 && w->contact_fixed)
            imp_mlp_fixed_forward(w->contact_fixed, w->in, p);
        else if (!stack)
            imp_mlp_forward(&m->contact, params + m->off_contact, w->in, B, p, w->contact[n]);
        for (size_t i = 0; i < sBK; i++)
            gate[i] = mode == GATE_LABELS ? labels_n[i] : mode == GATE_SOFT ? p[i] : mode == GATE_GEOMETRY ? 1.0 : (p[i] > 0.5);
    } else {
        memset(p, 0, sBK * sizeof(double));
        memset(gate, 0, sBK * sizeof(double));
    }
    memcpy(qn, qt, sBD * sizeof(double));
    const size_t sP = P > 0 ? (size_t)P : 1;
    const double tol = m->cfg.contact_tol == IMP_CONTACT_TOL_AUTO || mode == GATE_GEOMETRY ? 0.0 : m->cfg.contact_tol;
    /* event timing: each batch row's velocity jumps (B x D; w->dout is free in the forward pass) */
    double *dve = m->cfg.impact_timing == IMP_CDL_TIMING_EVENT && m->has_contact_net ? w->dout : NULL;
    if (dve) memset(dve, 0, sBD * sizeof(double));
    if (m->has_contact_net)
        for (int b = 0; b < B; b++) {
            unsigned char *act = w->pact + ((size_t)n * B + b) * sP, proj[IMP_MAX_CONTACTS];
            imp_contact_geometry gbuf;
            const imp_contact_geometry *gb = geom_at(m, q + (size_t)b * D, vh + (size_t)b * D, &gbuf);
            imp_pair_activity(gb, tol, mode != GATE_SOFT && mode != GATE_GEOMETRY, qt + (size_t)b * D, v + (size_t)b * D,
                              vh + (size_t)b * D, act);
            if (guard) guard_pairs(gb, gate + (size_t)b * K, qt + (size_t)b * D, vh + (size_t)b * D, act);
            if (dve) { /* the impacts at their times; the step's end moves with them (projected after) */
                const size_t o = (size_t)b * D;
                double a0[IMP_MAX_BODIES * IMP_MAX_DIM];
                for (int i = 0; i < D; i++) a0[i] = winv[i / d] * (-g[o + i] - C[i] * v[o + i]);
                imp_event_forward(gb, winv, e, fric, act, gate + (size_t)b * K, h, q + o, v + o, a0, dve + o, qn + o,
                                  w->acted + ((size_t)n * B + b) * sP);
            }
            int any = 0;
            for (int p = 0; p < P; p++) any |= (proj[p] = m->cfg.projection || act[p] == 2 ? act[p] : 0) != 0;
            if (!any) {
                memset(w->active + ((size_t)n * B + b) * sP, 0, sP);
                continue;
            }
            double hard[IMP_MAX_BODIES];
            for (int k = 0; k < K; k++) hard[k] = gate[(size_t)b * K + k] >= 0.5;
            imp_project_forward(gb, winv, proj, hard, qn + (size_t)b * D, w->active + ((size_t)n * B + b) * sP);
        }
    if (B == 1 && w->net_fixed)
        imp_mlp_fixed_grad_input(w->net_fixed, qn, gn);
    else
        imp_mlp_grad_input(&m->net, params + m->off_net, qn, B, gn, NULL, w->net[n + 1]);
    for (int b = 0; b < B; b++)
        for (int i = 0; i < D; i++) {
            size_t bi = (size_t)b * D + i;
            double a1 = winv[i / d] * (-gn[bi] - C[i] * vh[bi]);
            vS[bi] = vh[bi] + h * a1;
            vn[bi] = vh[bi] + 0.5 * h * a1;
        }
    if (dve)
        for (size_t i = 0; i < sBD; i++) vn[i] += dve[i];
    else if (m->has_contact_net)
        for (int b = 0; b < B; b++) {
            imp_contact_geometry gbuf;
            imp_impulse_forward(geom_at(m, q + (size_t)b * D, vh + (size_t)b * D, &gbuf), winv, e, fric, m->cfg.impact_law,
                                w->pact + ((size_t)n * B + b) * sP, gate + (size_t)b * K, vh + (size_t)b * D,
                                vS + (size_t)b * D, vn + (size_t)b * D);
        }
}

/* Reverse of step n. Consumes qbar/vbar/gbar of slot n+1 (gbar partial: the
 * next step's a0 term), completes gbar[n+1], runs sweep 2 there, and
 * accumulates into qbar/vbar/gbar of slot n and the parameter gradient. */
static void step_backward(const imp_model *m, const double *params, imp_model_work *w, int n, int B,
                          enum gate_mode mode, const double *winv, const double *C, const double *e,
                          const double *fric, double *grad, double *wbar, double *Cbar, double *ebar,
                          double *fricbar, int stack)
{
    const int D = m->D, K = m->K, d = m->geom.dim, P = m->geom.n_pairs;
    const double h = m->dt;
    const size_t sBD = (size_t)B * D, sBK = (size_t)B * K;
    const double *v = SLOT(w->v, n, sBD), *g = SLOT(w->g, n, sBD);
    const double *vh = SLOT(w->vh, n, sBD), *qt = SLOT(w->qt, n, sBD), *vS = SLOT(w->vS, n, sBD);
    const double *gn = SLOT(w->g, n + 1, sBD);
    const double *gate = SLOT(w->gate, n, sBK);
    const int event = m->cfg.impact_timing == IMP_CDL_TIMING_EVENT && m->has_contact_net;
    double *qbar_n1 = SLOT(w->qbar, n + 1, sBD), *vbar_n1 = SLOT(w->vbar, n + 1, sBD);
    double *gbar_n1 = SLOT(w->gbar, n + 1, sBD);
    double *qbar = SLOT(w->qbar, n, sBD), *vbar = SLOT(w->vbar, n, sBD), *gbar = SLOT(w->gbar, n, sBD);
    double *pbar = SLOT(w->pbar, n, sBK);
    double *vh_bar = w->out; /* B x D scratch */
    double *vS_bar = w->dout;
    double gate_bar[IMP_MAX_BODIES];

    memset(vh_bar, 0, sBD * sizeof(double));
    memset(vS_bar, 0, sBD * sizeof(double));
    for (int b = 0; b < B; b++) {
        const double *vnb = vbar_n1 + (size_t)b * D;
        for (int i = 0; i < D; i++) vh_bar[(size_t)b * D + i] = vnb[i];
        if (m->has_contact_net && !event) {
            memset(gate_bar, 0, sizeof gate_bar);
            imp_contact_geometry gbuf;
            const double *qb = SLOT(w->q, n, sBD) + (size_t)b * D;
            const imp_contact_geometry *gb = geom_at(m, qb, vh + (size_t)b * D, &gbuf);
            const unsigned char *act = w->pact + ((size_t)n * B + b) * (P > 0 ? P : 1);
            imp_impulse_backward(gb, winv, e, fric, m->cfg.impact_law, act, gate + (size_t)b * K, vh + (size_t)b * D,
                                 vS + (size_t)b * D, vnb, vh_bar + (size_t)b * D, vS_bar + (size_t)b * D,
                                 mode == GATE_SOFT ? gate_bar : NULL, wbar, ebar, fricbar);
            if (gb != &m->geom)
                sphere_normal_backward(m, gb, winv, e, fric, act, gate + (size_t)b * K, qb, vh + (size_t)b * D,
                                       vS + (size_t)b * D, NULL, vnb, qbar + (size_t)b * D, vh_bar + (size_t)b * D);
            if (mode == GATE_SOFT)
                for (int k = 0; k < K; k++) pbar[(size_t)b * K + k] += gate_bar[k];
        }
        for (int i = 0; i < D; i++) {
            size_t bi = (size_t)b * D + i;
            double a1_bar = 0.5 * h * vnb[i] + h * vS_bar[bi];
            vh_bar[bi] += vS_bar[bi];
            double wi = winv[i / d];
            gbar_n1[bi] += -wi * a1_bar;
            vh_bar[bi] += -wi * C[i] * a1_bar;
            Cbar[i] += -wi * vh[bi] * a1_bar;
            wbar[i / d] += (-gn[bi] - C[i] * vh[bi]) * a1_bar;
        }
    }
    /* gbar[n+1] is complete: sweep 2 gives the potential's gradient and the
     * Hessian-vector product that flows into q_{n+1}. */
    imp_mlp_grad_input_vjp(&m->net, params + m->off_net, gbar_n1, B, grad + m->off_net, qbar_n1,
                           w->net[n + 1]);
    /* projection: qbar_n1 becomes d/d(qt) */
    if (m->cfg.projection && m->has_contact_net)
        for (int b = 0; b < B; b++) {
            imp_contact_geometry gbuf;
            imp_project_backward(geom_at(m, SLOT(w->q, n, sBD) + (size_t)b * D, vh + (size_t)b * D, &gbuf), winv, qt + (size_t)b * D,
                                 w->active + ((size_t)n * B + b) * (P > 0 ? P : 1),
                                 qbar_n1 + (size_t)b * D, wbar);
        }
    /* event timing: v_{n+1} += dv, q_{n+1} += dq of the impacts at their
     * times, from (q_n, v_n, a0); a0's adjoint in vS_bar, free now */
    double *a0e_bar = event ? vS_bar : NULL;
    if (event) {
        memset(a0e_bar, 0, sBD * sizeof(double));
        for (int b = 0; b < B; b++) {
            const size_t o = (size_t)b * D;
            const double *qb = SLOT(w->q, n, sBD) + o;
            double a0[IMP_MAX_BODIES * IMP_MAX_DIM];
            for (int i = 0; i < D; i++) a0[i] = winv[i / d] * (-g[o + i] - C[i] * v[o + i]);
            memset(gate_bar, 0, sizeof gate_bar);
            imp_contact_geometry gbuf;
            const imp_contact_geometry *gb = geom_at(m, qb, vh + o, &gbuf);
            const unsigned char *act = w->pact + ((size_t)n * B + b) * (P > 0 ? P : 1);
            double phi[IMP_MAX_CONTACTS] = {0};
            imp_event_backward(gb, winv, e, fric, act, gate + (size_t)b * K, h, qb, v + o, a0, vbar_n1 + o, qbar_n1 + o,
                               qbar + o, vbar + o, a0e_bar + o, mode == GATE_SOFT ? gate_bar : NULL, wbar, ebar, fricbar,
                               gb != &m->geom ? phi : NULL);
            if (gb != &m->geom) {
                unsigned char acted[IMP_MAX_CONTACTS];
                for (int p = 0; p < P; p++) acted[p] = act[p] || phi[p] != 0.0;
                sphere_normal_backward(m, gb, winv, e, fric, acted, gate + (size_t)b * K, qb, vh + o, NULL, phi,
                                       vbar_n1 + o, qbar + o, vh_bar + o);
            }
            if (mode == GATE_SOFT)
                for (int k = 0; k < K; k++) pbar[(size_t)b * K + k] += gate_bar[k];
        }
    }
    const double *din = stack ? w->din_stack + (size_t)n * B * 2 * D : w->din;
    if (m->has_contact_net && !stack) {
        memset(w->din, 0, (size_t)B * 2 * D * sizeof(double));
        imp_mlp_backward(&m->contact, params + m->off_contact, pbar, B, grad + m->off_contact, w->din,
                         w->contact[n]);
    }
    for (int b = 0; b < B; b++)
        for (int i = 0; i < D; i++) {
            size_t bi = (size_t)b * D + i;
            double qt_bar = qbar_n1[bi];
            if (m->has_contact_net) {
                qt_bar += din[(size_t)b * 2 * D + i];
                vh_bar[bi] += din[(size_t)b * 2 * D + D + i];
            }
            qbar[bi] += qt_bar;
            vh_bar[bi] += h * qt_bar;
            vbar[bi] += vh_bar[bi];
            double a0_bar = 0.5 * h * vh_bar[bi] + (a0e_bar ? a0e_bar[bi] : 0.0);
            double wi = winv[i / d];
            gbar[bi] += -wi * a0_bar;
            vbar[bi] += -wi * C[i] * a0_bar;
            Cbar[i] += -wi * v[bi] * a0_bar;
            wbar[i / d] += (-g[bi] - C[i] * v[bi]) * a0_bar;
        }
}

int imp_structured_window_loss(const imp_model *m, const double *params, imp_model_work *w,
                               const double *x0, const double *target, const double *labels,
                               const double *weight, int B, int H, double *grad, imp_loss_parts *parts)
{
    const int D = m->D, K = m->K;
    const size_t sBD = (size_t)B * D, sBK = (size_t)B * K;
    enum gate_mode mode = m->cfg.gate_geometry ? GATE_GEOMETRY : m->cfg.touch ? GATE_LABELS : GATE_SOFT;
    const int stack = stacked_contact(m, mode, w);
    double winv[IMP_MAX_BODIES], C[IMP_MAX_BODIES * IMP_MAX_DIM];
    double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
    imp_model_inverse_masses(m, params, winv);
    imp_model_damping(m, params, C);
    const double *fric = imp_model_contact_law(m, params, e, mu) ? mu : NULL;

    for (int b = 0; b < B; b++) {
        memcpy(w->q + (size_t)b * D, x0 + (size_t)b * 2 * D, D * sizeof(double));
        memcpy(w->v + (size_t)b * D, x0 + (size_t)b * 2 * D + D, D * sizeof(double));
    }
    imp_mlp_grad_input(&m->net, params + m->off_net, w->q, B, w->g, NULL, w->net[0]);
    for (int n = 0; n < H; n++) {
        if (mode == GATE_LABELS)
            for (int b = 0; b < B; b++)
                memcpy(w->lab + (size_t)n * sBK + (size_t)b * K, labels + ((size_t)b * H + n) * K,
                       K * sizeof(double));
        step_forward(m, params, w, n, B, mode, w->lab + (size_t)n * sBK, winv, C, e, fric, stack, 0);
    }
    if (stack) imp_mlp_forward(&m->contact, params + m->off_contact, w->in_stack, H * B, w->p, w->contact_stack);

    /* losses: state MSE (mean over dims, sum over steps, mean over batch) and
     * contact BCE (mean over bodies, sum over steps, mean over batch) */
    double Ls = 0.0, Lc = 0.0;
    for (int n = 1; n <= H; n++)
        for (int b = 0; b < B; b++) {
            const double *tq = target + ((size_t)b * H + (n - 1)) * 2 * D, *tv = tq + D;
            const double *qh = w->q + (size_t)n * sBD + (size_t)b * D, *vhat = w->v + (size_t)n * sBD + (size_t)b * D;
            double *qb = w->qbar + (size_t)n * sBD + (size_t)b * D, *vb = w->vbar + (size_t)n * sBD + (size_t)b * D;
            const double wt = weight ? weight[(size_t)b * H + (n - 1)] : 1.0;
            for (int i = 0; i < D; i++) {
                double eq = qh[i] - tq[i], ev = vhat[i] - tv[i];
                Ls += wt * (eq * eq + ev * ev) / (2.0 * D);
                qb[i] = wt * eq / (D * (double)B);
                vb[i] = wt * ev / (D * (double)B);
            }
        }
    Ls /= B;
    memset(w->qbar, 0, sBD * sizeof(double));
    memset(w->vbar, 0, sBD * sizeof(double));
    memset(w->gbar, 0, (size_t)(H + 1) * sBD * sizeof(double));
    if (m->has_contact_net && mode == GATE_LABELS) {
        for (int n = 0; n < H; n++) {
            double *pb = w->pbar + (size_t)n * sBK;
            const double *p = w->p + (size_t)n * sBK, *lab = w->lab + (size_t)n * sBK;
            for (int b = 0; b < B; b++) {
                Lc += imp_bce(p + (size_t)b * K, lab + (size_t)b * K, K, pb + (size_t)b * K) / K;
                for (int k = 0; k < K; k++) pb[(size_t)b * K + k] /= K * (double)B;
            }
        }
        Lc /= B;
    } else {
        memset(w->pbar, 0, (size_t)H * sBK * sizeof(double));
    }
    if (grad) {
        double wbar[IMP_MAX_BODIES] = {0}, Cbar[IMP_MAX_BODIES * IMP_MAX_DIM] = {0};
        double ebar[IMP_MAX_CONTACTS] = {0}, fricbar[IMP_MAX_CONTACTS] = {0};
        if (stack) {
            memset(w->din_stack, 0, (size_t)H * sBD * 2 * sizeof(double));
            imp_mlp_backward(&m->contact, params + m->off_contact, w->pbar, H * B, grad + m->off_contact,
                             w->din_stack, w->contact_stack);
        }
        for (int n = H - 1; n >= 0; n--)
            step_backward(m, params, w, n, B, mode, winv, C, e, fric, grad, wbar, Cbar, ebar, fricbar, stack);
        imp_mlp_grad_input_vjp(&m->net, params + m->off_net, w->gbar, B, grad + m->off_net, NULL, w->net[0]);
        if (m->cfg.learn_damping)
            for (int i = 0; i < D; i++) grad[m->off_damping + i] += C[i] * Cbar[i];
        if (m->cfg.learn_mass)
            for (int k = 0; k < K; k++) grad[m->off_mass + k] += -winv[k] * wbar[k];
        /* e = sigmoid(a), mu = exp(b) */
        if (m->cfg.learn_restitution)
            for (int p = 0; p < m->geom.n_pairs; p++) grad[m->off_restitution + p] += e[p] * (1.0 - e[p]) * ebar[p];
        if (fric)
            for (int p = 0; p < m->geom.n_pairs; p++) grad[m->off_friction + p] += mu[p] * fricbar[p];
    }
    if (parts) { /* the L2 term is added by imp_model_window_loss */
        parts->state = Ls;
        parts->contact = Lc;
        parts->l2 = 0.0;
        parts->total = Ls + Lc;
    }
    return IMP_OK;
}

int imp_structured_rollout(const imp_model *m, imp_model_work *w, const double *x0, int n_steps,
                           const double *gates, double *states, double *contact)
{
    const int D = m->D, K = m->K;
    double winv[IMP_MAX_BODIES], C[IMP_MAX_BODIES * IMP_MAX_DIM];
    double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS];
    imp_model_inverse_masses(m, m->params, winv);
    imp_model_damping(m, m->params, C);
    const double *fric = imp_model_contact_law(m, m->params, e, mu) ? mu : NULL;
    memcpy(w->q, x0, D * sizeof(double));
    memcpy(w->v, x0 + D, D * sizeof(double));
    memcpy(states, x0, 2 * D * sizeof(double));
    for (int k = 0; k < K; k++) contact[k] = 0.0;
    if (w->net_fixed)
        imp_mlp_fixed_grad_input(w->net_fixed, w->q, w->g);
    else
        imp_mlp_grad_input(&m->net, m->params + m->off_net, w->q, 1, w->g, NULL, w->net[0]);
    for (int t = 1; t < n_steps; t++) {
        step_forward(m, m->params, w, 0, 1, m->cfg.gate_geometry ? GATE_GEOMETRY : gates ? GATE_LABELS : GATE_HARD,
                     gates ? gates + (size_t)t * K : NULL, winv, C, e, fric, 0, 1);
        memcpy(states + (size_t)t * 2 * D, w->q + D, D * sizeof(double));
        memcpy(states + (size_t)t * 2 * D + D, w->v + D, D * sizeof(double));
        for (int k = 0; k < K; k++) contact[(size_t)t * K + k] = !m->cfg.gate_geometry && w->gate[k] >= 0.5;
        for (int p = 0; m->has_contact_net && p < m->geom.n_pairs; p++)
            if (w->pact[p] == 2 || (m->cfg.gate_geometry && w->pact[p])) { /* the guard's (geometry's) impacts */
                contact[(size_t)t * K + m->geom.pairs[p].body_j] = 1.0;
                if (m->geom.pairs[p].body_i != IMP_WALL) contact[(size_t)t * K + m->geom.pairs[p].body_i] = 1.0;
            }
        if (imp_check_finite(states + (size_t)t * 2 * D, 2 * D, "rollout state"))
            return imp_fail(IMP_ERR_NUMERIC, "rollout: state became non-finite at step %d", t);
        memcpy(w->q, w->q + D, D * sizeof(double));
        memcpy(w->v, w->v + D, D * sizeof(double));
        memcpy(w->g, w->g + D, D * sizeof(double));
    }
    return IMP_OK;
}
