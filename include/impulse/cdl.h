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
#include "impulse/train.h"

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
    int learn_restitution;    /* CDL: e learned per contact pair, e = sigmoid(a) in (0, 1)
                                 (else the data's meta restitution, fixed) */
    int friction;             /* CDL: Coulomb friction at pairs with a tangent, through
                                 AP Newton (imp_ap_newton_forward), mu = exp(b) learned
                                 per pair */
    int impact_law;           /* CDL: IMP_CDL_IMPACT_PAPER (default) or IMP_CDL_IMPACT_NEWTON */
    double contact_tol;       /* CDL: how far above a contact pair (in gap units) a gated step's
                                 drifted position may be for the pair to take the impulse
                                 (events per pair: the gate says when, the pair's gap at the
                                 drifted position and its closing velocity say which pair);
                                 IMP_CONTACT_TOL_AUTO (the default): set by imp_model_train
                                 from the data (imp_cdl_default_contact_tol) */
    int gate_geometry;        /* CDL: impulses gated by geometry alone (data without labels): in
                                 every step each body's closing pairs penetrated at the drifted
                                 position take the impulse, in training and rollouts; the
                                 contact network is unused. Needs touch = 0. */
    int impact_timing;        /* CDL: IMP_CDL_TIMING_STEP (default: the impulse at the step, the
                                 paper's) or IMP_CDL_TIMING_EVENT (each impact at its time in the
                                 step, Newton's law there, the step finished with the post-impact
                                 velocity; impact_law unused; not with projection in training) */
} imp_cdl_config;

/* imp_cdl_config.impact_timing. EVENT: a gated pair meets its surface at
 * tau in the step along the free flight q_n + s v_n + s^2/2 a_n (a_n the
 * force's acceleration at q_n); Newton's law with Coulomb friction acts on
 * the velocity there, v_n + tau a_n, and the step ends at
 * q_{n+1} = q_n + h v_{n+1/2} + (h - tau) dv, v_{n+1} = v_{n+1/2} + h/2 a_{n+1} + dv,
 * exact for a constant force (docs/derivations/contact.md sec 12). */
enum { IMP_CDL_TIMING_STEP = 0, IMP_CDL_TIMING_EVENT = 1 };
/* "step" or "event" to IMP_CDL_TIMING_*; anything else is an error. */
int imp_cdl_timing_from_name(const char *name, int *out);

#define IMP_CONTACT_TOL_AUTO (-1.0)
/* The contact tolerance for these data: 3 sigma of the data's position
 * noise (meta "noise"), the reach of a noisy window start; 0 when the
 * noise is unknown or zero. Rollouts of a model whose tolerance is still
 * IMP_CONTACT_TOL_AUTO (never trained) use 0. */
double imp_cdl_default_contact_tol(const imp_trajset *data);

/* The normal part of the CD-Lagrange impulse of a gated pair, with u- the
 * pre-impact (half-step) and uS the pre-impulse normal velocity:
 *   PAPER  ([A] eqs 48-49): un+ = -e u- at the next half step; the impulse
 *          also cancels the force over the step (so resting contact holds),
 *          which makes the fitted e lower than an instantaneous Newton
 *          coefficient by about g h / |u-| on average;
 *   NEWTON: un+ = max(uS - (1 + e) u-, 0): Newton's law on the half-step
 *          velocity with the force over the step kept (unbiased in e for an
 *          impact at a uniformly random time in the step), or rest when
 *          the rebound cannot beat the force. */
enum { IMP_CDL_IMPACT_PAPER = 0, IMP_CDL_IMPACT_NEWTON = 1 };

/* The impact law a CD-Lagrange network should use on these data (the
 * default of impulse train and the Python bindings): PAPER for impulse's
 * event-driven simulators' files (meta labels "impact"), NEWTON for any
 * other data (touch-sensor labels, labels handled by onset or kept as given,
 * none): there an impact seen at the sampled velocities has the force over
 * the step on both sides, and the paper's law, which cancels it, learns e
 * too low by about g h / |u| (docs/your-data.md). */
int imp_cdl_default_impact_law(const imp_trajset *data);

/* The reference code's architecture: 500 units, 1 hidden layer, softplus,
 * contact net 100-100, touch on, projection off, restitution fixed (the
 * data's), no friction. */
