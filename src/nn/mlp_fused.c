/* Fused sweeps 1 and 2 for a scalar network with one hidden layer and a few
 * inputs, V(x) = w1 . phi(W0 x + b0) + b1 (identity output): the potential
 * of the CD-Lagrange and VIN models ([A] sec. 4: one hidden layer of 500
 * softplus units on the D-dimensional configuration).
 *
 * The general passes in mlp.c sweep the B x n1 hidden arrays once per
 * operation (about ten times per sweep 2), and a training window keeps H + 1
 * such caches, more than L2 holds, so those passes are memory-bound. Here
 * sweep 1 makes three passes (z, the activation, g) and sweep 2 works row by
 * row on n1-long vectors in L1 (a single pass for one input); only
 * s = phi'(z) (and a = phi(z) where phi'' needs it) is kept between them.
 * The results equal the general path's up to summation order
 * (tests/test_nn.c compares them). Measured: one CDL training epoch of the
 * ball went from 35 to 18 ms with these and the FMA / division-free
 * activation kernels of activation.c (bench/bench_cdl.c).
 *
 * Sweep 1:  z = W0 x + b0,  g = W0^T (w1 * s)                 (per row)
 * Sweep 2, from gbar (per row), with t = W0 gbar and
 *           r = w1 * t * phi''(z)   (the z-adjoint):
 *   w1bar += s * t,  b0bar += r,  W0bar += (w1 * s) gbar^T + r x^T,
 *   xbar  += W0^T r.
 * Derivation: docs/derivations/mlp-double-backprop.md with L = 2.
 *
 * The sweeps exist in double and in float (training the CD-Lagrange and
 * VIN potentials: in float a vector holds twice the lanes and the series
 * of the activations are half as long; the training loss and its gradient
 * only steer Adam, so relative errors of ~1e-6 in the force are far below
 * the noise of the data, and rollouts, evaluation and
 * imp_model_potential_grad stay double). Both come from one source,
 * mlp_fused_kernels.inc, included twice below and compiled once per
 * instruction-set version into the kernel tables a work picks when it is
 * made (imp_mlp_kernels, mlp_internal.h). tests/test_nn.c compares every
 * table entry with the general path of mlp.c on its plain reference loops. */
#include "nn/mlp_internal.h"
#include "nn/act_math.h"

#include <string.h>

/* Inputs beyond this are better served by the matrix products of mlp.c. */
#define FUSED_MAX_INPUTS 8

int imp_mlp_fused_ok(const imp_mlp *m)
{
    return m->n_layers == 2 && m->sizes[2] == 1 && m->output_act == IMP_ACT_IDENTITY &&
           m->sizes[0] <= FUSED_MAX_INPUTS && m->b_off[0] != SIZE_MAX;
}

/* double: the cache of mlp.c (a[0], s[0]) and its fused buffers */
#define FK_REAL double
#define FK_SFX _d
#define FK_PARTS 8
#define FK_SINGLE 0
#define FK_WBUF(w) ((w)->fz)
#define FK_ACC(w) ((w)->facc)
#define FK_T(w) ((w)->buf[0])
#define FK_R(w) ((w)->buf[1])
#define FK_X(w) ((w)->x)
#define FK_A(w) ((w)->a[0])
#define FK_S(w) ((w)->s[0])
#define FK_SOFTPLUS_DERIV(z) softplus_deriv_d(z)
#define FK_ACT_ROW(act, a, s, n) act_deriv_d_body(act, a, s, n)
#include "nn/mlp_fused_kernels.inc"

/* float: the float buffers of imp_mlp_work_set_single */
#define FK_REAL float
#define FK_SFX _f
#define FK_PARTS 16
#define FK_SINGLE 1 /* the .inc undefines its parameters at its end */
#define FK_WBUF(w) ((w)->ffw)
#define FK_ACC(w) ((w)->ffacc)
#define FK_T(w) ((w)->ftr)
#define FK_R(w) ((w)->ftr + (w)->sizes[1])
#define FK_X(w) ((w)->fx)
#define FK_A(w) ((w)->fa[0])
#define FK_S(w) ((w)->fs[0])
#define FK_SOFTPLUS_DERIV(z) softplus_deriv_f(z)
#define FK_ACT_ROW(act, a, s, n) act_deriv_f_body(act, a, s, n)
#include "nn/mlp_fused_kernels.inc"

