/* impulse rigid-body time stepper: one spatial rigid body with body-fixed
 * contact points (a box's corners) over a ground plane, on the contact
 * module (include/impulse/contact.h, docs/derivations/contact.md), with its
 * reverse pass. It is the box-toss ground-truth simulator (fine sub-steps),
 * the identified rigid cube (e, mu and the ground fitted on training
 * tosses) and the base of the learned cube model. docs/cube.md.
 *
 * States are the 13 columns of include/impulse/rigid_traj.h: quaternion
 * w x y z (body to world), position of the centre (world, z up), angular
 * velocity (body frame), linear velocity (world).
 *
 * One step of length h (src/models/rigid_step.c):
 *   1. kick: v- = v - h g e_z; w- = w + h I^-1 ((I w) x w) (explicit gyroscopic
 *      term; zero for a cube);
 *   2. detection (contact module): gap phi_c, frame and Jacobian rows J_c of
 *      every contact point at the start-of-step pose;
 *   3. active set, per point: b_c = max(phi_c, 0)/h, active when
 *      J_n,c v- + b_c < 0 (the point would cross the plane within the step);
 *   4. the active points' impulses solved together (Newton restitution e,
 *      Coulomb cone mu; imp_contact_solve_forward, eqs 7-11): a point
 *      approaching faster than e_threshold gets Newton's law on its velocity,
 *      u+_n >= e |u-_n| (it may leave the plane up to h |u-_n| early); a slower
 *      one (or any with e = 0) is plastic, on the shifted velocity
 *      u-_n + b_c, so that it reaches the plane at the end of the step
 *      (u+_n >= -b_c) rather than stopping short of it, and a resting box
 *      neither chatters nor hovers;
 *      v+ = v- + M^-1 J^T lambda;
 *   5. positions: x+ = x + h v+ (with no active contact x + h (v + v+)/2,
 *      exact for free flight); q+ = normalise(q (x) exp(h w+ / 2)).
 * The input quaternion is normalised first (its gradient is projected). */
#ifndef IMPULSE_RIGID_MODEL_H
#define IMPULSE_RIGID_MODEL_H

#include "impulse/contact.h"
#include "impulse/rigid_traj.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMP_RIGID_MAX_POINTS 8

typedef struct imp_rigid_model {
    double mass;       /* kg, > 0 */
    double inertia[3]; /* principal moments, body axes, > 0 */
    int n_points;      /* 1 .. IMP_RIGID_MAX_POINTS */
    double points[IMP_RIGID_MAX_POINTS][3]; /* contact points, body frame, m */
    double e, mu;      /* restitution in [0, 1], friction >= 0 */
    double ground;     /* the plane z = ground */
    double gravity;    /* m/s^2 along -z, >= 0 */
    double e_threshold; /* restitution acts on contacts approaching faster than this, m/s (>= 0;
                           slower ones are plastic, so a resting box does not chatter; default 0.1) */
    int warm_start;     /* 1: in rollouts and windows, each step's impulse solve starts from the
                           previous step's impulses of the points active in both (a box resting or
                           sliding on a face: about half the solver's work); the solution is verified
                           to the same tolerance. 0 (imp_rigid_model_box): from zero */
    double dv0[3];      /* added to the first state's linear velocity (world, m/s) by rollouts and
                           windows (the first output row stays the given state): the offset between a
                           measured velocity and the model's (measured velocities are finite differences
                           of the poses); 0 in imp_rigid_model_box */
} imp_rigid_model;

/* A box of the body's size with its 8 corners as the contact points. */
void imp_rigid_model_box(imp_rigid_model *m, const imp_rigid_body *body, double e, double mu, double ground,
                         double gravity);
/* Check the fields, naming the offending one. */
int imp_rigid_model_check(const imp_rigid_model *m);

/* Gradients of a loss with respect to the model's learnable parameters. */
typedef struct imp_rigid_model_grad {
    double e, mu, ground;
    double points[IMP_RIGID_MAX_POINTS][3];
} imp_rigid_model_grad;