void imp_cdl_config_default(imp_cdl_config *cfg, imp_model_kind kind);

/* Limits of a model description (checked on creation and when loading a
 * checkpoint): network widths, and the step dt in seconds. */
#define IMP_MODEL_MAX_WIDTH 100000
#define IMP_MODEL_MIN_DT 1e-9
#define IMP_MODEL_MAX_DT 1e3

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
    size_t off_net, off_contact, off_damping, off_mass, off_restitution, off_friction, n_params;
    double *params;
    /* copied from the training data, for energy and reports */
    char system[64];
    double gravity, length;
} imp_model;

int imp_model_create(imp_model **out, const imp_cdl_config *cfg, const imp_contact_geometry *geom,
                     double dt, unsigned long long seed);
void imp_model_free(imp_model *m);
/* The contact law in use: restitution e and (if cfg.friction) Coulomb mu per
 * contact pair (n_pairs each; mu may be NULL). Without learned restitution e
 * is the geometry's for every pair. */
void imp_model_get_contact_law(const imp_model *m, double *e, double *mu);
/* Set the learned values (initialisation): e (n_pairs, each in (0, 1)) if
 * cfg.learn_restitution and e != NULL; mu (n_pairs, each > 0) if cfg.friction
 * and mu != NULL. Values are clamped to [1e-3, 1 - 1e-3] and [1e-4, 10]. */
int imp_model_set_contact_law(imp_model *m, const double *e, const double *mu);
/* Closest-point projection at impacts (cfg.projection) turned on or off for
 * what the model does next: rollouts (imp_model_rollout, imp_model_evaluate)
 * of a model trained without it then end no step inside a wall or the floor
 * (`impulse eval|rollout --projection`). A CD-Lagrange model with a contact
 * network only (an error names the model otherwise). */
int imp_model_set_projection(imp_model *m, int on);
/* Data estimates of the contact law around labelled contacts (rising edges
 * of a body's contact label at step m, n = m or, when the impact spans
 * several samples, the first sample after its interior ones, imp_trajset.
 * interior): per pair, the median over impacts of -u(n)/u(m-1) of the
 * normal velocity u (clamped to [0.05, 0.95]) and,
 * for pairs with a tangent, the 90th percentile of |Pt|/Pn of the
 * contact-space impulse P = W^-1 (u(n) - u(m-1)) over impacts with Pn > 0
 * (|Pt| = mu Pn when an impact slides, less when it sticks; clamped to
 * [0.01, 2]). Pairs without impacts get NaN (e) and NaN (mu). n_events
 * (n_pairs, may be NULL) counts the impacts used. Crude (gravity and noise
 * bias it): meant as a starting point for learning. */
int imp_cdl_estimate_contact_law(const imp_trajset *data, double *e, double *mu, int *n_events);
/* Where the starting value of a learned contact-law parameter comes from. */
typedef enum imp_law_init {
    IMP_LAW_INIT_DEFAULT = 0, /* e: the data's meta restitution if it has one, else the data
                                 estimate; mu: the data estimate */
    IMP_LAW_INIT_DATA,        /* imp_cdl_estimate_contact_law (0.5 / 0.3 where a pair has no impact) */
    IMP_LAW_INIT_META,        /* e only: the data's meta restitution (an error if it has none) */
    IMP_LAW_INIT_VALUE        /* the value given */
} imp_law_init;
typedef struct imp_contact_law_start {
    double e[IMP_MAX_CONTACTS], mu[IMP_MAX_CONTACTS]; /* the values set (after clamping) */
    int n_events[IMP_MAX_CONTACTS];                   /* labelled impacts per pair in the data */
    imp_law_init e_from, mu_from;                     /* the sources used (never DEFAULT) */
} imp_contact_law_start;
/* Initialise the learned contact law of m (cfg.learn_restitution, cfg.friction;
 * nothing to do otherwise) from data as `impulse train` does: e from e_from
 * (value e_value for IMP_LAW_INIT_VALUE, in [1e-3, 1 - 1e-3]), mu from mu_from
 * (value mu_value in [1e-4, 10]). start (may be NULL) reports what was set. */
int imp_model_init_contact_law(imp_model *m, const imp_trajset *data, imp_law_init e_from, double e_value,
                               imp_law_init mu_from, double mu_value, imp_contact_law_start *start);
