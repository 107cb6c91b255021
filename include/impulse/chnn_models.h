/* impulse constrained-network models (Finzi, Wang, Wilson 2020, [F]):
 * CHNN and CLNN in Cartesian coordinates with explicit constraints, and the
 * Neural ODE baseline in generalised coordinates, each as an imp_ode
 * right-hand side with its exact vector-Jacobian product, so that training
 * backpropagates straight through RK4 (as torchdiffeq does in the
 * reference), plus chunked training and the paper's evaluation metrics.
 *
 * State layout (per sample, row-major, batch-first):
 *   Cartesian models (CHNN, CLNN): y = (x[n*d], v[n*d]), x_i the i-th point.
 *   The CHNN is the constrained Hamiltonian flow on (x, p = M v) ([F] eq 6);
 *   because M is constant, integrating it in (x, v) gives the same RK4
 *   trajectory, so no encode/decode step is needed.
 *   Generalised models (NODE, ResNet, HNN, DeLaN): y = (q[k], qdot[k]). HNN is
 *   integrated in (q, qdot) rather than the reference's (q, p = M qdot):
 *   the same flow, a different RK4 discretisation.
 */
#ifndef IMPULSE_CHNN_MODELS_H
#define IMPULSE_CHNN_MODELS_H

#include <stddef.h>
#include <stdint.h>
#include "impulse/core.h"
#include "impulse/integrate.h"
#include "impulse/nn.h"
#include "impulse/train.h"
#include "impulse/constrained.h"
#include "impulse/constrained_contact.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The constrained system as the models see it: the full description of
 * include/impulse/constrained.h (bodies, constraint rows, potentials, the
 * generalised coordinates of the baselines; built by chnn_systems.h) plus
 * the grouping of points into bodies that the learned mass matrix of
 * [F] eq 9 needs (a point mass is a body of 1 point, a rigid body in d
 * dimensions d+1 points). Immutable value. */
typedef struct imp_csystem {
    imp_csys full;
    char name[64];
    int d, n_points, n_bodies, n_rows, n_gen;
    int body_first[IMP_CSYS_MAX_BODIES], body_size[IMP_CSYS_MAX_BODIES];
    int gen_is_angle[IMP_CSYS_MAX_GEN];
    double dt;                  /* the benchmark's time step */
} imp_csystem;

/* A benchmark by name (imp_chnn_system: "pendulum-chain:N",
 * "coupled-pendulums:N", "magnet-pendulum", "gyroscope", "rotor"). */
int imp_csystem_from_name(imp_csystem *cs, const char *name);
/* Wrap an already built description (e.g. from a system file). A system
 * file's description has no generalised coordinates; the baselines (HNN,
 * DeLaN, NODE) then use its Cartesian coordinates (n_gen = N <=
 * IMP_CSYS_MAX_GEN, no angles) without the constraints. */
int imp_csystem_from_csys(imp_csystem *cs, const imp_csys *s);
/* 1 if a and b are the same system: the same name and, for systems described
 * in files, the same text up to comments, blank lines and spacing; else 0
 * with one phrase in `why` naming what differs (the first differing line). */
int imp_csystem_same(const imp_csystem *a, const imp_csystem *b, char *why, size_t cap);
/* The system a dataset's or checkpoint's meta JSON describes: the text of
 * its system file (key "system_text") if present, else the built-in
 * benchmark named by "system". `what` (the file name) prefixes messages. */
int imp_csystem_from_meta(imp_csystem *cs, const char *meta, const char *what);
/* Phi (n_rows) and Phi_dot (n_rows) of one Cartesian state y = (x, v). */
void imp_csystem_violation(const imp_csystem *cs, const double *y, double *phi, double *phidot);
/* True total energy of one Cartesian state y = (x, v). */
double imp_csystem_energy(const imp_csystem *cs, const double *y);
/* Cartesian (x, v) <-> generalised (q, qdot) for the baselines (n_gen > 0). */
int imp_csystem_to_generalised(const imp_csystem *cs, const double *y, double *z);
int imp_csystem_from_generalised(const imp_csystem *cs, const double *z, double *y);

/* ---- models ---- */
typedef enum imp_cmodel_kind {
    IMP_CMODEL_CHNN = 0,
    IMP_CMODEL_CLNN,
    IMP_CMODEL_NODE,
    IMP_CMODEL_HNN,   /* generalised coordinates, learned M^-1(q) = L L^T + 1e-4 I */
    IMP_CMODEL_DELAN, /* generalised coordinates, learned M(q) = L L^T + 1e-4 I */
    IMP_CMODEL_RESNET /* the discrete-time baseline: y_{n+1} = y_n + dt f(y_n) per sample
                       * interval, f NODE's network on NODE's inputs (generalised
                       * coordinates, angles embedded); trained and rolled out with
                       * exactly that step (one forward-Euler step of dt per sample,
                       * never substepped), so that it is the literature's ResNet
                       * (next state = state + MLP(state)), not an ODE */
} imp_cmodel_kind;