/* What the reverse pass of one step needs (plain data, no pointers). */
typedef struct imp_rigid_step_trace {
    double h;
    double s[13];         /* input state */
    double qn[4], qnorm;  /* normalised input quaternion and |q| */
    double vm[6];         /* (v-, w-) after the kick */
    double vp[6];         /* (v+, w+) after the impulses */
    int n_active;
    int active[IMP_RIGID_MAX_POINTS];
    double phi[IMP_RIGID_MAX_POINTS];
    double e[IMP_RIGID_MAX_POINTS]; /* the restitution each active point got (0 below e_threshold) */
    imp_contact_frame frames[IMP_RIGID_MAX_POINTS];
    double J[3 * IMP_RIGID_MAX_POINTS * 6];
    double BT[3 * IMP_RIGID_MAX_POINTS * 6];
    double A[9 * IMP_RIGID_MAX_POINTS * IMP_RIGID_MAX_POINTS];
    double um[3 * IMP_RIGID_MAX_POINTS]; /* shifted pre-impact contact velocities */
    double r[4], rnorm;   /* q (x) exp(h w+/2) before normalising, its norm */
    imp_contact_solution sol;
} imp_rigid_step_trace;

/* One step of length h from s to s_out (may alias s); tr (may be NULL)
 * receives what the reverse pass needs. Fails on a bad model or state
 * (non-finite, zero quaternion) and when the impulse solve fails. */
int imp_rigid_step_forward(const imp_rigid_model *m, double h, const double s[13], double s_out[13],
                           imp_rigid_step_trace *tr);
/* Reverse pass: given s_out_bar, adds to s_bar (13) and g (may be NULL). */
int imp_rigid_step_backward(const imp_rigid_model *m, const imp_rigid_step_trace *tr, const double s_out_bar[13],
                            double s_bar[13], imp_rigid_model_grad *g);

/* n rows from x0 (row 0 = x0), `substeps` steps of dt/substeps per row. */
int imp_rigid_model_rollout(const imp_rigid_model *m, double dt, int substeps, const double x0[13], size_t n,
                            double *out);
/* imp_rigid_rollout_fn for imp_rigid_eval_rollouts, ctx an imp_rigid_model_ctx. */
typedef struct imp_rigid_model_ctx {
    const imp_rigid_model *model;
    double dt;
    int substeps;
} imp_rigid_model_ctx;
int imp_rigid_model_rollout_fn(const double x0[13], size_t n, void *ctx, double *out);

/* Energy (kinetic + potential m g z) of a state, J. */
double imp_rigid_model_energy(const imp_rigid_model *m, const double s[13]);

/* A window's loss and its gradient (for training the model's parameters by
 * gradient descent, e.g. learned corners): the rollout from meas row 0 over
 * n rows (`substeps` steps of dt/substeps per row) against meas,
 *   L = 1/(n-1) sum_{k>=1} |p^_k - p_k|^2 / width^2 + (1 - (q^_k . q_k)^2),
 * (quaternions as stored, unit). Adds dL/dparameters to g (may be NULL) and
 * writes dL/d(meas row 0) to x0_bar (may be NULL). */
int imp_rigid_window_loss(const imp_rigid_model *m, double dt, int substeps, const double *meas, size_t n,
                          double width, double *loss, imp_rigid_model_grad *g, double x0_bar[13]);
/* The same with the rotation term weighted by rot_weight (>= 0; 1: the above). */
int imp_rigid_window_loss_w(const imp_rigid_model *m, double dt, int substeps, const double *meas, size_t n,
                            double width, double rot_weight, double *loss, imp_rigid_model_grad *g,
                            double x0_bar[13]);

/* ---- box-toss: the ground-truth simulator (#24) ----
 * Random tosses of a box (the body) onto the ground: each starts with a
 * uniformly random orientation, its centre 0.15-0.35 m high (plus the
 * ground) over a point in [-0.1, 0.1]^2, a horizontal velocity of N(0, 0.6^2)
 * m/s per axis, a vertical one uniform in [-1, 1] m/s and an angular velocity
 * uniform in [-10, 10] rad/s per body axis; it then bounces, rolls, slides
 * and sticks. Integrated with the step above, `substeps` steps per sample
 * (double precision; docs/cube.md shows the convergence in the step). */