/* Checkpoint (docs/data-format.md, "Checkpoints"): params, the same values
 * split into named arrays (net.W0, net.b0, ...), the contact geometry, and
 * meta JSON with the configuration, a checksum and `extra_meta` (a JSON
 * object text or NULL, stored as "training"). Loading checks every field,
 * the sizes against the params array before allocating, the per-layer
 * copies against params, and the checksum. */
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
 * ResNet baselines. imp_model_potential_grad is always double, and so are
 * rollouts unless asked (imp_model_rollout_single). */
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
 *   weight  B x H weights of the state errors after steps 1..H (NULL: all 1;
 *           0 leaves a sample out of the loss, as inside a multi-sample
 *           impact: imp_trajset.interior)
 * With touch feedback the labels gate the impulses (teacher forcing) and the
 * contact net is trained by cross-entropy; without, the impulses are gated by
 * the contact net's probability and only the state loss trains it. */
int imp_model_window_loss(const imp_model *m, const double *params, imp_model_work *w,
                          const double *x0, const double *target, const double *labels,
                          const double *weight, int B, int H, double l2, double *grad, imp_loss_parts *parts);

/* Roll out n_steps-1 steps from x0 (2D). Writes states (n_steps x 2D, row 0 = x0)
 * and contact (n_steps x K, predicted contact signal in {0,1}; row 0 = 0).
 * If `gates` (n_steps x K) is non-NULL the observed contact signal gates the
 * impulses instead of the contact net (an idealised touch sensor at run time). */
int imp_model_rollout(const imp_model *m, const double *x0, int n_steps, const double *gates,
                      double *states, double *contact);
/* The same with parts of the model in single precision, as training runs
 * them by default, or by other kernels; `single` is a set of the flags
 * below (0 is imp_model_rollout):
 *  IMP_ROLLOUT_SINGLE_CONTACT: the contact network, its weights rounded to
 *    float once per call and its layers evaluated by a matrix-vector kernel
 *    instead of BLAS. The states differ from imp_model_rollout's only where
 *    a contact decision does (a probability within float rounding of 0.5).
 *  IMP_ROLLOUT_SINGLE_POTENTIAL: the potential's gradient (the force) of a
 *    CDL or VIN model, by the float sweep of training
 *    (imp_model_work_set_single_potential; no-op for the ResNets): relative
 *    errors of ~1e-6 in the force, so the states drift from the double
 *    rollout's by float rounding accumulated over the steps.
 *  IMP_ROLLOUT_BLAS: the double networks by the batch passes training
 *    uses (the contact network's products through OpenBLAS) instead of
 *    imp_model_rollout's one-row kernels (weights fixed once per call,
 *    matrix-vector products of the kernel family's own, the potential's
 *    force in one pass). The two differ by the order of the sums and the
 *    last bit of some softplus derivatives: the states agree to rounding,
 *    the contact decisions unless a probability lies within ~1e-16 of 0.5.
 * Everything else (the integrator, impulses, projection) stays double. */
enum { IMP_ROLLOUT_SINGLE_CONTACT = 1, IMP_ROLLOUT_SINGLE_POTENTIAL = 2, IMP_ROLLOUT_BLAS = 4 };
int imp_model_rollout_single(const imp_model *m, const double *x0, int n_steps, const double *gates,
                             int single, double *states, double *contact);

/* Potential gradient dU/dq of a CDL/VIN model at nq configurations (nq x D). */
int imp_model_potential_grad(const imp_model *m, const double *q, int nq, double *grad_out);

/* ---- Training ---- */
/* Learning-rate schedules of imp_model_train (imp_train_opts.lr_schedule):
 *  AUTO (0, the default): CONSTANT on data made by impulse's event-driven
 *    simulators, COSINE on any other data (imp_train_default_lr_schedule);
 *  CONSTANT: lr in every epoch (the reference code's Adam);
 *  COSINE: lr_e = lr (1 + cos(pi (e - 1) / E)) / 2 in epoch e = 1..E of a
 *    run of E epochs (imp_cosine_lr stepped per epoch, no floor: the first
 *    epoch uses lr, the last lr (1 - cos(pi / E)) / 2). On noisy data a
 *    constant rate keeps moving the learned potential from epoch to epoch;
 *    annealing it lets the fit settle (docs/your-data.md). */