void imp_mlp_fused_single_fix(imp_mlp_work *w, const double *params)
{
    round_weights_f(&w->net, params, w->ffw);
}

/* sweep 1 takes the version's vector width too, for one table shape */
static inline __attribute__((always_inline)) void sweep1_d_v_body(int vbytes, const imp_mlp *m,
                                                                   const double *params, int B, double *g,
                                                                   int ldg, imp_mlp_work *w)
{
    (void)vbytes;
    sweep1_body_d(m, params, B, g, ldg, w);
}
static inline __attribute__((always_inline)) void sweep1_f_v_body(int vbytes, const imp_mlp *m,
                                                                   const double *params, int B, double *g,
                                                                   int ldg, imp_mlp_work *w)
{
    (void)vbytes;
    sweep1_body_f(m, params, B, g, ldg, w);
}
#define SWEEP1_PARAMS (const imp_mlp *m, const double *params, int B, double *g, int ldg, imp_mlp_work *w)
#define SWEEP1_ARGS (m, params, B, g, ldg, w)
#define SWEEP2_PARAMS                                                                                    \
    (const imp_mlp *m, const double *params, const double *gbar, int ldgbar, int B, double *dparams, \
     double *dx, int ldx, imp_mlp_work *w)
#define SWEEP2_ARGS (m, params, gbar, ldgbar, B, dparams, dx, ldx, w)
#define sweep2_d_v_body sweep2_body_d
#define sweep2_f_v_body sweep2_body_f
IMP_ISA_TABLE(sweep1_d_v, SWEEP1_PARAMS, SWEEP1_ARGS)
IMP_ISA_TABLE(sweep1_f_v, SWEEP1_PARAMS, SWEEP1_ARGS)
IMP_ISA_TABLE(sweep2_d_v, SWEEP2_PARAMS, SWEEP2_ARGS)
IMP_ISA_TABLE(sweep2_f_v, SWEEP2_PARAMS, SWEEP2_ARGS)

/* [precision: 0 double, 1 float][instruction set]; a build without the
 * x86 versions has only the base one (imp_mlp_fused_sweeps falls back) */
