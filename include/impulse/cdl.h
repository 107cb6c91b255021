/* Models of the CD-Lagrange strand (Hochlehnert et al. 2021) and their
 * training and evaluation: the CD-Lagrange network (CDL), the variational
 * integrator network with velocity Verlet (VIN), ResNet and ResNetContact.
 *
 * Sign convention: the potential network outputs the physical potential
 * U_theta(q) and the force is F = -grad U_theta (the paper and its code learn
 * V = -U with F = +grad V; [A] eq 47).
 *
 * States are x = (q, qdot) with q, qdot in R^D, D = K d, velocities at the
 * sample times. The CD-Lagrange step ([A] eqs 39, 45-50) is written in its
 * synchronised (kick-drift-kick) form, which is algebraically the central
 * difference scheme with qdot_{n+1/2} = qdot_n + h/2 M^-1 F_n:
 *   qdot_{n+1/2} = qdot_n + h/2 M^-1 F(q_n, qdot_n)
 *   q_{n+1}      = q_n + h qdot_{n+1/2}                         (45)
 *   c_{n+1}      = c_theta(q_{n+1}, qdot_{n+1/2})                (contact net)
 *   qdot^S       = qdot_{n+1/2} + h M^-1 F(q_{n+1}, qdot_{n+1/2}) (39)
 *   I            = per contact: c * H (-e L qdot_{n+1/2} - L qdot^S) L^T   (48, 49)
 *   qdot_{n+1}   = qdot_{n+1/2} + h/2 M^-1 F(q_{n+1}, qdot_{n+1/2}) + M^-1 I   (50)
 * so that L qdot_{n+3/2} = -e L qdot_{n+1/2} for every active contact.
 * F = -grad U_theta(q) - C qdot with optional learned damping C = diag(exp(.)) ([A] eq 52).
 */
#ifndef IMPULSE_CDL_H
#define IMPULSE_CDL_H

#include "impulse/contact_systems.h"
#include "impulse/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum imp_model_kind {
    IMP_MODEL_CDL = 0,
    IMP_MODEL_VIN,
    IMP_MODEL_RESNET,
    IMP_MODEL_RESNET_CONTACT
} imp_model_kind;

int imp_model_kind_from_name(const char *name, imp_model_kind *out); /* cdl, vin, resnet, resnet-contact */
const char *imp_model_kind_name(imp_model_kind k);

typedef struct imp_cdl_config {
    imp_model_kind kind;
    int hidden;               /* width of the potential (CDL, VIN) or residual (ResNet) network */
    int hidden_layers;        /* hidden layers of that network (1 in the reference code) */
    imp_activation act;       /* tanh (paper) or softplus (reference code) */
    int contact_hidden;       /* contact network width (two ReLU layers) */
    int touch;                /* 1: contact labels observed (touch feedback) */
    int projection;           /* closest-point projection in the mass metric at impacts */
    int learn_damping;        /* learned diagonal damping C */
    int learn_mass;           /* learned diagonal mass matrix (else the data's masses) */
} imp_cdl_config;

/* The reference code's architecture: 500 units, 1 hidden layer, softplus,
 * contact net 100-100, touch on, projection off. */
void imp_cdl_config_default(imp_cdl_config *cfg, imp_model_kind kind);

/* Immutable model description plus its parameters (one flat vector). */
typedef struct imp_model {
    imp_cdl_config cfg;
    imp_contact_geometry geom;
    double dt;
    int D;                    /* configuration size K d */
    int K;                    /* bodies */
    imp_mlp net;              /* potential U (CDL, VIN) or residual f (ResNet*) */
    imp_mlp contact;          /* contact net (CDL) or contact head (ResNetContact) */
    int has_contact_net;
    size_t off_net, off_contact, off_damping, off_mass, n_params;
    double *params;
    /* copied from the training data, for energy and reports */
    char system[64];
    double gravity, length;
} imp_model;

int imp_model_create(imp_model **out, const imp_cdl_config *cfg, const imp_contact_geometry *geom,
                     double dt, unsigned long long seed);
void imp_model_free(imp_model *m);
/* Checkpoint: params split into named arrays (net.W0, net.b0, ...) + meta JSON
 * with the configuration, geometry and `extra_meta` (a JSON object text or NULL). */
int imp_model_save(const imp_model *m, const char *path, const char *extra_meta);
int imp_model_load(imp_model **out, const char *path);

/* Mutable scratch for batches of B windows of horizon H. */
typedef struct imp_model_work imp_model_work;
imp_model_work *imp_model_work_new(const imp_model *m, int B, int H);
void imp_model_work_free(imp_model_work *w);
/* The contact network's passes on w in single precision (on != 0) or in
 * double (0, the default); a no-op for models without a contact network.
 * IMP_ERR_NOMEM if buffers cannot be made. */