int imp_cmodel_kind_from_name(const char *name, imp_cmodel_kind *out);
const char *imp_cmodel_kind_name(imp_cmodel_kind k);

/* Immutable model description. Parameters live in a caller-owned flat
 * array of n_params doubles: the MLP first, then (CHNN/CLNN) one mass
 * parameter per point (body b: theta_0 -> m = e^theta_0, theta_i ->
 * lambda-tilde_i = e^theta_i, [F] eq 9 as the reference implements it). */
typedef struct imp_cmodel {
    imp_cmodel_kind kind;
    imp_csystem sys;
    int cartesian;      /* 1: state (x, v) in R^{2nd}; 0: (q, qdot) in R^{2k} */
    int dim;            /* ODE state size per sample */
    int hidden, depth;  /* MLP width and hidden layers (reference 256, 3) */
    imp_mlp net;        /* V(x) for CHNN/CLNN, V(q) for HNN/DeLaN; dynamics for NODE, the
                         * residual step's f for ResNet */
    imp_mlp mass_net;   /* HNN/DeLaN: embed(q) -> k x k entries of the Cholesky factor */
    size_t off_mass;    /* first mass parameter (CHNN/CLNN) or mass_net's (HNN/DeLaN) */
    size_t n_params;
    /* With contact (imp_cmodel_enable_contact; CHNN/CLNN on a system with
     * contacts): the last 2 n_contacts parameters, from off_contact, are per
     * contact c a_c and b_c with e = sigmoid(s a_c), mu = softplus(s b_c)
     * = log(1 + e^(s b_c)), s = contact_scale (IMP_CMODEL_CONTACT_SCALE; 1 in
     * checkpoints written before it): Adam moves every parameter by about lr
     * per step, and s makes that s lr in logit units for e and mu; 0 without. */
    int contact;
    size_t off_contact;
    double contact_scale;
} imp_cmodel;

int imp_cmodel_init(imp_cmodel *m, imp_cmodel_kind kind, const imp_csystem *sys, int hidden,
                    int depth);
/* 1 for a discrete-time model (IMP_CMODEL_RESNET): its right-hand side f is
 * the residual of the step y + dt f(y) per sample interval, which training
 * (imp_ctrain, imp_ctrain_chunk_loss) and rollouts (imp_ceval,
 * imp_cmodel_rollout) take as it is, one forward-Euler step of the data's dt
 * per sample; 0 for the ODE models (0 for NULL). */
int imp_cmodel_discrete(const imp_cmodel *m);
/* Reference initialisation: orthogonal weights, PyTorch-default biases
 * U(-1/sqrt(fan_in), 1/sqrt(fan_in)), mass parameters 0.1 N(0, 1); except
 * (Δ) the HNN/DeLaN mass network's output layer, which starts at L = I
 * (zero weights, diagonal biases log(e - 1)), a constant identity mass. */
void imp_cmodel_init_params(const imp_cmodel *m, double *params, imp_rng *rng);

/* ---- contact (issue #25; docs/derivations/contact.md section 10) ----
 * A CHNN or CLNN whose system declares contacts (planes and body contact
 * shapes, imp_csys.contacts) can learn e and mu per contact: between
 * impacts the model's own flow (RK4 in training, the same fixed steps in
 * rollouts); after a step of size h from y_k to y* = (x*, v*) every contact
 * whose gap phi(x*) < 0 while closing (J_n v* < 0) is active, and
 *   v+ = v* + P J^T lambda,  lambda = the contact module's solve with
 *        A = J P J^T, u- = J v*, the learned e and mu,
 *   P = W - W D^T (D W D^T)^-1 D W (W the learned inverse mass, D = DPhi(x*)),
 *   x+ = x* + (1 - alpha) h (v+ - v*),  alpha = phi(x_k) / (phi(x_k) - phi(x*))
 * (the earliest active contact's crossing fraction, 0 if it already
 * penetrated at x_k): the velocity jump from the crossing on. */
#define IMP_CMODEL_CONTACT_SCALE 10.0
/* Append the contact parameters (CHNN/CLNN on a system with contacts),
 * contact_scale IMP_CMODEL_CONTACT_SCALE. */
