/* impulse neural-network pieces: MLP kernels with hand-written backward
 * passes, including the input gradient of a scalar network (sweep 1) and its
 * vector-Jacobian product with respect to weights and inputs (sweep 2,
 * "double backprop"); optimisers; losses. All double precision, row-major,
 * batch-first. See docs/derivations/mlp-double-backprop.md.
 *
 * llm.c conventions: outputs first, inputs const, dimensions trailing;
 * every *_backward / *_vjp ACCUMULATES (+=) into its gradient outputs, so
 * zero them yourself before a fresh pass.
 */
#ifndef IMPULSE_NN_H
#define IMPULSE_NN_H

#include <stddef.h>
#include "impulse/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IMP_MLP_MAX_LAYERS 8

typedef enum imp_activation {
    IMP_ACT_IDENTITY = 0,
    IMP_ACT_TANH,
    IMP_ACT_SOFTPLUS,
    IMP_ACT_RELU,
    IMP_ACT_SIGMOID
} imp_activation;

/* Parse "tanh", "softplus", "relu", "sigmoid", "identity"/"linear". */
int imp_activation_from_name(const char *name, imp_activation *out);
const char *imp_activation_name(imp_activation a);

/* Immutable description of an MLP. Parameters live in a caller-owned flat
 * double array of length n_params; layer l (0-based) has weight W_l of shape
 * (sizes[l+1], sizes[l]) (row-major, y = W x + b) at w_off[l] and bias b_l of
 * length sizes[l+1] at b_off[l] (b_off = SIZE_MAX when the layer has none). */
typedef struct imp_mlp {
    int n_layers;                          /* affine layers, >= 1 */
    int sizes[IMP_MLP_MAX_LAYERS + 1];     /* sizes[0] = input, sizes[n_layers] = output */
    imp_activation hidden_act;             /* after every layer but the last */
    imp_activation output_act;             /* after the last layer */
    int last_bias;                         /* 0: the last layer has no bias */
    size_t w_off[IMP_MLP_MAX_LAYERS];
    size_t b_off[IMP_MLP_MAX_LAYERS];
    size_t n_params;
} imp_mlp;

int imp_mlp_init(imp_mlp *m, int n_layers, const int *sizes, imp_activation hidden_act,
                 imp_activation output_act, int last_bias);
/* Glorot-uniform weights (the Keras default), zero biases. */
void imp_mlp_init_params(const imp_mlp *m, double *params, imp_rng *rng);
/* Sum over weight matrices (not biases) of lambda * w^2; adds 2 lambda w to
 * dparams (if not NULL). Returns the penalty. This is Keras' l2(lambda). */
double imp_mlp_l2(const imp_mlp *m, const double *params, double lambda, double *dparams);

/* Scratch for one batch: activations and sweep intermediates for up to
 * max_batch rows. Mutable run-time data, separate from the description. */
typedef struct imp_mlp_work imp_mlp_work;
imp_mlp_work *imp_mlp_work_new(const imp_mlp *m, int max_batch);
void imp_mlp_work_free(imp_mlp_work *w);
int imp_mlp_work_max_batch(const imp_mlp_work *w);
/* IMP_OK if w was made for m's shape and holds B rows (1 <= B <= max_batch),
 * else IMP_ERR_SHAPE naming the field. Precondition of every pass below:
 * the passes check it themselves and, on violation, record the message
 * (imp_last_error) and fill their outputs with NaN instead of overflowing. */
int imp_mlp_work_check(const imp_mlp *m, const imp_mlp_work *w, int B);

/* Run the forward/backward passes on w in single precision (on != 0) or
 * all in double (0, the default); taken by networks with a wide layer (more
 * than four inputs and outputs). Inputs, outputs and gradients stay double
 * arrays, and so does the output layer's activation. For classifiers whose
 * large products dominate (the contact networks): about 1.85x faster
 * products, results within ~1e-6 relative of the double path. The input-gradient sweeps of a one-hidden-layer scalar
 * network with at most 8 inputs (the CD-Lagrange potentials) also run in
 * single precision; deeper networks' sweeps stay double. IMP_ERR_NOMEM if
 * the float buffers cannot be allocated (w unchanged). */
