/* A network's weights fixed for the evaluation of one row at a time: the
 * rollouts of the CD-Lagrange strand (one trajectory, the parameters
 * constant over its steps). Made once per rollout from the parameters
 * (copied: later changes to them do not reach it), with the instruction-set
 * version in use then (imp_act_isa). Its passes are the kernel family's own
 * (mlp_fused.c), without BLAS calls, whose per-call overhead is most of a
 * 100 x 100 product at one row:
 *  - forward: each layer a matrix-vector product on a transposed, padded
 *    copy of its weights (mlp_fused_kernels.inc), or, for a layer with at
 *    most IMP_MLP_THIN outputs, fixed-order dot products with its rows;
 *    the activations by imp_act_forward, as the general passes;
 *  - input gradient of a scalar network: the fused sweep 1 where it applies
 *    (one hidden layer, few inputs: the potentials), else the general one.
 * The results equal those of the general passes of mlp.c up to the order
 * of the sums in the products (tests/test_nn.c). Not a public header. */
#ifndef IMPULSE_NN_MLP_FIXED_H
#define IMPULSE_NN_MLP_FIXED_H

#include "impulse/nn.h"

typedef struct imp_mlp_fixed imp_mlp_fixed;

/* NULL (with the reason in imp_last_error) if m is invalid or memory runs out. */
imp_mlp_fixed *imp_mlp_fixed_new(const imp_mlp *m, const double *params);
void imp_mlp_fixed_free(imp_mlp_fixed *f);
/* y (sizes[n_layers]) = the network at x (sizes[0]); x and y may alias. */
void imp_mlp_fixed_forward(imp_mlp_fixed *f, const double *x, double *y);
/* g (sizes[0]) = dV/dx of a scalar network at x (as imp_mlp_grad_input). */
void imp_mlp_fixed_grad_input(imp_mlp_fixed *f, const double *x, double *g);

#endif