int imp_cmodel_enable_contact(imp_cmodel *m);
/* Set contact c's e (in (0, 1)) and mu (> 0) in params. */
int imp_cmodel_set_contact(const imp_cmodel *m, double *params, int c, double e, double mu);
/* Initial contact parameters: e = 0.5, mu = 0.25 for every contact. */
void imp_cmodel_init_contact_params(const imp_cmodel *m, double *params);
/* The learned e and mu of every contact (n_contacts each). */
void imp_cmodel_contact_values(const imp_cmodel *m, const double *params, double *e, double *mu);
/* The contact map of one sample: x_k (the state's position at the step's
 * start), y (in: y* = (x*, v*) after the step; out: y+), h the step size.
 * *n_active (may be NULL) receives the number of active contacts. */
int imp_cmodel_contact_step(const imp_cmodel *m, const double *params, const double *xk, double *y, double h,
                            int *n_active);
/* The learned impact map alone, at a state (x, v) on the contact (issue
 * #25's impact-energy measure): v+ = v + P J^T lambda with the learned P at
 * x and the learned e and mu of the n contacts in active, whatever their
 * gaps and velocities (no step, no projection: v+ keeps the joints if v
 * does). vout (N) receives v+; kin (may be NULL; 2) the learned kinetic
 * energy 1/2 v^T M v (M = W^-1, the learned masses, defined up to a scale
 * shared with the potential) before and after; A (may be NULL; (n d)^2,
 * row-major) the learned contact compliance J P J^T, rows normal first. */
int imp_cmodel_contact_impulse(const imp_cmodel *m, const double *params, const double *x, const double *v,
                               const int *active, int n, double *vout, double *kin, double *A);
/* Its reverse: ybar (in: dL/dy+; out: dL/dy*), xkbar += dL/dx_k,
 * theta_bar (may be NULL) += dL/dtheta (masses, e, mu). ystar is the state
 * the forward map received. */
int imp_cmodel_contact_step_vjp(const imp_cmodel *m, const double *params, const double *xk, const double *ystar,
                                double h, double *ybar, double *xkbar, double *theta_bar);
/* A rollout with contact: n_states states dt apart from x0 (Cartesian),
 * each interval in `substeps` RK4 steps with the contact map after each
 * (out: n_states x 2 n d). impacts (may be NULL) counts the maps that acted. */
int imp_cmodel_contact_rollout(const imp_cmodel *m, const double *params, const double *x0, int n_states, double dt,
                               int substeps, double *out, int *impacts);
/* The same with each interval integrated by DOPRI5 (dop's rtol, atol,
 * max_steps per interval; dop NULL: one RK4 step, as above with substeps
 * 1) and the contact map after it (h = dt): the rollouts of imp_ceval and
 * imp_cmodel_rollout, whose joints then hold to the tolerance of the
 * rollouts without contact away from impacts. acted (may be NULL; n_states)
 * receives 1 at each state whose interval's contact map acted, else 0. */
int imp_cmodel_contact_rollout_dopri5(const imp_cmodel *m, const double *params, const double *x0, int n_states,
                                      double dt, const imp_dopri5_opts *dop, double *out, int *acted);

/* Run-time scratch for batches of up to max_batch samples. */
typedef struct imp_cmodel_work imp_cmodel_work;
imp_cmodel_work *imp_cmodel_work_new(const imp_cmodel *m, int max_batch);
/* With n_slots network caches side by side, so that a training rollout can
 * keep every stage's network pass for its reverse sweep (see _slot below). */
imp_cmodel_work *imp_cmodel_work_new_slots(const imp_cmodel *m, int max_batch, int n_slots);
void imp_cmodel_work_free(imp_cmodel_work *w);
int imp_cmodel_work_slots(const imp_cmodel_work *w);
/* The network's hidden-to-hidden products in single precision (on != 0)
 * or double (0, the default) in every slot: imp_mlp_work_set_gemm_single. */
int imp_cmodel_work_set_single_products(imp_cmodel_work *w, int on);

/* ydot (B x dim) = f(y (B x dim)). */
int imp_cmodel_rhs(const imp_cmodel *m, const double *params, const double *y, int B,
                   double *ydot, imp_cmodel_work *w);
/* ybar += (df/dy)^T fbar; theta_bar (if not NULL) += (df/dtheta)^T fbar. */
int imp_cmodel_rhs_vjp(const imp_cmodel *m, const double *params, const double *y, int B,
                       const double *fbar, double *ybar, double *theta_bar,
                       imp_cmodel_work *w);