int imp_mlp_work_set_single(imp_mlp_work *w, int on);
/* Let w's single-precision passes use the weights rounded by the last
 * single forward on `leader` (NULL: round its own, the default) instead of
 * rounding them again. For work spaces that evaluate one network with one
 * parameter vector at several steps (a training window keeps one cache per
 * step): the caller must run the leader's forward first, with the same
 * parameters, and keep the leader alive while w is used. Results are
 * bit-identical to rounding per work. Both works need
 * imp_mlp_work_set_single; the leader must follow no one. */
int imp_mlp_work_single_follow(imp_mlp_work *w, imp_mlp_work *leader);
/* Round the weights of `params` to float once, for evaluating one fixed
 * network many times (a rollout): w's single-precision passes (and the
 * single-precision input-gradient sweeps of a CD-Lagrange potential) then
 * use these rounded weights whatever params they are given, and batches of at
 * most four rows take a matrix-vector kernel of its own instead of BLAS
 * (at batch 1 and 100 x 100, sgemv's per-call overhead is most of its
 * time). params NULL: round per forward again (the default). Needs
 * imp_mlp_work_set_single(w, 1) first (IMP_ERR_INVALID) and w must follow
 * no leader; IMP_ERR_NOMEM if the copies cannot be allocated. */
int imp_mlp_work_single_fix(imp_mlp_work *w, const double *params);

/* Run the general matrix products of every pass on w (those with every
 * dimension above four: the hidden-to-hidden layers) in single precision
 * (on != 0) or in double (0, the default). Operands are rounded to float,
 * OpenBLAS's sgemm multiplies, and the product is added to the double
 * result, so accumulations across calls stay double. Everything else
 * (thin layers, activations, the sweeps' elementwise steps) stays double.
 * For the constrained networks' training (CHNN, CLNN, HNN, DeLaN, NODE),
 * whose time is in 200 x 256 x 256 products; opt-in: relative errors of a
 * pass ~1e-6 (tests/test_nn.c). IMP_ERR_NOMEM if the float buffers cannot
 * be allocated (w unchanged). */
int imp_mlp_work_set_gemm_single(imp_mlp_work *w, int on);

/* Floating-point operations (2 per multiply-add) done by the general
 * products above since the process started, summed over all threads: for
 * benches that report the share of the machine's GEMM peak. */
double imp_nn_gemm_flops(void);

/* y (B x out) = mlp(x (B x in)); caches what imp_mlp_backward needs in w. */
void imp_mlp_forward(const imp_mlp *m, const double *params, const double *x, int B,
                     double *y, imp_mlp_work *w);
/* Given dy (B x out), accumulate dparams += dL/dtheta and, if dx != NULL,
 * dx += dL/dx. Uses the cache of the last imp_mlp_forward on w. */
void imp_mlp_backward(const imp_mlp *m, const double *params, const double *dy, int B,
                      double *dparams, double *dx, imp_mlp_work *w);

/* Scalar networks only (sizes[n_layers] == 1): sweep 1.
 * g (B x in) = dV/dx at x; if V != NULL also writes V (B). Caches for sweep 2. */
void imp_mlp_grad_input(const imp_mlp *m, const double *params, const double *x, int B,
                        double *g, double *V, imp_mlp_work *w);
/* Sweep 2: given gbar (B x in) = dL/dg for the g of the last
 * imp_mlp_grad_input on w, accumulate dparams += dL/dtheta and, if
 * dx != NULL, dx += (d^2V/dx^2) gbar. */
void imp_mlp_grad_input_vjp(const imp_mlp *m, const double *params, const double *gbar, int B,
                            double *dparams, double *dx, imp_mlp_work *w);
/* dparams may be NULL in imp_mlp_backward and imp_mlp_grad_input_vjp: the
 * weight products are then skipped (a Hessian-vector product costs half a
 * sweep 2). Sweep 2 leaves the sweep-1 cache intact, so it may be called
 * several times (different gbar) after one imp_mlp_grad_input. */

/* The same four passes on rows stored at a stride (leading dimension) ld >=
 * the row length, so that an integrator can read q straight out of a state
 * array y = [q, qdot] (x = y, ldx = 2d) and write dV/dq into a slice of
 * its right-hand side without copies. ld < row length fails like a bad B. */
