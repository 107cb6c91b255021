/* Internals shared by the CD-Lagrange strand's model files. */
#ifndef IMPULSE_CDL_INTERNAL_H
#define IMPULSE_CDL_INTERNAL_H

#include "impulse/cdl.h"
#include "nn/mlp_fixed.h"

/* ---- contact_impulse.c: the Newton-restitution impulse and the
 * closest-point projection, per sample, with their reverse passes. ---- */

/* Which of a body's contact pairs a gated step's impulse acts on (events per
 * pair: the gate says when, geometry says which pair). For a step from
 * (q, v) with half-step velocity vh to the drifted positions qt = q + h vh,
 * a pair is in reach when its gap at qt is at or below tol (the step's
 * travel is in qt; tol covers the data's noise) and it is closing: its
 * normal velocity u- at vh, or that after the next half step of the current
 * force, 2 u- - u(v), is negative. Per body: a body with one pair names it;
 * of a body with several, the closing pairs it penetrates at qt (gap <= 0:
 * certainly hit in the step), else those in reach, or when none is (noise,
 * a window's drift) and nearest_if_none, its nearest (smallest gap at qt).
 * nearest_if_none is for gates that are evidence of a contact (labels, the
 * hard decision of a contact network trained on them); the soft gates of
 * training without touch feedback are on everywhere, so there a body's
 * pairs out of reach take no impulse. So a ball resting on
 * a floor (labelled all the time) gives a wall 0.1 m ahead no impulse. act[p] = 1 for the pairs
 * chosen by either of their bodies, 0 otherwise; returns how many. */
int imp_pair_activity(const imp_contact_geometry *g, double tol, int nearest_if_none, const double *qt,
                      const double *v, const double *vh, unsigned char *act);

/* dv (D) += M^-1 I for every active contact pair ([A] eqs 48-50, pairwise
 * form), each pair's impulse lambda from the contact module's solver
 * (imp_contact_solve_law_forward, docs/derivations/contact.md sec 11) with
 * rows J = (n) or, with friction, (n, t) on the relative velocity, A =
 * (w_i + w_j) J J^T, u- = J (vS_j - vS_i), u_ref = J (vh_j - vh_i) and
 * law IMP_CONTACT_LAW_PAPER (u+_n = -e u_ref_n: frictionless,
 * lambda = (-e u- - uS) / (w_i + w_j)) or IMP_CONTACT_LAW_HALFSTEP
 * (impact_law IMP_CDL_IMPACT_NEWTON); then
 *   dv_j += gate_j w_j J^T lambda, dv_i -= gate_i w_i J^T lambda,
 * act (n_pairs, NULL: all 1) the pairs' activity: 0 the pair takes no
 * impulse, 1 gated by its bodies' gates, 2 forced (gates 1: the
 * non-penetration guard),
 * with w the inverse masses (w_i = 0 for a wall), e (n_pairs) the
 * restitution of each pair and gate (K) in [0,1]. If fric (n_pairs) is
 * non-NULL, pairs with a tangent get Coulomb friction with coefficient
 * fric[p] (stick or slide; none where the law pulls).
 * law: IMP_CDL_IMPACT_PAPER or _NEWTON (imp_cdl_config.impact_law). */
void imp_impulse_forward(const imp_contact_geometry *g, const double *w, const double *e, const double *fric,
                         int law, const unsigned char *act, const double *gate, const double *vh, const double *vS,
                         double *dv);
/* Reverse of imp_impulse_forward given dv_bar (the solver's reverse pass,
 * imp_contact_solve_law_backward); accumulates into vh_bar, vS_bar,
 * gate_bar (K), w_bar (K), e_bar and fric_bar (n_pairs) (each may be
 * NULL; a pair with both gates 0 is skipped when gate_bar is NULL). */
void imp_impulse_backward(const imp_contact_geometry *g, const double *w, const double *e, const double *fric,
                          int law, const unsigned char *act, const double *gate, const double *vh, const double *vS,
                          const double *dv_bar, double *vh_bar, double *vS_bar, double *gate_bar, double *w_bar,
                          double *e_bar, double *fric_bar);

/* The contact module's Newton law on the velocity at the event (law of
 * imp_impulse_forward for impact_timing event; not a public impact_law). */
#define IMP_CDL_IMPACT_EVENT 2

/* Impacts at their event time (imp_cdl_config.impact_timing
 * IMP_CDL_TIMING_EVENT; docs/derivations/contact.md sec 12): each pair's
 * contact time tau from the contact module's detection
 * (imp_contact_time_of_impact). */
/* For every pair with act[p] != 0 (gates as imp_impulse_forward), the
 * impulse of Newton's law and Coulomb friction (contact module,
 * IMP_CONTACT_LAW_NEWTON) on the velocity at its event, the pairs in the
 * order of their events, each on the flight after the ones before it: a
 * pair sharing a body with an earlier impact acts only if it is still
 * reached in the step, and a pair whose bodies are all gated (>= 0.5) acts
 * when an earlier impact sends it into contact within the step (a chain).
 * Pairs sharing no body act each alone from the step's start, at the
 * velocity v + tau a0 (tau = h when not reached). dv (D) += the velocity
 * jumps, dq (D) += the sum of (h - tau) times each: the rest of the step
 * flown with the post-impact velocity (docs/derivations/contact.md sec 12).
 * acted (n_pairs, may be NULL): 1 for each pair that acted (its law read),
 * 0 for the others. */
void imp_event_forward(const imp_contact_geometry *g, const double *w, const double *e, const double *fric,
                       const unsigned char *act, const double *gate, double h, const double *q, const double *v,
                       const double *a0, double *dv, double *dq, unsigned char *acted);