/* The same, keeping the network pass of this evaluation in cache `slot`;
 * imp_cmodel_rhs_vjp_slot then reuses it instead of recomputing: y must be
 * the state of the last imp_cmodel_rhs_slot on that slot. (Slot 0 is the
 * one the plain calls overwrite.) */
int imp_cmodel_rhs_slot(const imp_cmodel *m, const double *params, const double *y, int B,
                        double *ydot, imp_cmodel_work *w, int slot);
int imp_cmodel_rhs_vjp_slot(const imp_cmodel *m, const double *params, const double *y, int B,
                            const double *fbar, double *ybar, double *theta_bar, imp_cmodel_work *w,
                            int slot);

/* Bind a model to an imp_ode (the binding must outlive the ode). */
typedef struct imp_cmodel_binding {
    const imp_cmodel *m;
    const double *params;
    imp_cmodel_work *w;
} imp_cmodel_binding;
void imp_cmodel_ode(imp_ode *ode, imp_cmodel_binding *bind);


/* ---- data: trajectories in the model's coordinates ---- */
/* A set of trajectories: n_traj x T x dim (dim = the model's state size). */
typedef struct imp_ctraj {
    int n_traj, T, dim;
    double dt;
    double *z;     /* owned */
    int widened_f32; /* imp_ctraj_load: arrays of the file stored as float32 and converted (0: none) */
} imp_ctraj;
void imp_ctraj_free(imp_ctraj *t);
/* Load a trajectory file: arrays "z" (n_traj x T x 2 x n x d) or "x" and
 * "v" (n_traj x T x n x d), "t" (T), float64 or float32 (converted, counted
 * in out->widened_f32 for the caller to say), meta JSON with "system" (and
 * "system_text" for a system described in a file; see
 * imp_csystem_from_meta). sys (may be NULL) receives the system. */
int imp_ctraj_load(const char *path, imp_ctraj *out, imp_csystem *sys);
/* The data against the system (imp_ctraj_load runs it): every distance
 * constraint (a rod) as long on average in the data as in the system, within
 * 1 % of its length plus the bias noise gives a mean distance; else
 * IMP_ERR_INVALID naming `path`, the constraint and both lengths. */
int imp_ctraj_check(const imp_csystem *cs, const imp_ctraj *d, const char *path);
/* The same, writing only the system name into sys_name (64 bytes). */
int imp_ctraj_load_cartesian(const char *path, imp_ctraj *out, char *sys_name);
/* Convert Cartesian trajectories to the generalised coordinates of sys
 * (angles unwrapped along time). */
int imp_ctraj_to_generalised(const imp_csystem *sys, const imp_ctraj *in, imp_ctraj *out);

/* ---- training ([F] section 7, reference settings) ---- */
#define IMP_CTRAIN_MAX_THREADS 64
#define IMP_CTRAIN_MAX_SUBSTEPS 64
/* imp_ctrain_opts.contact_substeps 0: the default number of contact substeps */
#define IMP_CTRAIN_CONTACT_SUBSTEPS 1
typedef struct imp_ctrain_opts {
    int epochs;            /* 2000 in the reference */
    double lr;             /* 3e-3 */
    double weight_decay;   /* 1e-4 (AdamW) */
    int batch;             /* 200 */
    int n_chunks;          /* 800: one random chunk per trajectory, first n kept */
    int chunk_steps;       /* 4 target steps (5 states) */
    unsigned long long seed;
    int threads;           /* 1 (library default) .. IMP_CTRAIN_MAX_THREADS: each minibatch
                            * is cut into this many contiguous slices, one per thread
                            * (see imp_ctrain_pool); the same seed and thread count give
                            * bit-identical results, other counts agree to rounding */
    int single_products;   /* 1: the network's hidden-to-hidden products in float
                            * (imp_mlp_work_set_gemm_single), everything else double;
                            * 0: all double. Negative (default): single for CHNN, whose
                            * 2000-epoch accuracy was measured to hold (docs/chnn.md),
                            * double for the others (see imp_ctrain_single_products) */
    int warmup_steps;      /* linear learning-rate warm-up over the first optimiser steps:
                            * step t < W uses lr (t + 1) / W. -1 (default): 20 for HNN, DeLaN
                            * and NODE, 0 for CHNN and CLNN (see imp_ctrain_warmup_steps) */
    double grad_clip;      /* largest L2 norm of a minibatch gradient (imp_clip_grad_norm);
                            * 0: no clipping. Negative (default): 1 for HNN, DeLaN and
                            * NODE, 0 for CHNN and CLNN (see imp_ctrain_grad_clip) */
    int all_windows;       /* 0 (reference): one random window per trajectory; 1: every
                            * non-overlapping window of every trajectory (long trajectories) */
    int max_substeps;      /* largest number of RK4 substeps per sample interval of a fast
                            * window (imp_ctrain_window_substeps): 0 (default):
                            * IMP_CTRAIN_MAX_SUBSTEPS; 1: none, every window with the
                            * reference's fixed step dt */
    double skip_factor;    /* spike filter, opt-in: a minibatch whose rollout or gradient is
                            * not finite, or (from the second epoch on) whose loss exceeds
                            * skip_factor times the best epoch's mean loss so far, is not stepped
                            * (counted in imp_ctrain_result.skipped_batches, left out of
                            * the epoch's mean loss). 0 (default): off; else > 1 */
    int contact_substeps;  /* a model with contact (imp_cmodel_enable_contact): RK4 substeps
                            * per sample interval, each followed by the contact map, of every
                            * window the data put near a contact (imp_ctrain_contact_window),
                            * the loss still at the samples; the others keep one step and one
                            * map per sample. 0 (default): IMP_CTRAIN_CONTACT_SUBSTEPS;
                            * 1: none; else 2..IMP_CTRAIN_MAX_SUBSTEPS. Ignored without contact */
    int verbose;           /* progress callback every epoch if set */
    void (*progress)(void *user, int epoch, double loss, double seconds);
    void *progress_user;
    imp_train_hooks hooks; /* per-epoch callback (loss part "l1"), loss history, divergence
                              guard, resumable state (include/impulse/train.h) */
} imp_ctrain_opts;
void imp_ctrain_opts_default(imp_ctrain_opts *o);