#define FUSED_SWEEPS(sfx, prec, single, isa, v) \
    {"fused sweeps, " prec ", " #v, single, isa, sweep1_##sfx##_v_##v, sweep2_##sfx##_v_##v, NULL, NULL}
#if IMP_HAVE_ISA_VERSIONS
#define FUSED_SWEEPS_ALL(sfx, prec, single)                                                                   \
    {FUSED_SWEEPS(sfx, prec, single, IMP_ISA_BASE, base), FUSED_SWEEPS(sfx, prec, single, IMP_ISA_AVX2, avx2), \
     FUSED_SWEEPS(sfx, prec, single, IMP_ISA_AVX512, avx512)}
#else
#define FUSED_SWEEPS_ALL(sfx, prec, single) {FUSED_SWEEPS(sfx, prec, single, IMP_ISA_BASE, base)}
#endif
static const imp_mlp_kernels fused_sweeps[2][3] = {FUSED_SWEEPS_ALL(d, "double", 0), FUSED_SWEEPS_ALL(f, "float", 1)};

const imp_mlp_kernels *imp_mlp_fused_sweeps(int single, int isa)
{
    const imp_mlp_kernels *k = &fused_sweeps[single != 0][isa >= IMP_ISA_BASE && isa <= IMP_ISA_AVX512 ? isa : 0];
    return k->name ? k : &fused_sweeps[single != 0][IMP_ISA_BASE];
}

/* ---- forward and backward of a network with one hidden layer and few
 * inputs and outputs (the ResNet baselines' f: R^(2D[+K]) -> R^(2D)) ----
 *
 * Forward:  z = W0 x + b0, a = phi(z), y = psi(W1 a + b1)   (cache as mlp.c:
 *           a[0], s[0], a[1] = y, s[1] = psi'), so either backward can
 *           follow either forward.
 * Backward, from dy: Z1 = dy * s[1],  W1bar += Z1 a^T,  b1bar += Z1,
 *           Z0 = s[0] * (W1^T Z1),  W0bar += Z0 x^T,  b0bar += Z0,
 *           xbar += W0^T Z0. */
#define FUSED_MAX_OUTPUTS 8

int imp_mlp_fused_vec_ok(const imp_mlp *m)
{
    return m->n_layers == 2 && m->sizes[0] <= FUSED_MAX_INPUTS && m->sizes[2] <= FUSED_MAX_OUTPUTS &&
           m->b_off[0] != SIZE_MAX;
}

/* y_k = b1_k + sum_j W1[k,j] a_j for every row (psi applied by the caller) */
static inline __attribute__((always_inline)) void output_rows_body(int B, int n1, int n2,
                                                                   const double *restrict a,
                                                                   const double *restrict W1,
                                                                   const double *restrict b1,
                                                                   double *restrict y)
{
    for (int b = 0; b < B; b++)
        for (int k = 0; k < n2; k++)
            y[(size_t)b * n2 + k] = (b1 ? b1[k] : 0.0) + dot2_d(n1, a + (size_t)b * n1, W1 + (size_t)k * n1);
}

/* vbytes: the version's vector width (IMP_ISA_TABLE), unused */
static inline __attribute__((always_inline)) void fused_forward_body(int vbytes, const imp_mlp *m,
                                                                     const double *params, int B, imp_mlp_work *w)
{
    (void)vbytes;
    const int n0 = m->sizes[0], n1 = m->sizes[1], n2 = m->sizes[2];
    const double *W0t, *b0, *w1;
    weights_d(m, params, w, &W0t, &b0, &w1);
    pre_activation_rows_body_d(B, n0, n1, w->x, W0t, b0, w->a[0]);
    act_forward_d_body(m->hidden_act, w->a[0], w->s[0], (size_t)B * (size_t)n1);
    output_rows_body(B, n1, n2, w->a[0], params + m->w_off[1],
                     m->b_off[1] != SIZE_MAX ? params + m->b_off[1] : NULL, w->a[1]);
    act_forward_d_body(m->output_act, w->a[1], w->s[1], (size_t)B * (size_t)n2);
}

/* One row: Z0 = s0 * (W1^T Z1); sums into acc (rows 0..n0-1: W0bar^T,
 * n0: b0bar, n0+1..n0+n2: W1bar) and xbar. */
static inline __attribute__((always_inline)) void backward_row(
    int n0, int n1, int n2, const double *restrict W0t, const double *restrict W1,
    const double *restrict Z1, const double *restrict x, const double *restrict a,
    const double *restrict s, double *restrict Z0, double *restrict acc, double *restrict dx)
{
    for (int j = 0; j < n1; j++) Z0[j] = 0.0;
    for (int k = 0; k < n2; k++) {
        const double zk = Z1[k];
        const double *restrict wk = W1 + (size_t)k * n1;
        double *restrict w1bar = acc + (size_t)(n0 + 1 + k) * n1;
        for (int j = 0; j < n1; j++) {
            Z0[j] += zk * wk[j];
            w1bar[j] += zk * a[j];
        }
    }
    double *restrict b0bar = acc + (size_t)n0 * n1;
    for (int j = 0; j < n1; j++) {
        Z0[j] *= s[j];
        b0bar[j] += Z0[j];
    }
    for (int i = 0; i < n0; i++) {
        const double xi = x[i];
        double *restrict row = acc + (size_t)i * n1;
        for (int j = 0; j < n1; j++) row[j] += Z0[j] * xi;
    }
    if (dx)
        for (int i = 0; i < n0; i++) dx[i] += dot2_d(n1, Z0, W0t + (size_t)i * n1);
}

static inline __attribute__((always_inline)) void backward_rows_body(
    int B, int n0, int n1, int n2, const double *W0t, const double *W1, const double *Z1,
    const double *x, const double *a, const double *s, double *Z0, double *acc, double *dx, int lddx)
{
    for (int b = 0; b < B; b++)
        backward_row(n0, n1, n2, W0t, W1, Z1 + (size_t)b * n2, x + (size_t)b * n0, a + (size_t)b * n1,
                     s + (size_t)b * n1, Z0, acc, dx ? dx + (size_t)b * lddx : NULL);
}
static inline __attribute__((always_inline)) void fused_backward_body(int vbytes, const imp_mlp *m,
                                                                      const double *params, const double *dy,
                                                                      int lddy, int B, double *dparams, double *dx,
                                                                      int lddx, imp_mlp_work *w)
{
    (void)vbytes;
    const int n0 = m->sizes[0], n1 = m->sizes[1], n2 = m->sizes[2];
    const double *W0t, *b0, *w1;
    weights_d(m, params, w, &W0t, &b0, &w1);
    double *Z1 = w->buf[0], *Z0 = w->buf[1];
    for (int b = 0; b < B; b++)
        for (int k = 0; k < n2; k++)
            Z1[(size_t)b * n2 + k] = dy[(size_t)b * lddy + k] * w->s[1][(size_t)b * n2 + k];
    memset(w->facc, 0, (size_t)(n0 + 1 + n2) * n1 * sizeof(double));
    backward_rows_body(B, n0, n1, n2, W0t, params + m->w_off[1], Z1, w->x, w->a[0], w->s[0], Z0, w->facc, dx,
                       lddx);
    if (!dparams) return;
    double *dW0 = dparams + m->w_off[0], *db0 = dparams + m->b_off[0], *dW1 = dparams + m->w_off[1];
    const double *b0bar = w->facc + (size_t)n0 * n1, *W1bar = b0bar + n1;
    for (int j = 0; j < n1; j++) {
        for (int i = 0; i < n0; i++) dW0[(size_t)j * n0 + i] += w->facc[(size_t)i * n1 + j];
        db0[j] += b0bar[j];
    }
    for (size_t q = 0; q < (size_t)n2 * n1; q++) dW1[q] += W1bar[q];
    if (m->b_off[1] != SIZE_MAX)
        for (int b = 0; b < B; b++)
            for (int k = 0; k < n2; k++) dparams[m->b_off[1] + k] += Z1[(size_t)b * n2 + k];
}

#define PASS_PARAMS                                                                                         \
    (const imp_mlp *m, const double *params, const double *dy, int lddy, int B, double *dparams, double *dx, \
     int lddx, imp_mlp_work *w)
IMP_ISA_TABLE(fused_forward, (const imp_mlp *m, const double *params, int B, imp_mlp_work *w), (m, params, B, w))
IMP_ISA_TABLE(fused_backward, PASS_PARAMS, (m, params, dy, lddy, B, dparams, dx, lddx, w))

/* forward and backward in double, one table per instruction-set version
 * (everything inside, the activations too, is compiled for it) */
#define FUSED_PASS(isa, v) {"fused forward/backward, double, " #v, 0, isa, NULL, NULL, fused_forward_##v, fused_backward_##v}
#if IMP_HAVE_ISA_VERSIONS
static const imp_mlp_kernels fused_pass[3] = {FUSED_PASS(IMP_ISA_BASE, base), FUSED_PASS(IMP_ISA_AVX2, avx2),
                                              FUSED_PASS(IMP_ISA_AVX512, avx512)};
#else
static const imp_mlp_kernels fused_pass[3] = {FUSED_PASS(IMP_ISA_BASE, base)};
#endif

const imp_mlp_kernels *imp_mlp_fused_pass(int isa)
{
    const imp_mlp_kernels *k = &fused_pass[isa >= IMP_ISA_BASE && isa <= IMP_ISA_AVX512 ? isa : 0];
    return k->name ? k : &fused_pass[IMP_ISA_BASE];
}

/* ---- one row with fixed weights (mlp_fixed.h) ---- */

#include "nn/mlp_fixed.h"

#include <stdlib.h>

/* padded widths are multiples of the widest version's lanes (64 bytes) */
#define FIXED_PAD 8

struct imp_mlp_fixed {
    imp_mlp net;
    int isa;                       /* version of the products, fixed when made */
    int np[IMP_MLP_MAX_LAYERS];    /* padded width of layer l's matrix-vector product; 0: dot products */
    double *W[IMP_MLP_MAX_LAYERS]; /* np > 0: W^T (sizes[l] x np), else W (sizes[l+1] x sizes[l]) */
    double *b[IMP_MLP_MAX_LAYERS]; /* bias (np > 0: padded, zeros without a bias; else NULL without) */
    double *row[2], *s;            /* scratch rows of the widest padded layer */
    int *idx;                      /* (widest layer) the non-zero inputs of a layer after a relu */
    double *W0t, *b0, *w1;         /* fused input gradient (imp_mlp_fused_ok, softplus): W0^T, b0, w1 */
    double *params;                /* copy, for the general input gradient */
    imp_mlp_work *work;            /* one row, for the input gradient */
    double *slab;
};

/* z (n_out) = W x + b by the matrix-vector kernel (np > 0) or dot products;
 * relu != 0: then z = max(z, 0) in place (relu_forward_body's values, no
 * derivative: nothing runs backward through a rollout). idx (n_in ints):
 * the input comes from a relu, and the kernel skips its zeros (half of the
 * units, typically). */
static inline __attribute__((always_inline)) void fixed_layer_body(int vbytes, int n_in, int n_out, int np,
                                                                   const double *x, const double *W,
                                                                   const double *b, double *z, int relu,
                                                                   int *idx)
{
    if (np > 0 && idx) {
        int n_nz = 0;
        for (int k = 0; k < n_in; k++) {
            idx[n_nz] = k;
            n_nz += x[k] != 0.0;
        }
        matvec_idx_row_body_d(vbytes, n_nz, idx, np, x, W, b, z);
    } else if (np > 0)
        matvec_row_body_d(vbytes, n_in, np, x, W, b, z);
    else
        for (int j = 0; j < n_out; j++) z[j] = (b ? b[j] : 0.0) + dot2_d(n_in, x, W + (size_t)j * n_in);
    if (relu)
        for (int j = 0; j < n_out; j++) z[j] = z[j] > 0.0 ? z[j] : 0.0;
}
#define FIXED_LAYER_PARAMS \
    (int n_in, int n_out, int np, const double *x, const double *W, const double *b, double *z, int relu, \
     int *idx)
IMP_ISA_TABLE(fixed_layer, FIXED_LAYER_PARAMS, (n_in, n_out, np, x, W, b, z, relu, idx))

/* g = W0^T (w1 * s), s = softplus'(W0 x + b0), for one row in one pass over
 * the hidden units, eight at a time: the sums of sweep 1 (pre_activation_rows
 * and dot3: eight partial sums by unit index mod 8, then the tail, in a
 * fixed tree), s by softplus_deriv_div_d. */
static inline __attribute__((always_inline)) void fixed_grad_body(int vbytes, int n0, int n1, const double *x,
                                                                  const double *restrict W0t,
                                                                  const double *restrict b0,
                                                                  const double *restrict w1, double *g)
{
    (void)vbytes;
    double part[FUSED_MAX_INPUTS][8], tail[FUSED_MAX_INPUTS];
    for (int i = 0; i < n0; i++) {
        tail[i] = 0.0;
        for (int k = 0; k < 8; k++) part[i][k] = 0.0;
    }
    int j = 0;
    if (n0 == 1) {
        const double x0 = x[0];
        for (; j + 8 <= n1; j += 8)
            for (int k = 0; k < 8; k++)
                part[0][k] += softplus_deriv_div_d(b0[j + k] + x0 * W0t[j + k]) * w1[j + k] * W0t[j + k];
        for (; j < n1; j++) tail[0] += softplus_deriv_div_d(b0[j] + x0 * W0t[j]) * w1[j] * W0t[j];
    } else {
        for (; j + 8 <= n1; j += 8) {
            double t[8];
            for (int k = 0; k < 8; k++) t[k] = b0[j + k] + x[0] * W0t[j + k];
            for (int i = 1; i < n0; i++)
                for (int k = 0; k < 8; k++) t[k] += x[i] * W0t[(size_t)i * n1 + j + k];
            for (int k = 0; k < 8; k++) t[k] = softplus_deriv_div_d(t[k]) * w1[j + k];
            for (int i = 0; i < n0; i++)
                for (int k = 0; k < 8; k++) part[i][k] += t[k] * W0t[(size_t)i * n1 + j + k];
        }
        for (; j < n1; j++) {
            double t = b0[j] + x[0] * W0t[j];
            for (int i = 1; i < n0; i++) t += x[i] * W0t[(size_t)i * n1 + j];
            t = softplus_deriv_div_d(t) * w1[j];
            for (int i = 0; i < n0; i++) tail[i] += t * W0t[(size_t)i * n1 + j];
        }
    }
    for (int i = 0; i < n0; i++) g[i] = sum_parts_d(part[i], tail[i]);
}
IMP_ISA_TABLE(fixed_grad, (int n0, int n1, const double *x, const double *W0t, const double *b0, const double *w1,
                           double *g),
              (n0, n1, x, W0t, b0, w1, g))

static void fixed_layer(int isa, int n_in, int n_out, int np, const double *x, const double *W, const double *b,
                        double *z, int relu, int *idx)
{
#if IMP_HAVE_ISA_VERSIONS
    switch (isa) {
    case IMP_ISA_AVX512: fixed_layer_avx512(n_in, n_out, np, x, W, b, z, relu, idx); break;
    case IMP_ISA_AVX2: fixed_layer_avx2(n_in, n_out, np, x, W, b, z, relu, idx); break;
    default: fixed_layer_base(n_in, n_out, np, x, W, b, z, relu, idx); break;
    }
#else
    (void)isa;
    fixed_layer_base(n_in, n_out, np, x, W, b, z, relu, idx);
#endif
}

/* One row of a fixed float layer (mlp_single.c's fixed weights): the
 * family's matrix-vector kernel in float, per version. */
static inline __attribute__((always_inline)) void matvec_row_f_v_body(int vbytes, int n_in, int np,
                                                                      const float *restrict x,
                                                                      const float *restrict Wt,
                                                                      const float *restrict b, float *restrict z)
{
    matvec_row_body_f(vbytes, n_in, np, x, Wt, b, z);
}
#define MATVEC_F_PARAMS \
    (int n_in, int np, const float *restrict x, const float *restrict Wt, const float *restrict b, float *restrict z)
IMP_ISA_TABLE(matvec_row_f_v, MATVEC_F_PARAMS, (n_in, np, x, Wt, b, z))

void imp_mlp_matvec_row_f(int isa, int n_in, int np, const float *x, const float *Wt, const float *b, float *z)
{
#if IMP_HAVE_ISA_VERSIONS
    switch (isa) {
    case IMP_ISA_AVX512: matvec_row_f_v_avx512(n_in, np, x, Wt, b, z); break;
    case IMP_ISA_AVX2: matvec_row_f_v_avx2(n_in, np, x, Wt, b, z); break;
    default: matvec_row_f_v_base(n_in, np, x, Wt, b, z); break;
    }
#else
    (void)isa;
    matvec_row_f_v_base(n_in, np, x, Wt, b, z);
#endif
}

imp_mlp_fixed *imp_mlp_fixed_new(const imp_mlp *m, const double *params)
{
    if (!m || !params || m->n_layers < 1 || m->n_layers > IMP_MLP_MAX_LAYERS) {
        imp_fail(IMP_ERR_INVALID, "mlp fixed: no network or parameters");
        return NULL;
    }
    imp_mlp_fixed *f = calloc(1, sizeof *f);
    if (!f) {
        imp_fail(IMP_ERR_NOMEM, "mlp fixed: out of memory");
        return NULL;
    }
    f->net = *m;
    f->isa = imp_act_isa();
    const int L = m->n_layers;
    size_t total = m->n_params, width = (size_t)m->sizes[0];
    for (int l = 0; l < L; l++) {
        const int n_in = m->sizes[l], n_out = m->sizes[l + 1];
        f->np[l] = n_out > IMP_MLP_THIN ? (n_out + FIXED_PAD - 1) / FIXED_PAD * FIXED_PAD : 0;
        const size_t cols = f->np[l] ? (size_t)f->np[l] : (size_t)n_out;
        total += ((size_t)n_in + 1) * cols;
        width = cols > width ? cols : width;
    }
    total += 3 * width;
    const int fused = imp_mlp_fused_ok(m) && m->hidden_act == IMP_ACT_SOFTPLUS;
    if (fused) total += ((size_t)m->sizes[0] + 2) * (size_t)m->sizes[1];
    f->slab = calloc(total, sizeof(double));
    f->idx = calloc(width, sizeof(int));
    f->work = f->slab && f->idx ? imp_mlp_work_new(m, 1) : NULL;
    if (!f->work) {
        imp_mlp_fixed_free(f);
        imp_fail(IMP_ERR_NOMEM, "mlp fixed: out of memory");
        return NULL;
    }
    double *p = f->slab;
    f->params = p, p += m->n_params;
    memcpy(f->params, params, m->n_params * sizeof(double));
    for (int l = 0; l < L; l++) {
        const int n_in = m->sizes[l], n_out = m->sizes[l + 1], np = f->np[l];
        const double *W = params + m->w_off[l];
        const int has_b = m->b_off[l] != SIZE_MAX;
        if (np) {
            f->W[l] = p, p += (size_t)n_in * np;
            f->b[l] = p, p += np;
            for (int j = 0; j < n_out; j++) {
                for (int k = 0; k < n_in; k++) f->W[l][(size_t)k * np + j] = W[(size_t)j * n_in + k];
                f->b[l][j] = has_b ? params[m->b_off[l] + j] : 0.0;
            }
        } else {
            f->W[l] = p, p += (size_t)n_in * n_out;
            f->b[l] = has_b ? p : NULL, p += n_out;
            memcpy(f->W[l], W, (size_t)n_in * n_out * sizeof(double));
            if (has_b) memcpy(f->b[l], params + m->b_off[l], (size_t)n_out * sizeof(double));
        }
    }
    f->row[0] = p, p += width;
    f->row[1] = p, p += width;
    f->s = p, p += width;
    if (fused) {
        const int n0 = m->sizes[0], n1 = m->sizes[1];
        const double *W0 = params + m->w_off[0];
        f->W0t = p, p += (size_t)n0 * n1;
        f->b0 = p, p += n1;
        f->w1 = p;
        for (int j = 0; j < n1; j++)
            for (int i = 0; i < n0; i++) f->W0t[(size_t)i * n1 + j] = W0[(size_t)j * n0 + i];
        memcpy(f->b0, params + m->b_off[0], (size_t)n1 * sizeof(double));
        memcpy(f->w1, params + m->w_off[1], (size_t)n1 * sizeof(double));
    }
    return f;
}

void imp_mlp_fixed_free(imp_mlp_fixed *f)
{
    if (!f) return;
    imp_mlp_work_free(f->work);
    free(f->idx);
    free(f->slab);
    free(f);
}

void imp_mlp_fixed_forward(imp_mlp_fixed *f, const double *x, double *y)
{
    const imp_mlp *m = &f->net;
    const int L = m->n_layers;
    const double *in = x;
    for (int l = 0; l < L; l++) {
        const int n_out = m->sizes[l + 1];
        double *z = f->row[l & 1];
        const imp_activation act = l == L - 1 ? m->output_act : m->hidden_act;
        fixed_layer(f->isa, m->sizes[l], n_out, f->np[l], in, f->W[l], f->b[l], z, act == IMP_ACT_RELU,
                    l > 0 && m->hidden_act == IMP_ACT_RELU ? f->idx : NULL);
        if (act != IMP_ACT_RELU && act != IMP_ACT_IDENTITY) imp_act_forward(act, z, f->s, (size_t)n_out);
        in = z;
    }
    memcpy(y, in, (size_t)m->sizes[L] * sizeof(double));
}

void imp_mlp_fixed_grad_input(imp_mlp_fixed *f, const double *x, double *g)
{
    const imp_mlp *m = &f->net;
    if (!f->W0t) {
        imp_mlp_grad_input(m, f->params, x, 1, g, NULL, f->work);
        return;
    }
    const int n0 = m->sizes[0], n1 = m->sizes[1];
#if IMP_HAVE_ISA_VERSIONS
    switch (f->isa) {
    case IMP_ISA_AVX512: fixed_grad_avx512(n0, n1, x, f->W0t, f->b0, f->w1, g); break;
    case IMP_ISA_AVX2: fixed_grad_avx2(n0, n1, x, f->W0t, f->b0, f->w1, g); break;
    default: fixed_grad_base(n0, n1, x, f->W0t, f->b0, f->w1, g); break;
    }
#else
    fixed_grad_base(n0, n1, x, f->W0t, f->b0, f->w1, g);
#endif
}