typedef struct imp_box_toss_opts {
    int n_tosses;        /* >= 1 */
    int n_samples;       /* per toss, >= 2 (default 148: 1 s) */
    double dt;           /* sample period (default 1/148 s) */
    int substeps;        /* steps per sample (default 64) */
    double e, mu;        /* default 0.3 and 0.25 */
    double ground, gravity; /* default 0 and 9.81 */
    imp_rigid_body body; /* default: the ContactNets cube */
    uint64_t seed;
} imp_box_toss_opts;
void imp_box_toss_defaults(imp_box_toss_opts *o);
/* Fill t (its previous data not freed) with the tosses; meta from o. */
int imp_box_toss_simulate(const imp_box_toss_opts *o, imp_rigid_traj *t);
/* Toss k's initial state (deterministic in seed and k). */
void imp_box_toss_initial(const imp_box_toss_opts *o, int k, double s[13]);

/* ---- rigid-identified: e, mu and the ground fitted on training tosses (#28) ----
 * The body's nominal geometry (its box corners, mass, inertia) is kept; e in
 * [0, 1], mu in [0, 2] and the ground in [-1, 1] cm are fitted by NLopt's
 * bounded Nelder-Mead (or BOBYQA) search (restarted from the best point with
 * smaller steps)
 * minimising the training tosses' mean position error (% of the width) plus
 * mean rotation error (deg), the MuJoCo peer's loss (docs/cube.md), over full
 * tosses from their first state (window 0) or over windows of `window`
 * samples starting every window/2 samples (a smoother loss: a tossed box is
 * sensitive to its parameters over a full toss). */
#define IMP_RIGID_MAX_WINDOW 1024
enum { IMP_RIGID_IDENT_NELDERMEAD = 0, IMP_RIGID_IDENT_BOBYQA = 1 };
typedef struct imp_rigid_ident_opts {
    int substeps;        /* steps per sample of the model (default 4) */
    int max_evals;       /* rollouts of the training set (default 100) */
    int window;          /* 0: full tosses (default); else samples per window, 2..IMP_RIGID_MAX_WINDOW */
    double e0, mu0, ground0; /* start (default 0.3, 0.3, the data's ground) */
    int algorithm;       /* IMP_RIGID_IDENT_NELDERMEAD (default) or IMP_RIGID_IDENT_BOBYQA (NLopt's) */
} imp_rigid_ident_opts;
typedef struct imp_rigid_ident_result {
    double loss;         /* training loss at the fit */
    imp_rigid_metrics train; /* training metrics at the fit */
    int evals;
} imp_rigid_ident_result;
void imp_rigid_ident_defaults(imp_rigid_ident_opts *o, const imp_rigid_traj *t);
/* Fit m (its geometry, mass, inertia and gravity taken from t's body) on the
 * episodes of t; m receives the fitted model. */
int imp_rigid_identify(const imp_rigid_traj *t, const int *episodes, int n_episodes, const imp_rigid_ident_opts *o,
                       imp_rigid_model *m, imp_rigid_ident_result *res);

/* ---- impulse's learned cube (#28) ----
 * The step above with its contact points (started from the caller's model,
 * e.g. the nominal box's corners), e, mu and the ground learned by Adam on
 * rollout windows: each step draws `batch` windows of `window` samples at
 * random training tosses and start samples and follows the mean gradient of
 * imp_rigid_window_loss (windows whose solve fails are skipped). Adam works
 * on the parameters in units of point_scale (points), ground_scale (the
 * ground) and 1 (e, mu), with the learning rate cosine-annealed from lr to
 * lr / 10; after every step e, mu and the ground are clamped to [0, 1],
 * [0, 2], [-1, 1] cm. Every eval_every steps the model rolls out the full
 * validation tosses (the training tosses without any); the parameters with
 * the lowest position error (% width) + rotation error (deg) there,
 * starting with the caller's, are kept. */