typedef struct imp_ctrain_result {
    double final_loss;     /* mean training loss of the last epoch */
    double seconds;        /* training wall time */
    double critical_seconds; /* CPU time of the critical path: the calling thread's CPU
                            * time with each minibatch's own slice replaced by the
                            * slowest slice's (thread CPU clocks), i.e. the training
                            * time on cores nothing else uses, without hand-off costs */
    int epochs;
    int substepped_windows; /* training windows integrated with more than one RK4 step per
                            * sample interval (imp_ctrain_window_substeps) */
    int max_substeps;      /* the most substeps of any window (1: none substepped) */
    int skipped_batches;   /* minibatches the spike filter skipped (opts.skip_factor; this
                            * session's, for a resumed run) */
    int contact_windows;   /* training windows near a contact integrated with
                            * opts.contact_substeps substeps (0 without contact or with 1) */
} imp_ctrain_result;

/* Cut chunks: for trajectory i < n_chunks, one random window of
 * chunk_steps + 1 states, non-overlapping grid of T / (steps+1) windows as in
 * the reference. chunks: n_chunks x (steps+1) x dim (malloc'd). */
int imp_ctrain_make_chunks(const imp_ctraj *data, int n_chunks, int chunk_steps, imp_rng *rng,
                           double **chunks, int *n_out);
/* Every window: all T / (steps+1) non-overlapping windows of every
 * trajectory in order (trajectory 0's first), the first n_chunks of them. */
int imp_ctrain_all_windows(const imp_ctraj *data, int n_chunks, int chunk_steps, double **chunks,
                           int *n_out);
/* L1 loss of one batch of chunks (B x (S+1) x dim) under RK4 with step dt,
 * mean over every entry including t0 (as the reference); if grad != NULL,
 * accumulates dL/dtheta. traj/traj_bar: (S+1) x B x dim each. If w has at
 * least 4 S + 1 slots, the rollout keeps every stage's network pass and the
 * reverse sweep reuses them (same result as imp_integrate_fixed_vjp through
 * imp_stepper_rk4, a third of the network work); otherwise it goes through
 * the generic integrator. */
int imp_ctrain_chunk_loss(const imp_cmodel *m, const double *params, const double *chunks, int B,
                          int S, double dt, imp_cmodel_work *w, double *traj, double *traj_bar,
                          double *grad, double *loss);

/* RK4 substeps per sample interval for one training window (n_states x dim,
 * the state (position, velocity) with dim / 2 of each): r = ceil(max |v| dt)
 * over every velocity entry of every state, clamped to
 * 1..IMP_CTRAIN_MAX_SUBSTEPS; 1 when the data move at most one unit (one
 * radian, in generalised coordinates) per sample interval. A window passing
 * near a singular configuration of the generalised coordinates (the rotor's
 * Euler angles near gimbal lock, where the angle rates reach ~200 rad/s)
 * turns by several radians between two samples, which four fixed RK4 steps
 * of dt cannot follow: the rollout, its loss and its gradient blow up
 * (docs/chnn.md, "Training from the defaults"). imp_ctrain integrates such a
 * window with r steps of dt / r per sample interval, the loss still at the
 * samples. Returns 1 for invalid arguments (NULL, dim < 2, dt <= 0). */