int imp_model_work_set_single_contact(imp_model_work *w, int on);
/* The potential's gradient sweeps (force and its reverse sweep) on w in
 * single precision (on != 0) or double (0, the default); a no-op for the
 * ResNet baselines. Rollouts and imp_model_potential_grad are always double. */
int imp_model_work_set_single_potential(imp_model_work *w, int on);

typedef struct imp_loss_parts {
    double state;    /* mean over batch of sum over steps of mean squared state error */
    double contact;  /* mean over batch of sum over steps of mean BCE over bodies */
    double l2;       /* lambda * sum of squared potential weights */
    double total;
} imp_loss_parts;

/* Loss of a batch of windows and, if grad != NULL, its gradient (accumulated
 * into grad, length n_params).
 *   x0      B x 2D   observed state at the window start
 *   target  B x H x 2D observed states after 1..H steps
 *   labels  B x H x K contact labels for steps 1..H (required when cfg.touch,
 *           ignored otherwise)
 * With touch feedback the labels gate the impulses (teacher forcing) and the
 * contact net is trained by cross-entropy; without, the impulses are gated by
 * the contact net's probability and only the state loss trains it. */
int imp_model_window_loss(const imp_model *m, const double *params, imp_model_work *w,
                          const double *x0, const double *target, const double *labels, int B, int H,
                          double l2, double *grad, imp_loss_parts *parts);

/* Roll out n_steps-1 steps from x0 (2D). Writes states (n_steps x 2D, row 0 = x0)
 * and contact (n_steps x K, predicted contact signal in {0,1}; row 0 = 0).
 * If `gates` (n_steps x K) is non-NULL the observed contact signal gates the
 * impulses instead of the contact net (an idealised touch sensor at run time). */
int imp_model_rollout(const imp_model *m, const double *x0, int n_steps, const double *gates,
                      double *states, double *contact);

/* Potential gradient dU/dq of a CDL/VIN model at nq configurations (nq x D). */
int imp_model_potential_grad(const imp_model *m, const double *q, int nq, double *grad_out);

/* ---- Training ---- */
typedef struct imp_train_opts {
    int epochs;
    int horizon;      /* H */
    int batch;        /* B */
    double lr;
    double l2;        /* Keras-style L2 on the potential kernels */
    unsigned long long seed;
    int single_contact; /* 1 (default): the contact network in single precision
                           during training (imp_mlp_work_set_single);
                           0: all double. Rollouts and evaluation are double. */
    int single_potential; /* 1 (default): the potential's gradient sweeps of CDL and
                             VIN in single precision during training; 0: double */
    int threads;      /* 1 (default; 0 counts as 1) .. 64: each minibatch's windows cut
                         into this many contiguous slices, one per thread, gradients
                         summed in slice order: the same seed and thread count give
                         bit-identical results, other counts agree to rounding */
    int progress;     /* call the callback every `progress` epochs (0: never) */
    void (*on_progress)(void *user, int epoch, const imp_loss_parts *mean_loss);
    void *user;
} imp_train_opts;

/* Paper (lr 1e-3, tanh, l2 0.05) or reference code (lr 1e-2, softplus, l2 5e-3) settings. */
void imp_train_opts_default(imp_train_opts *o, int code_settings);

/* Train on every window (stride 1) of every trajectory of `data` (observed,
 * noisy q and qdot); Adam; shuffled mini-batches. final_loss may be NULL. */
int imp_model_train(imp_model *m, const imp_trajset *data, const imp_train_opts *opts,
                    imp_loss_parts *final_loss);

/* ---- Evaluation ---- */
typedef struct imp_eval_result {
    double rmse;            /* paper: sqrt(mean over steps and state dims of squared error) */
    double rmse_code;       /* reference code: sqrt(sum over steps and dims, incl. contact column, / steps) */
    double energy_drift;    /* max over time |E(t) - E(0)| / max(|E(0)|, 1) of the true energy of the prediction */
    double contact_timing;  /* mean over true impact events (rising edges of a body's contact
                               signal) of the distance in time (s) to the nearest predicted
                               impact of the same body; NaN if none was predicted */
    int contacts_true, contacts_pred; /* impact events in the truth and the prediction */
    int contacts_missed;    /* true impacts of bodies for which no impact was predicted at all */
    int n_traj, n_steps;
} imp_eval_result;

/* Roll out from the noise-free first state of every trajectory over its whole
 * length and compare with the noise-free truth. If states_out != NULL it
 * receives the predicted states (n_traj x n_steps x 2D), contacts_out the
 * predicted contact signal (n_traj x n_steps x K), energy_out (n_traj x n_steps)
 * the true energy of the prediction (NaN when the system has no known energy). */
int imp_model_evaluate(const imp_model *m, const imp_trajset *test, int touch_at_rollout,
                       imp_eval_result *res, double *states_out, double *contacts_out,
                       double *energy_out);

#ifdef __cplusplus
}
#endif
#endif