enum { IMP_LR_AUTO = 0, IMP_LR_CONSTANT = 1, IMP_LR_COSINE = 2 };
/* "auto", "constant", "cosine" <-> IMP_LR_*; an unknown name is
 * IMP_ERR_INVALID with a message listing the three. */
int imp_lr_schedule_from_name(const char *name, int *schedule);
const char *imp_lr_schedule_name(int schedule); /* NULL for an unknown value */
/* What AUTO means on these data: CONSTANT for impulse's event-driven
 * simulators' files (the same test as imp_cdl_default_impact_law: meta labels
 * "impact"), so that the papers' reproductions keep the reference code's
 * constant rate, COSINE for every other data (compliant contact, imported
 * logs, touch-sensor labels, labels already handled). */
int imp_train_default_lr_schedule(const imp_trajset *data);
/* The learning rate of epoch `epoch` (1..epochs) of a run of `epochs` epochs
 * with base rate lr under a resolved schedule (CONSTANT or COSINE; AUTO and
 * unknown values give NAN). */
double imp_train_epoch_lr(int schedule, double lr, int epoch, int epochs);

/* The law refit (imp_model_law_refit, `impulse train --law-refit`;
 * docs/derivations/contact.md sec 13). Above the mu at which every impact
 * of a contact pair sticks, the training loss does not depend on that
 * pair's mu (a sticking impulse does not read it), so gradient descent
 * cannot bring a mu back from there. The refit acts only there: a pair's
 * mu is searched only where the training loss's gradient with respect to it
 * is exactly 0 although the pair acts in the training windows (every one
 * of its impacts sticks: the plateau); a mu with a gradient keeps
 * training's value (all = 1: every pair searched, the refit's first
 * version). The search is on the training loss with the networks and every
 * other parameter fixed: mu on a grid over (0, mu_max] then golden section
 * around the grid's best point, then (with IMP_LAW_REFIT_E) e the same way
 * over (0, 1), e too only where its gradient is exactly 0 unless all; a
 * pair's new values are kept only if they lower the training loss over
 * every window. */
enum { IMP_LAW_REFIT_MU = 1, IMP_LAW_REFIT_E = 2 };
typedef struct imp_law_refit_opts {
    int what;         /* IMP_LAW_REFIT_MU (the default), IMP_LAW_REFIT_E or both (|) */
    int min_steps;    /* pairs whose impulse acts in fewer training steps are left
                         alone (default 5) */
    int grid;         /* grid points per parameter (default 16; 3 .. 10000) */
    double mu_max;    /* the mu grid's top (default 2; (0, 10]) */
    double tol;       /* golden-section bracket at the end (default 1e-3; (0, 0.1]) */
    int profile;      /* 1: every pair searched from the law as it was, its
                         minimum reported, nothing changed (bench_cdl_law_profile) */
    int all;          /* 0 (default): only a parameter on the plateau (its gradient
                         exactly 0) searched; 1: every pair's, whatever its gradient */
    int horizon;      /* the refit's windows: 0 (default) training's horizon; H >= 1
                         windows of H steps from every data state (1: one step from
                         the sample before each impact, the law read from the impacts
                         themselves; no drift of the learned flight into them) */
    int robust;       /* 0 (default): the loss is training's (mean squared state error
                         plus the contact term); 1: the sum over the windows of each
                         window's root mean squared state error (least absolute
                         deviations over windows: a step the model cannot represent,
                         such as a simultaneous impact, does not pull a law; one
                         thread) */
} imp_law_refit_opts;
void imp_law_refit_opts_default(imp_law_refit_opts *o);
/* The law identification (`impulse train --law-identify`; docs/derivations/
 * contact.md sec 14): sets o's what, all, horizon and robust so that every
 * pair's mu and e are searched on one-step windows with the robust loss;
 * grid, mu_max, tol and min_steps stay as they are. */
void imp_law_refit_opts_identify(imp_law_refit_opts *o);
/* The search's name as --json reports it: "identify" (robust), "all" or
 * "plateau" (the default refit). */
const char *imp_law_refit_mode_name(const imp_law_refit_opts *o);

