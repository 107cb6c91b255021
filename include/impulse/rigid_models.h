/* impulse models of one free rigid body (the tossed cube, docs/cube.md)
 * over the trajectories of include/impulse/rigid_traj.h.
 *
 * The end-to-end baseline (the literature's "end-to-end" network): a
 * residual network predicting the next state from the current one,
 *   x_{k+1} = x_k + mu + sigma * f(u(x_k)),   q_{k+1} normalised,
 * f an MLP, u(x) the standardised features (q, z, w, v): translation
 * invariant in x and y, q taken with w >= 0 (q and -q are one orientation;
 * the quaternion's step is turned back with the sign); mu, sigma the mean
 * and spread of the training steps' state changes. Trained on rollout
 * windows of H steps from measured states (mean squared error of the
 * states, each component over sigma: for H = 1 the standardised change)
 * with Adam on minibatches of the training tosses' windows, optionally
 * with their first states perturbed by noise (as in learned simulators
 * since Sanchez-Gonzalez et al. 2020); the parameters kept are those
 * with the lowest full-toss rollout error (position % of width + rotation
 * degrees) on the validation tosses, checked every eval_every steps. */
#ifndef IMPULSE_RIGID_MODELS_H
#define IMPULSE_RIGID_MODELS_H

#include "impulse/nn.h"
#include "impulse/rigid_traj.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMP_RIGID_E2E_IN 11

typedef struct imp_rigid_e2e_opts {
    int hidden;          /* units per hidden layer (128) */
    int layers;          /* hidden layers (2) */
    imp_activation act;  /* hidden activation (tanh) */
    int steps;           /* Adam steps (4000) */
    int batch;           /* pairs per step (256; fewer if the data have fewer) */
    double lr;           /* 1e-3, cosine-annealed to lr / 10 */
    int eval_every;      /* validation rollouts every this many steps (250) */
    int window;          /* rollout window H: the loss sums the error of H steps rolled out from
                            a measured state (backpropagated through the steps); 1: one step (1) */
    double noise;        /* input noise: each state component of a training pair's first state
                            moved by N(0, (noise * its typical one-step change)^2), the target
                            the measured next state (the network learns to pull a drifting
                            rollout back); 0: none (default 1) */
    unsigned long long seed; /* initialisation and minibatches */
} imp_rigid_e2e_opts;
void imp_rigid_e2e_opts_default(imp_rigid_e2e_opts *o);

typedef struct imp_rigid_e2e {
    imp_mlp net;
    double *params;                     /* net.n_params */
    double in_mean[IMP_RIGID_E2E_IN], in_scale[IMP_RIGID_E2E_IN];
    double out_mean[IMP_RIGID_STATE], out_scale[IMP_RIGID_STATE];
    imp_mlp_work *work;                 /* batch 1: rollouts */
} imp_rigid_e2e;

typedef struct imp_rigid_e2e_report {
    int best_step;          /* step whose parameters were kept */
    double valid_score;     /* their validation position % + rotation deg (NAN without validation tosses) */
    double train_loss;      /* last step's minibatch loss */
    double seconds;
} imp_rigid_e2e_report;

/* Create the network (opts' shape, Glorot initialisation from opts->seed)
 * with identity scaling. */
int imp_rigid_e2e_init(imp_rigid_e2e *m, const imp_rigid_e2e_opts *o);
void imp_rigid_e2e_free(imp_rigid_e2e *m);
/* Set the scaling from the consecutive pairs of the given episodes of t. */
int imp_rigid_e2e_set_scaling(imp_rigid_e2e *m, const imp_rigid_traj *t, const int *episodes, int n_episodes);
/* Features u (11) of a state. */
void imp_rigid_e2e_features(const imp_rigid_e2e *m, const double x[13], double u[IMP_RIGID_E2E_IN]);
/* Loss of B rollout windows of H steps: x0 (B x 13) the first states,
 * target (B x H x 13) the measured next H states; the mean over windows,
 * steps and the 13 components of ((x^ - x) / sigma)^2. grad (may be NULL)
 * ACCUMULATES dL/dparams; w[0..H-1] work spaces of max batch >= B. */
double imp_rigid_e2e_window_loss(const imp_rigid_e2e *m, const double *params, const double *x0, const double *target,
                                 int B, int H, double *grad, imp_mlp_work **w);
/* The next state. */
int imp_rigid_e2e_step(imp_rigid_e2e *m, const double x[13], double xn[13]);
/* imp_rigid_rollout_fn with ctx an imp_rigid_e2e *. */
int imp_rigid_e2e_rollout(const double x0[13], size_t n, void *ctx, double *out);
/* Scale, initialise and train on episodes `train` of t, keeping the
 * parameters with the best rollouts on `valid` (n_valid 0: the last ones). */
int imp_rigid_e2e_train(imp_rigid_e2e *m, const imp_rigid_traj *t, const int *train, int n_train, const int *valid,
                        int n_valid, const imp_rigid_e2e_opts *o, imp_rigid_e2e_report *rep);

#ifdef __cplusplus
}
#endif
#endif
