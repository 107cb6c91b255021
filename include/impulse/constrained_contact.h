/* Contacts of constrained systems in Cartesian coordinates (issue #25): the
 * gap and Jacobian rows of a system's declared contacts (imp_csys.contacts),
 * the constrained inverse mass as the contact module's M^-1 callback, so
 * that contact impulses keep the joints (DPhi v+ = 0), and the
 * event-accurate ground truth (docs/derivations/contact.md section
 * "Contacts with joint constraints", eqs 16-19). */
#ifndef IMPULSE_CONSTRAINED_CONTACT_H
#define IMPULSE_CONSTRAINED_CONTACT_H

#include "impulse/constrained.h"
#include "impulse/contact.h"
#include "impulse/chnn_systems.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Frame of contact c at x: gap phi (> 0 apart), world contact point pc
 * (the material point of the body that touches the plane; for a body-body
 * contact, the point of body A's sphere that touches B's), normal first
 * then tangents (2-D t = (n_y, -n_x); 3-D (t1, t2, n) right-handed), and
 * the Jacobian rows J (d x N, overwritten): row k maps v to the velocity of
 * the material point at pc along direction k (eq 16); for a body-body
 * contact, minus that of B's touching point (the relative velocity, eq 17a),
 * with the normal from B's centre to A's. J may be NULL. Coincident centres
 * of a body-body contact (no normal) give the first axis as normal;
 * imp_csys_check_contact_normals refuses such a state. */
double imp_csys_contact_frame(const imp_csys *s, const double *x, int c, double *pc, double dirs[3][3],
                              double *J);
/* Gap of contact c at x (imp_csys_contact_frame, returned) and its normal
 * velocity at v, *un = J_n v (the normal row dotted with v, summed in order
 * from 0): the one gap-then-closing test of the simulator, the models and
 * training, each with its own thresholds. J (d x N) receives the rows; may
 * be NULL. */
double imp_csys_contact_gap_rate(const imp_csys *s, const double *x, const double *v, int c, double *J,
                                 double *un);
/* Distance between a body-body contact's sphere centres at x (INFINITY for
 * a plane contact). */
double imp_csys_contact_centre_distance(const imp_csys *s, const double *x, int c);
/* Fails (IMP_ERR_INVALID, naming the contact and its line) if a body-body
 * contact's sphere centres coincide at x: its normal is undefined. */
int imp_csys_check_contact_normals(const imp_csys *s, const double *x);
/* Reverse of imp_csys_contact_frame for a body-body contact c (whose normal
 * and rows depend on x): xbar += d(phi_bar phi + <J_bar, J>)/dx, J_bar d x N
 * (may be NULL). For the learned models' reverse pass through the gap and
 * the rows (a plane contact's rows depend on x only through an extended
 * body's frame). Fails if c is not a body-body contact or its centres
 * coincide. */
int imp_csys_body_contact_vjp(const imp_csys *s, const double *x, int c, double phi_bar, const double *J_bar,
                              double *xbar);
/* A contact's name for messages and reports: "body-plane" or "bodyA-bodyB". */
void imp_csys_contact_name(const imp_csys *s, int c, char *buf, size_t n);

/* M^-1 callback of the contact module (imp_contact_minv_fn) applying the
 * constrained inverse mass P(x) of imp_csys_constrained_minv (eq 17). */
typedef struct imp_csys_minv_ctx {
    const imp_csys *s;
    const double *x;  /* the configuration (N) */
    imp_csys_work *w; /* made for s */
} imp_csys_minv_ctx;
int imp_csys_contact_minv(double *out, const double *in, int nv, int ncol, void *user_data);

/* The impulse at x on velocity v (N, in place) of the contacts in active
 * (n of them): rows J (n d x N), u- = J v, lambda from the contact solve
 * with A = J P J^T, v+ = v + P J^T lambda (eqs 5, 6, 11, 17); sol (may be
 * NULL) receives the solution. */
int imp_csys_contact_impulse(const imp_csys *s, const double *x, double *v, const int *active, int n,
                             imp_contact_solution *sol, imp_csys_work *w);

/* Contacts to act on at (x, v): gap <= tol and closing (J_n v < -vtol);
 * writes their ids to active and returns their number. */
int imp_csys_contact_active(const imp_csys *s, const double *x, const double *v, double tol, double vtol,
                            int *active);