typedef struct imp_rigid_learn_opts {
    int substeps;      /* steps per sample (4) */
    int window;        /* samples per window, 2..IMP_RIGID_MAX_WINDOW (12) */
    int batch;         /* windows per Adam step (16) */
    int steps;         /* Adam steps (600) */
    double lr;         /* 0.02 */
    int eval_every;    /* validation every this many steps (25) */
    int learn_points;  /* 1: learn the contact points; 0: only e, mu, the ground (imp_rigid_learn_defaults: 1) */
    double point_scale, ground_scale; /* m per Adam unit (1e-3 both) */
    unsigned long long seed; /* the windows drawn */
    /* before Adam: a derivative-free full-toss fit (NLopt's bounded Nelder-Mead,
       restarted from the best point with smaller steps) of e in [0, 1], mu in
       [0, 2], the ground in [-1, 1] cm, (learn_dv0) the first state's vertical
       velocity offset dv0[2] in [-0.2, 0.2] m/s and (learn_inertia) the inertia
       on the training tosses' mean position error
       (% width) + rotation error (deg), at most fit_evals rollouts of the
       training set; 0: none (imp_rigid_learn_defaults: 0) */
    int fit_evals;
    int learn_inertia; /* 0: the start's inertia; 1: one scale on all three moments, in [0.25, 4];
                          3: each principal moment its own scale */
    int learn_dv0;     /* 1: the full-toss fit fits dv0[2] too (default 0) */
    int select_inertia; /* 1, with learn_inertia and fit_evals: the full-toss fit is run
                           twice, with the inertia learned and with the start's inertia (each at most
                           fit_evals rollouts); the one with the lower full-toss error on the
                           validation tosses (the training tosses without any) is kept, the start's
                           inertia on a tie; 0 (default): the fit with the inertia learned is kept */
    double rot_weight; /* Adam's window loss: the weight on the rotation term (imp_rigid_window_loss_w;
                          default 1; IMP_RIGID_ROT_WEIGHT_DEG_PCT weighs 1 degree as 1 % of the width,
                          the evaluation's own balance) */
    /* MAP full-toss fit: Gaussian priors on the ground (sd prior_ground_sd, m, about the start's
       ground) and on the log inertia scale(s) (sd prior_inertia_sd, about the start's inertia);
       with either > 0 the fit minimises log(L) + R / (2 n_train), L the training tosses' mean
       position % + rotation deg and R the sum of the squared prior z-scores (the posterior of an
       exponential likelihood of the per-toss errors, its scale profiled out: the prior's pull
       falls as 1/n_train). imp_rigid_learn_defaults: 2 mm and log 4; 0: no prior on it; both 0:
       the fit minimises L */
    double prior_ground_sd, prior_inertia_sd;
    /* MAP Adam: a Gaussian prior (sd prior_point_sd, m, per coordinate) on the contact points about
       the start's, in the same form (log of the window loss + R / (2 n_train)): Adam follows the
       window loss's gradient plus L / n_train (p - p_start) / sd^2. 0 (default): none */
    double prior_point_sd;
} imp_rigid_learn_opts;
/* rot_weight under which 1 degree of rotation weighs as 1 % of the width in the window loss:
   4 (180/pi / 100)^2 (1 - (q^.q)^2 is about theta^2 / 4) */
#define IMP_RIGID_ROT_WEIGHT_DEG_PCT 1.3131225400046975
void imp_rigid_learn_defaults(imp_rigid_learn_opts *o);
typedef struct imp_rigid_learn_report {
    int best_step;        /* 0: the start was best */
    double valid_score;   /* its validation position % + rotation deg */
    double train_loss;    /* the last step's mean window loss */
    int skipped_windows;
    double seconds;
    int fit_evals;        /* rollouts of the training set by the full-toss fit */
    double fit_loss;      /* its training loss (position % + rotation deg) */
    double fit_valid_nominal, fit_valid_inertia; /* select_inertia: the two fits' validation
                                                    position % + rotation deg (else NaN) */
    int inertia_kept;     /* the learn_inertia of the fit kept (0: the start's inertia) */
    double valid_position_pct, valid_rotation_deg; /* the kept model's two validation errors */
} imp_rigid_learn_report;
/* m: the start (in) and the model kept (out). */
int imp_rigid_learn(const imp_rigid_traj *t, const int *train, int n_train, const int *valid, int n_valid,
                    const imp_rigid_learn_opts *o, imp_rigid_model *m, imp_rigid_learn_report *rep);

#ifdef __cplusplus
}
#endif
#endif