/* Reverse of imp_event_forward given dv_bar and dq_bar; accumulates into
 * q_bar, v_bar, a0_bar (D), gate_bar, w_bar (K), e_bar and fric_bar
 * (n_pairs) (gate_bar, w_bar, e_bar, fric_bar may be NULL), and, if
 * phi_bar (n_pairs) is non-NULL, into phi_bar[p] the adjoint of each
 * acting sphere pair's normal angle (its normal held in g). */
void imp_event_backward(const imp_contact_geometry *g, const double *w, const double *e, const double *fric,
                        const unsigned char *act, const double *gate, double h, const double *q, const double *v,
                        const double *a0, const double *dv_bar, const double *dq_bar, double *q_bar, double *v_bar,
                        double *a0_bar, double *gate_bar, double *w_bar, double *e_bar, double *fric_bar,
                        double *phi_bar);

/* Closest-point projection in the mass metric of every pair with activity
 * act[p] (as for the impulse; NULL: all 1) 2, or 1 and its bodies both gated
 * on (gate >= 0.5; walls count as on), whose gap is negative:
 * q <- q - gap M^-1 grad(gap) / (grad(gap)^T M^-1 grad(gap)) (exact for the
 * linear gaps used here). Records which pairs were projected in `active`
 * (n_pairs) for the reverse pass. */
void imp_project_forward(const imp_contact_geometry *g, const double *w, const unsigned char *act,
                         const double *gate, double *q, unsigned char *active);
/* Reverse of the projection at the *pre-projection* q_in: q_bar is updated in
 * place from d/dq_out to d/dq_in; w_bar (K, may be NULL) accumulates. */
void imp_project_backward(const imp_contact_geometry *g, const double *w, const double *q_in,
                          const unsigned char *active, double *q_bar, double *w_bar);

/* ---- model.c helpers ---- */
/* Benches and tests: the potential of a CDL model with 2K softplus hidden
 * units set to exactly uniform gravity g along each body's second
 * coordinate, U = sum_k m_k g y_k (units in pairs: m g (softplus(y) -
 * softplus(-y)) = m g y), the data's masses. IMP_ERR_INVALID for another
 * model. */
int imp_model_set_gravity_potential(imp_model *m, double g);
/* Inverse masses w (K) and damping coefficients C (D) from the parameters. */
void imp_model_inverse_masses(const imp_model *m, const double *params, double *w);
void imp_model_damping(const imp_model *m, const double *params, double *C);
/* Restitution e (n_pairs) and, if the model has friction, Coulomb
 * coefficients mu (n_pairs; returns 1) from the parameters; returns 0 and
 * leaves mu untouched without friction. */
int imp_model_contact_law(const imp_model *m, const double *params, double *e, double *mu);
/* The learned contact law's parametrisation, in one place: e = sigmoid(a)
 * (mu = 0) or mu = exp(a) (mu = 1) of the raw parameter a, and its inverse
 * (no clamping: imp_model_set_contact_law clamps before it). */
double imp_model_law_value(int mu, double a);
double imp_model_law_raw(int mu, double x);

/* ---- structured (CDL, VIN) and ResNet kernels ---- */
int imp_structured_window_loss(const imp_model *m, const double *params, imp_model_work *w,
                               const double *x0, const double *target, const double *labels,
                               const double *weight, int B, int H, double *grad, imp_loss_parts *parts);
int imp_structured_rollout(const imp_model *m, imp_model_work *w, const double *x0, int n_steps,
                           const double *gates, double *states, double *contact);
int imp_resnet_window_loss(const imp_model *m, const double *params, imp_model_work *w,
                           const double *x0, const double *target, const double *labels,
                           const double *weight, int B, int H, double *grad, imp_loss_parts *parts);
int imp_resnet_rollout(const imp_model *m, imp_model_work *w, const double *x0, int n_steps,
                       const double *gates, double *states, double *contact);

/* The scratch of a batch of windows: one MLP cache per time slot. */
struct imp_model_work {
    int B, H, D, K;
    int structured;          /* CDL or VIN: net is the potential (imp_model_work_set_single_potential) */
    imp_mlp_work **net;      /* H + 1 slots */
    imp_mlp_work **contact;  /* H slots */
    imp_mlp_work *contact_stack; /* H*B rows: all steps of a window at once (touch feedback) */
    double *in_stack, *din_stack; /* H x B x 2D its inputs and their gradients */
    /* per-slot arrays, (H + 1) x B x D unless noted */
    double *q, *v, *g, *vh, *qt, *vS;
    double *p, *gate;        /* H x B x K */
    unsigned char *active;   /* H x B x n_pairs: pairs projected */
    unsigned char *pact;     /* H x B x n_pairs: pairs' activity (imp_pair_activity, 2 = guard) */
    unsigned char *acted;    /* H x B x n_pairs: event timing: the pairs whose impulse acted,
                                chains included (imp_event_forward); 0 otherwise */
    double *qbar, *vbar, *gbar;
    double *pbar;            /* H x B x K */
    double *lab;             /* H x B x K contact labels of the batch, step-major */
    double *in, *din;        /* B x (2D + K) network inputs and their gradients */
    double *out, *dout;      /* B x max(2D, K) */
    double *xs;              /* (H + 1) x B x 2D ResNet states */
    double *xbar;            /* (H + 1) x B x 2D */
    /* rollouts (one row, the model's parameters): the contact network and
     * the potential with their weights fixed (imp_mlp_fixed), or NULL */
    imp_mlp_fixed *contact_fixed, *net_fixed;
};

#endif