/* Event-accurate ground truth of a system with contacts (docs/chnn-systems.md
 * "Contacts"): the constrained flow integrated by DOPRI5 (as
 * imp_chnn_simulate) between impacts; a step that ends with a gap below
 * -1e-12 is cut at the gap's zero crossing, located by the Illinois
 * method on re-integrations from the step's start (time to 1e-13 s); there
 * the closing contacts' impulse (imp_csys_contact_impulse) is applied and
 * the integration continues. Sustained contact (a body resting or rolling
 * on a plane, e = 0 or repeated crossings at one instant): repeated
 * impulses on fixed substeps of dt / 20, each followed by a projection of
 * the positions back onto gap 0 together with the joints; penetration is
 * thus bounded by about a dt^2 / 800 (a the normal acceleration).
 * imp_chnn_simulate calls this for a system with contacts. */
typedef struct imp_chnn_contact_stats {
    int impacts;            /* impulses applied (located crossings and substeps) */
    int resting;            /* of them, on sustained-contact substeps */
    double max_penetration; /* largest -phi seen at the end of any step (>= 0) */
    double impact_energy;   /* sum of the energy jumps at the impulses (<= 0 when
                               the law dissipates) */
    double projection_energy; /* sum of the energy changes of the projections */
    imp_dopri5_stats ode;     /* DOPRI5 work over all integrations (locating included) */
    double max_joint_velocity; /* largest |DPhi v+| right after any impulse (0 in exact arithmetic, eq 19) */
} imp_chnn_contact_stats;
/* imp_chnn_simulate(s, ..., stats) gives stats the ode field. */
int imp_chnn_simulate_contact(const imp_csys *s, const double *xv0, double dt, int n_steps,
                              const imp_chnn_sim_opts *o, double *traj, imp_chnn_contact_stats *cst);

/* imp_chnn_simulate_contact calling hook(user, t, xv_minus, xv_plus, active,
 * n, resting) at every impulse: t its time, the state (x, v) just before and
 * after it (2N each), the n contacts it acted on, resting 1 on a
 * sustained-contact substep and 0 at a located impact. A non-zero return
 * stops the simulation with that status. */
typedef int (*imp_chnn_impact_fn)(void *user, double t, const double *xv_minus, const double *xv_plus,
                                  const int *active, int n, int resting);
int imp_chnn_simulate_contact_hook(const imp_csys *s, const double *xv0, double dt, int n_steps,
                                   const imp_chnn_sim_opts *o, double *traj, imp_chnn_contact_stats *cst,
                                   imp_chnn_impact_fn hook, void *user);

/* ---- energy lost at impacts: the truth against a model (src/eval/impact_energy.c) ----
 * For issue #25's "at impacts, the energy lost matches the truth's within
 * 5 %". truth and model are n_traj trajectories of T states (x, v) (2N
 * each, the layout of imp_chnn_simulate), both measured with the system's
 * true energy H (imp_csys_energy). An impact is a step k -> k+1 where the
 * truth's H drops by more than threshold times the trajectory's largest
 * kinetic energy (the flow between impacts keeps H; the truth's impacts
 * are its only losses). At each, the losses over states a = k - window ..
 * b = k + 1 + window (clipped; impacts whose windows overlap are one event):
 *   truth: H(truth_a) - H(truth_b),
 *   model: H(model_a) - H(model_b) (a rollout: window 1 or 2 absorbs an
 *          impact a step early or late), or, with one_step, the model's row
 *          k+1 a one-step prediction from the truth's row k:
 *          H(truth_k) - H(model_{k+1}) (window unused). */
typedef struct imp_impact_energy_opts {
    double threshold; /* relative to the largest kinetic energy (default 1e-4) */
    int window;       /* states each side (default 0) */
    int one_step;     /* model rows are one-step predictions (default 0) */
} imp_impact_energy_opts;
void imp_impact_energy_opts_default(imp_impact_energy_opts *o);
typedef struct imp_impact_energy {
    int impacts;                         /* events found in the truth */
    double truth_lost, model_lost;       /* summed over them */
    double rel_error;                    /* |model_lost - truth_lost| / truth_lost (0 without impacts) */
    double mean_rel_error, max_rel_error; /* |model - truth| / truth per event */
    int within_5pct;                     /* events with that error <= 0.05 */
} imp_impact_energy;
/* truth_loss, model_loss (may be NULL) receive the first cap events' losses. */
int imp_csys_impact_energy(const imp_csys *s, const double *truth, const double *model, int n_traj, int T,
                           const imp_impact_energy_opts *o, imp_impact_energy *out, double *truth_loss,
                           double *model_loss, int cap);

#ifdef __cplusplus
}
#endif
#endif