int imp_ctrain_window_substeps(const double *window, int n_states, int dim, double dt);
/* Whether a training window (n_states x m->dim, positions then velocities)
 * passes near one of the contacts of a model with contact: at some state of
 * it some contact's gap phi <= 2 dt |J_n v| (the distance the
 * normal velocity there covers in two sample intervals: the states just
 * before and just after an impact; a sustained contact, phi about 0,
 * always). Such a window is where one
 * contact map per sample falls short of a contact the data resolve finer
 * (the gyroscope's rim on the wall, docs/chnn-systems.md); imp_ctrain
 * integrates it with opts.contact_substeps substeps. *near receives 1 if
 * so, else 0 (always 0 for a model without contact). */
int imp_ctrain_contact_window(const imp_cmodel *m, const double *window, int n_states, double dt, int *near);
/* The contact substeps imp_ctrain uses for this model and options (1 for a
 * model without contact). */
int imp_ctrain_contact_substeps(const imp_cmodel *m, const imp_ctrain_opts *o);
/* imp_ctrain_chunk_loss with substeps[b] RK4 steps of dt / substeps[b] per
 * sample interval for chunk b (each in 1..IMP_CTRAIN_MAX_SUBSTEPS; NULL: all
 * 1, which is imp_ctrain_chunk_loss). The loss is still the mean over the
 * S + 1 samples of every chunk; the gradient goes through every substep.
 * Chunks with 1 substep are computed together exactly as
 * imp_ctrain_chunk_loss computes them; each substepped chunk is integrated
 * on its own with scratch allocated inside (taped whatever w's slots). */
int imp_ctrain_chunk_loss_substeps(const imp_cmodel *m, const double *params, const double *chunks,
                                   const int *substeps, int B, int S, double dt, imp_cmodel_work *w,
                                   double *traj, double *traj_bar, double *grad, double *loss);
/* The chunk loss of a minibatch on several threads. A pool keeps `threads`
 * - 1 POSIX threads alive (the caller's thread is the first worker), each
 * with its own work buffers (4 S + 1 network caches for ceil(max_batch /
 * threads) chunks), rollout buffers and gradient buffer. imp_ctrain_pool_loss
 * cuts the B chunks (B x (S+1) x dim, B <= max_batch) into `threads`
 * contiguous slices (the first B % threads one chunk longer), runs the taped
 * chunk loss of each slice on its thread, normalised by the whole batch's
 * entry count, and sums losses and gradients in slice order: *loss is the
 * mean L1 loss of imp_ctrain_chunk_loss on the whole batch and grad (if not
 * NULL) += its gradient, equal to the one-thread result up to the order of
 * the floating-point sums, and bit-identical from call to call for a given
 * thread count. A failure in any slice is returned with that slice's
 * message (the first failing slice in order). BLAS calls must be
 * single-threaded (imp_blas_init()). One pool serves one caller thread at a
 * time; the model must outlive it. */
typedef struct imp_ctrain_pool imp_ctrain_pool;
int imp_ctrain_pool_new(imp_ctrain_pool **out, const imp_cmodel *m, int max_batch, int chunk_steps,
                        int threads);
int imp_ctrain_pool_threads(const imp_ctrain_pool *p);
/* imp_cmodel_work_set_single_products on every thread's work. */
int imp_ctrain_pool_set_single_products(imp_ctrain_pool *p, int on);
/* CPU seconds (thread CPU clock) thread t spent on its slice in the last
 * imp_ctrain_pool_loss (0 for an empty slice). */
double imp_ctrain_pool_slice_cpu(const imp_ctrain_pool *p, int t);
int imp_ctrain_pool_loss(imp_ctrain_pool *p, const double *params, const double *chunks, int B, double dt,
                         double *grad, double *loss);
/* The same with substeps[b] RK4 substeps for chunk b (NULL: all 1; see
 * imp_ctrain_chunk_loss_substeps): a slice with no substepped chunk computes
 * exactly what imp_ctrain_pool_loss does; each thread keeps scratch for its
 * substepped chunks, grown to the most substeps it has seen. */
int imp_ctrain_pool_loss_substeps(imp_ctrain_pool *p, const double *params, const double *chunks,
                                  const int *substeps, int B, double dt, double *grad, double *loss);
void imp_ctrain_pool_free(imp_ctrain_pool *p);

