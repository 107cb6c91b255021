/* Internals of the nn module shared by its .c files and tests/test_nn.c:
 * the work-space layout, the activation kernels, and the switch that routes
 * every matrix product through plain reference loops instead of BLAS (so the
 * tests can check that both paths agree). Not a public header. */
#ifndef IMPULSE_NN_MLP_INTERNAL_H
#define IMPULSE_NN_MLP_INTERNAL_H

#include "impulse/nn.h"

/* Activation phi applied in place to z (n values), writing s = phi'(z).
 * Both come out of one pass so the forward pass caches what backward and
 * the sweeps need, and no pre-activation has to be stored. */
void imp_act_forward(imp_activation act, double *z_to_a, double *s, size_t n);
/* s = act'(z) only, where that is cheaper (softplus, relu): returns 0 and
 * leaves z as the pre-activation; otherwise does imp_act_forward and returns 1. */
int imp_act_deriv_only(imp_activation act, double *z, double *s, size_t n);

/* Instruction-set versions of the activation kernels. imp_act_force_isa
 * pins one (tests run every version the CPU has); -1 restores automatic
 * choice. Not thread-safe: for tests only. Fails with IMP_ERR_UNSUPPORTED
 * if the CPU or the build lacks that version. */
enum { IMP_ISA_BASE = 0, IMP_ISA_AVX2 = 1, IMP_ISA_AVX512 = 2 };
int imp_act_force_isa(int isa);

/* phi''(z) expressed through the cached a = phi(z) and s = phi'(z):
 *   tanh:     s = 1 - a^2,      phi'' = -2 a s   (s is computed as 4e/(1+e)^2)
 *   sigmoid:  s = a (1 - a),    phi'' = s (1 - 2a)
 *   softplus: s = sigmoid(z),   phi'' = s (1 - s)
 *   relu, identity:             phi'' = 0 (relu: almost everywhere). */
static inline double imp_act_second(imp_activation act, double a, double s)
{
    switch (act) {
    case IMP_ACT_TANH: return -2.0 * a * s;
    case IMP_ACT_SIGMOID: return s * (1.0 - 2.0 * a);
    case IMP_ACT_SOFTPLUS: return s * (1.0 - s);
    default: return 0.0;
    }
}

/* Sweep 2 up-pass step (see mlp.c): r = dbar * e * phi''(z) and
 * ebar = dbar * s; e and ebar both NULL for the output layer (e = 1). */
void imp_act_sweep2_up(imp_activation act, size_t n, const double *dbar, const double *e,
                       const double *a, const double *s, double *r, double *ebar);
/* out = x * y;  out *= x;  out += x * y  (elementwise, no aliasing) */
void imp_vec_mul(double *out, const double *x, const double *y, size_t n);
void imp_vec_mul_inplace(double *out, const double *x, size_t n);
void imp_vec_fma_inplace(double *out, const double *x, const double *y, size_t n);
void imp_vec_add_inplace(double *out, const double *x, size_t n);

struct imp_mlp_work {
    int n_layers;
    int sizes[IMP_MLP_MAX_LAYERS + 1];
    int max_batch;
    int n_max;              /* max over sizes[] */
    int use_reference;      /* 1: plain loops instead of cblas_dgemm */
    int fwd_batch;          /* batch of the cached forward pass, 0 = none */
    int sweep1_batch;       /* batch of the cached sweep 1, 0 = none */
    int gradient_only;      /* 1: the cache skips the output layer and last hidden values */
    double *x;              /* (max_batch, sizes[0]) copy of the input */
    double *a[IMP_MLP_MAX_LAYERS];     /* (B, sizes[l+1]) activations */
    double *s[IMP_MLP_MAX_LAYERS];     /* (B, sizes[l+1]) phi'(z_l) */
    double *delta[IMP_MLP_MAX_LAYERS]; /* sweep 1: dV/dz_l */
    double *e[IMP_MLP_MAX_LAYERS];     /* sweep 1: dV/da_l (l < L-1) */
    double *r[IMP_MLP_MAX_LAYERS];     /* sweep 2: adjoint of z_l */
    double *buf[3];                    /* (max_batch, n_max) scratch */
    double *unit;                      /* (max_batch, sizes[0]) seed for Hessians */
    double *slab;                      /* the one allocation behind all of the above */
};

/* Route the matrix products of every pass on w through the reference loops
 * (on != 0) or through cblas_dgemm (on == 0, the default). */
void imp_mlp_work_set_reference(imp_mlp_work *w, int on);

#endif