void imp_mlp_forward_ld(const imp_mlp *m, const double *params, const double *x, int ldx, int B,
                        double *y, int ldy, imp_mlp_work *w);
void imp_mlp_backward_ld(const imp_mlp *m, const double *params, const double *dy, int lddy, int B,
                         double *dparams, double *dx, int lddx, imp_mlp_work *w);
void imp_mlp_grad_input_ld(const imp_mlp *m, const double *params, const double *x, int ldx, int B,
                           double *g, int ldg, double *V, imp_mlp_work *w);
void imp_mlp_grad_input_vjp_ld(const imp_mlp *m, const double *params, const double *gbar,
                               int ldgbar, int B, double *dparams, double *dx, int lddx,
                               imp_mlp_work *w);

/* Per-row input Hessians of a scalar network at the x of the last
 * imp_mlp_grad_input on w: H (B x in x in), H[b] = d^2 V / dx^2 at row b.
 * Costs `in` weight-free sweeps 2 (meant for small inputs, e.g. Newton
 * steps of implicit integrators). Overwrites H. */
void imp_mlp_hessian_input(const imp_mlp *m, const double *params, int B, double *H,
                           imp_mlp_work *w);

/* The instruction-set version of the network kernels in use: "avx512",
 * "avx2" or "base" (x86-64 without them, or another architecture). Chosen
 * once per process from the CPU's features; the environment variable
 * IMPULSE_ISA=base|avx2|avx512 asks for a lower one (for measurements). */
const char *imp_nn_isa(void);

/* ---- Optimisers ---- */
typedef struct imp_adam {
    size_t n;
    double lr, beta1, beta2, eps;
    double weight_decay;     /* AdamW decoupled decay (0 for plain Adam) */
    long t;
    double *m, *v;
    /* Where eps goes (imp_adam_init sets 0):
     *   0, PyTorch / Kingma-Ba Algorithm 1:
     *      p -= lr * mhat / (sqrt(vhat) + eps),  mhat = m/(1-b1^t), vhat = v/(1-b2^t)
     *   1, Keras ("epsilon hat", Kingma-Ba sec. 2 last paragraph):
     *      p -= lr sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + eps). */
    int eps_hat;
} imp_adam;

/* Plain Adam: weight_decay = 0. AdamW (Loshchilov & Hutter): decoupled decay
 * params -= lr * weight_decay * params at every step. */
int imp_adam_init(imp_adam *opt, size_t n, double lr, double beta1, double beta2, double eps,
                  double weight_decay);
void imp_adam_free(imp_adam *opt);
/* One step with learning rate lr (pass opt->lr for a constant schedule). */
void imp_adam_step(imp_adam *opt, double *params, const double *grad, double lr);

/* Gradient-norm clipping as torch.nn.utils.clip_grad_norm_ (L2 norm):
 * returns the norm of grad (n entries) and, if it exceeds max_norm > 0,
 * scales grad by max_norm / (norm + 1e-6). max_norm <= 0: no clipping
 * (grad untouched, the norm still returned). */
double imp_clip_grad_norm(double *grad, size_t n, double max_norm);

/* Cosine schedule: lr(step) = lr_min + (lr0 - lr_min)(1 + cos(pi step/total))/2,
 * with step clamped to [0, total]; total <= 0 gives lr0. */
double imp_cosine_lr(double lr0, double lr_min, long step, long total);

/* ---- Losses: each returns the loss and writes its gradient wrt pred ---- */
/* mean over n of (pred - target)^2 (grad may be NULL). */
double imp_mse(const double *pred, const double *target, size_t n, double *grad);
/* mean over n of |pred - target| (subgradient 0 at 0). */
double imp_l1(const double *pred, const double *target, size_t n, double *grad);
/* Binary cross-entropy on probabilities p in (0,1) (clamped to [1e-7, 1-1e-7]
 * as Keras does), summed over n; grad wrt p. */
double imp_bce(const double *p, const double *label, size_t n, double *grad);
/* The same loss on logits z (p = sigmoid(z)), unclamped and stable for any
 * z: sum of max(z,0) - z y + log1p(exp(-|z|)); grad = sigmoid(z) - y. */
double imp_bce_logits(const double *z, const double *label, size_t n, double *grad);

#ifdef __cplusplus
}
#endif
#endif