/* The warm-up length imp_ctrain uses for this model and options. Adam's
 * first steps move every weight by about lr whatever its gradient; for the
 * learned mass matrices of HNN and DeLaN (and NODE's vector field) a
 * full-size first step at lr 3e-3 can make M(q) nearly singular and the
 * rollout diverge in epoch 0. */
int imp_ctrain_warmup_steps(const imp_cmodel *m, const imp_ctrain_opts *o);
/* The gradient-norm bound imp_ctrain uses for this model and options. A
 * training window that passes close to a singular configuration of the
 * generalised coordinates (the rotor's Euler angles near gimbal lock) can
 * make one minibatch's rollout, and its gradient, blow up by many orders of
 * magnitude; unclipped, that one gradient steers Adam for the next steps
 * (docs/chnn.md, "Training from the defaults"). */
double imp_ctrain_grad_clip(const imp_cmodel *m, const imp_ctrain_opts *o);

/* Whether training runs the hidden-to-hidden products in float: o->single_products
 * when it is 0 or 1, else the default of m's kind (1 for CHNN, 0 for the others). */
int imp_ctrain_single_products(const imp_cmodel *m, const imp_ctrain_opts *o);
/* The reference's learning rate for a system: 1e-3 for "rotor" and
 * "magnet-pendulum", 3e-3 otherwise ([chnn] section 3). */
double imp_ctrain_reference_lr(const char *system);
/* Train with opts->threads threads (an imp_ctrain_pool per run). The
 * divergence guard (opts->hooks.diverge_factor) stops CHNN and CLNN at the
 * first epoch whose loss exceeds diverge_factor times the best epoch's, and
 * HNN, DeLaN and NODE at the second such epoch in a row (one window whose
 * rollout blows up, as near the rotor's gimbal lock, makes one epoch's
 * loss huge without the model having diverged). */
int imp_ctrain(const imp_cmodel *m, double *params, const imp_ctraj *data,
               const imp_ctrain_opts *opts, imp_ctrain_result *res);

/* ---- evaluation ([F] section 7, appendix B) ---- */
#define IMP_CEVAL_STEPS_PER_SAMPLE 100
#define IMP_CEVAL_MAX_SECONDS 600.0
typedef struct imp_ceval_opts {
    int n_test;        /* trajectories used (<= file's count; 0: all) */
    int steps;         /* rollout length in steps (reference 100 states) */
    double rtol, atol; /* DOPRI5 (reference 1e-7, 1e-9) */
    /* Budget of a rollout, so that a diverging or stiff model stops with an
     * error naming the model and the trajectory instead of running for
     * hours: DOPRI5 steps per sample interval of the data's horizon (the
     * budget is max_steps_per_sample * max(T - 1, 10); default 100) and wall
     * time (default 600 s). */
    int max_steps_per_sample;
    double max_seconds;
    /* models with contact: 1 rolls out with one fixed RK4 step per sample
     * (training's integrator) instead of DOPRI5 (default 0) */
    int contact_rk4;
} imp_ceval_opts;
void imp_ceval_opts_default(imp_ceval_opts *o);