typedef struct imp_law_refit_pair {
    int steps;        /* training steps in which the pair's impulse acts (a window's first step) */
    int windows;      /* training windows whose loss the pair's law enters */
    int searched;     /* 1: steps >= min_steps, a learned e or mu, and (unless all)
                         that parameter on the plateau */
    double e_before, e_after;   /* e_after: the kept value (profile: the minimum) */
    double mu_before, mu_after; /* NaN without a learned mu at this pair */
    int plateau;      /* 1: the training loss's gradient with respect to the pair's mu is
                         exactly 0 (every impact of the pair sticks); 0: it is not; -1: not
                         looked at (no learned mu, or fewer than min_steps steps) */
    double mu_grad, e_grad; /* d(training loss)/d mu and d/d e at the values before
                               (NaN where not looked at) */
} imp_law_refit_pair;

typedef struct imp_law_refit_report {
    int n_pairs;
    double loss_before, loss_after; /* the refit's loss over every window (training's:
                                       state + contact + l2, the mean over the windows;
                                       robust: the mean of the windows' RMS state errors
                                       + l2), before and after the refit */
    double seconds;
    imp_law_refit_pair pairs[IMP_MAX_CONTACTS];
} imp_law_refit_report;

typedef struct imp_train_opts {
    int epochs;
    int horizon;      /* H */
    int batch;        /* B */
    double lr;        /* base learning rate (Adam) */
    int lr_schedule;  /* IMP_LR_AUTO (default), IMP_LR_CONSTANT or IMP_LR_COSINE */
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
    imp_train_hooks hooks; /* per-epoch callback, loss history, divergence guard,
                              resumable state (include/impulse/train.h) */
    int law_refit;    /* 1: the law refit (imp_model_law_refit) after the last epoch of a
                         run that finished; 0 (default): off */
    imp_law_refit_opts refit;
    imp_law_refit_report *refit_report; /* NULL, or filled by the refit */
} imp_train_opts;

/* Paper (lr 1e-3, tanh, l2 0.05) or reference code (lr 1e-2, softplus, l2 5e-3)
 * settings; lr_schedule IMP_LR_AUTO in both. */
void imp_train_opts_default(imp_train_opts *o, int code_settings);

/* Train on every window (stride 1) of every trajectory of `data` (observed,
 * noisy q and qdot); Adam; shuffled mini-batches. final_loss may be NULL.
 * opts->hooks: the loss parts passed to on_epoch are total, state, contact,
 * l2. A divergence returns IMP_ERR_NUMERIC with m->params the best model's;
 * a stop request returns IMP_OK with the best model's parameters (see
 * hooks.report for how the run ended). */
int imp_model_train(imp_model *m, const imp_trajset *data, const imp_train_opts *opts,
                    imp_loss_parts *final_loss);

/* The law refit (imp_law_refit_opts above) of a trained CD-Lagrange model
 * that learns e or mu, on the training windows of `data` as imp_model_train
 * forms them (opts->horizon, the same weights; the loss in double, on
 * opts->threads threads; opts->refit its settings). Pairs in order, mu then
 * e of each; the search scores the windows where the pair's impulse acts
 * (no other window's loss depends on its law, except where an event-timed
 * impact chains into it), and a pair's change is kept only if the loss
 * over every window falls. Deterministic. rep (may be NULL) receives the per-pair
 * changes. Errors name the offending field. */
int imp_model_law_refit(imp_model *m, const imp_trajset *data, const imp_train_opts *opts,
                        imp_law_refit_report *rep);

/* The refit's settings (opts->refit, horizon, threads, l2) against model m
 * and data d, as imp_model_train checks them before its first epoch when
 * opts->law_refit: IMP_OK or IMP_ERR_INVALID naming the field. */
int imp_law_refit_check(const imp_model *m, const imp_trajset *d, const imp_train_opts *opts);

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

/* The energy along the data (issue 27): error = mean over trajectories and
 * samples of |E_pred(t) - E_data(t)| / max(|E_data(0)|, 1), with E_data the
 * true energy of the noise-free data and energy_pred (n_traj x n_steps) the
 * energy_out of imp_model_evaluate; drift_data the data's own energy drift,
 * max |E_data(t) - E_data(0)| / max(|E_data(0)|, 1) (the number
 * energy_drift of a model should be read against: large on dissipative
 * data). Fails as imp_system_energy when the energy is unknown. */
int imp_eval_energy_error(const imp_trajset *test, const double *energy_pred, double *error, double *drift_data);

#ifdef __cplusplus
}
#endif
#endif