typedef struct imp_ceval_result {
    int n_test, T;
    double mean_geo;       /* mean over test trajectories of the geometric mean rel. error */
    double median_geo;
    double *geo;           /* n_test */
    double *rel_err;       /* n_test x T, relative error over time */
    double *energy_err;    /* n_test x T */
    double *violation;     /* n_test x T, |Psi(x, v)|_2 of the prediction */
    double mean_energy_err;
    double mean_violation;
    double seconds;
    /* models with contact (has_contact 1): the energy lost at the truth's
     * impacts (imp_csys_impact_energy), for one-step predictions from the
     * truth's states and for the rollouts (window IMP_CEVAL_IMPACT_WINDOW);
     * the mean violation over the rollout states at least
     * IMP_CEVAL_IMPACT_WINDOW states from any interval in which the model's
     * contact map acted (violation_away_states of them) */
    int has_contact;
    imp_impact_energy impact_one_step, impact_rollout;
    /* the one-step predictions in which the model's contact map acted
     * (found by the model, so also elastic impacts, where the truth loses
     * nothing): their count, the truth's and the model's energy lost
     * (H(truth_k) - H(truth_k+1), H(truth_k) - H(model_k+1)) and the truth's
     * kinetic energy before them, each summed */
    long map_steps;
    double map_truth_lost, map_model_lost, map_kinetic;
    double mean_violation_away;
    long violation_away_states;
    /* the relative state error summed over the first 5 steps and over the
     * whole rollout (the start excluded), mean over the test trajectories
     * (issue #25's measures) */
    double sum_rel_err_5, sum_rel_err;
    /* models with contact: the impact map alone, free of the flow's error
     * over a sample step. The truth's simulator is re-run over every sample
     * interval from the truth's state at its start; at each impact it
     * locates that dissipates more than 1e-4 of the trajectory's largest
     * kinetic energy, the model's map (imp_cmodel_contact_impulse: learned
     * P, e, mu) is applied to the same pre-impact state. Compared: the
     * fraction of kinetic energy lost, dT/T, the truth's (true masses)
     * against the model's measured in its learned mass metric (impact_map;
     * scale-free) and in the true one (impact_map_true). In these entries
     * truth_lost and model_lost sum the fractions times the truth's kinetic
     * energy before each impact, so rel_error is the error of the total
     * energy lost; the per-impact errors compare the fractions. */
    imp_impact_energy impact_map, impact_map_true;
    long map_elastic, map_resting; /* located impacts below the threshold; sustained-contact impulses (skipped) */
    /* the first acting contact's compliance A = J P J^T at those states
     * normalised by its normal entry (rows normal first): means over the
     * impacts of the tangential diagonal / A_nn and of |A_nt| / A_nn, the
     * model's and the truth's, and of the relative Frobenius error of the
     * model's normalised A */
    double compliance_tt_model, compliance_tt_truth, compliance_nt_model, compliance_nt_truth,
        compliance_rel_error;
} imp_ceval_result;
#define IMP_CEVAL_IMPACT_WINDOW 2
void imp_ceval_result_free(imp_ceval_result *r);

/* Relative error ||a - b|| / (||a|| + ||b||) of two vectors. */
double imp_ceval_rel_err(const double *a, const double *b, int n);
/* g = exp(dt * trapz_k log(err_k + 1e-8) / (T dt)): the reference's
 * per-trajectory geometric mean ([chnn] section 3). */
double imp_ceval_geo_mean(const double *err, int T);
/* Roll the model out with DOPRI5 from the first state of each test
 * trajectory (Cartesian data, n x T x 2nd), compare in Cartesian space. */
int imp_ceval(const imp_cmodel *m, const double *params, const imp_ctraj *test,
              const imp_ceval_opts *opts, imp_ceval_result *res);

/* One rollout as imp_ceval does it (DOPRI5 with opts' rtol/atol; opts may
 * be NULL for the defaults) from the Cartesian state x0 (2 n d values: x
 * then v), n_states states dt apart (row 0 = x0), written in Cartesian
 * coordinates to out (n_states x 2 n d). */
int imp_cmodel_rollout(const imp_cmodel *m, const double *params, const double *x0, int n_states, double dt,
                       const imp_ceval_opts *opts, double *out);

/* ---- benchmark data for experiments ([chnn] section 1) ---- */
/* Training set: n_traj ground-truth trajectories of T states (the
 * benchmark's dt) from the reference initial-state distribution, seed
 * `seed` (the reference uses 0 for training, 2 for testing). */
int imp_cexp_train_data(const imp_csystem *sys, int n_traj, int T, uint64_t seed, imp_ctraj *out);
/* Test set as the reference evaluates: each trajectory starts at the first
 * state of a random 5-state chunk of a ground-truth trajectory (start in
 * {0, 5, ..., 95}) and runs T states from there. */
int imp_cexp_test_data(const imp_csystem *sys, int n_traj, int T, uint64_t seed, imp_ctraj *out);
/* "GT + pert": ground truth from each test start perturbed by
 * 1e-4 N(0, 1) on every component of the Cartesian (x, v) and projected
 * onto the constraints as the reference does (imp_csys_project_state:
 * Euclidean metric on (x, v) jointly; pl_trainer.py compare_rollouts); the
 * relative error of those rollouts against the test set, per trajectory
 * geometric mean, averaged (the paper's noise floor bar). */
int imp_cexp_perturbed_floor(const imp_csystem *sys, const imp_ctraj *test, uint64_t seed,
                             double *mean_geo);

/* ---- checkpoints ---- */
/* opts/res (may be NULL) are recorded in the meta for provenance. */
int imp_cmodel_save(const char *path, const imp_cmodel *m, const double *params,
                    const imp_ctrain_opts *opts, const imp_ctrain_result *res);
/* Loads the model description (kind, system, width) and parameters. */
int imp_cmodel_load(const char *path, imp_cmodel *m, double **params);
/* Read only the kind of a checkpoint (for CLI dispatch). */
int imp_cmodel_peek_kind(const char *path, char *kind, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
