/* Forward and backward of an MLP in single precision.
 *
 * Why: the contact network of the CD-Lagrange and ResNetContact models
 * (2D -> 100 -> 100 -> K, ReLU, sigmoid output) spends its time in the
 * 100 x 100 products, evaluated at every step of every training window.
 * At those shapes (32 x 100 x 100) OpenBLAS's sgemm runs 1.85x faster than
 * its dgemm here (36 against 19.5 us for the three products of one step,
 * measured, bench/bench_mlp.c). The contact network only classifies
 * (its output is a probability thresholded at 0.5 or fed to a
 * cross-entropy), so its products do not need double precision; the
 * potential network, whose gradient is the force, has its own sweeps
 * (mlp_fused.c) and stays double outside training.
 *
 * What runs in single: every layer's product, activation and weight
 * gradient. The passes are the double path's, from one source
 * (mlp_pass.inc, included below with float): the thin layers (a few inputs
 * or outputs: the contact network's first and output layers) take loops
 * and sgemv instead of sgemm (gemm_f); until session 5 they ran in double, and the
 * crossings between the two precisions at every layer boundary cost a
 * tenth of a CD-Lagrange training epoch (perf, bench/bench_cdl.c).
 * Values cross once on the way in (the input) and once on the way out: the
 * output layer's activation, the loss and every accumulation into the
 * caller's double gradient stay in double (a sigmoid output rounded to
 * float could reach 1 and make the cross-entropy infinite). Smooth hidden
 * activations go through the double kernels and are rounded once.
 * tests/test_nn.c checks the results against the double path (relative
 * agreement ~1e-6) and against finite differences.
 *
 * This file holds what only float has: its buffers, the crossings between
 * the precisions, rounded weights shared with a leader or fixed once
 * (with their matrix-vector kernel), and the hooks of mlp_pass.inc.
 * Only imp_mlp_forward/backward take this path, when
 * imp_mlp_work_set_single(w, 1) was called and the network has a wide
 * layer (otherwise there is nothing to gain); the input-gradient sweeps of
 * the potentials take mlp_fused.c. The cache remembers which table
 * made it (w->cache_k), so a backward always matches its forward. */
#include "nn/mlp_internal.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

int imp_mlp_work_set_single(imp_mlp_work *w, int on)
{
    if (!w) return imp_fail(IMP_ERR_INVALID, "mlp work: NULL");
    if (!on || w->fslab) {
        w->single = on != 0;
        imp_mlp_kernels_choose(w);
        return IMP_OK;
    }
    const int L = w->n_layers;
    const size_t Bz = (size_t)w->max_batch;
    size_t total = Bz * (size_t)w->sizes[0] + 2 * Bz * (size_t)w->n_max, dw_max = 0;
    for (int l = 0; l < L; l++) {
        size_t nw = (size_t)w->sizes[l] * (size_t)w->sizes[l + 1];
        total += 2 * Bz * (size_t)w->sizes[l + 1] + nw;
        if (nw > dw_max) dw_max = nw;
    }
    total += dw_max;
    /* the fused sweeps of one-hidden-layer scalar networks (mlp_fused.c):
     * rounded W0^T, b0, w1; their sums; the t and r rows */
    const size_t nf = w->n_layers == 2 ? ((size_t)w->sizes[0] + 2) * (size_t)w->sizes[1] : 0;
    total += 2 * nf + (nf ? 2 * (size_t)w->sizes[1] : 0);
    float *p = calloc(total, sizeof(float));
    if (!p) return imp_fail(IMP_ERR_NOMEM, "mlp work: cannot allocate %zu floats for the single path", total);
    w->fslab = p;
    w->fx = p, p += Bz * (size_t)w->sizes[0];
    w->fZ = p, p += Bz * (size_t)w->n_max;
    w->fnext = p, p += Bz * (size_t)w->n_max;
    for (int l = 0; l < L; l++) {
        w->fa[l] = p, p += Bz * (size_t)w->sizes[l + 1];
        w->fs[l] = p, p += Bz * (size_t)w->sizes[l + 1];
        w->fW[l] = p, p += (size_t)w->sizes[l] * (size_t)w->sizes[l + 1];
    }
    w->fdW = p, p += dw_max;
    if (nf) {
        w->ffw = p, p += nf;
        w->ffacc = p, p += nf;
        w->ftr = p;
    }
    w->single = 1;
    imp_mlp_kernels_choose(w);
    return IMP_OK;
}

int imp_mlp_work_single_follow(imp_mlp_work *w, imp_mlp_work *leader)
{
    if (!w) return imp_fail(IMP_ERR_INVALID, "mlp work: NULL");
    if (leader) {
        if (leader == w || leader->leader)
            return imp_fail(IMP_ERR_INVALID, "leader: must be another work that follows no one");
        if (leader->n_layers != w->n_layers || memcmp(leader->sizes, w->sizes, sizeof w->sizes) != 0)
            return imp_fail(IMP_ERR_SHAPE, "leader: a work of another network shape");
        if (w->fixed) return imp_fail(IMP_ERR_INVALID, "leader: w has fixed weights of its own");
        if (!leader->fslab || !w->fslab)
            return imp_fail(IMP_ERR_INVALID, "leader: both works need the single path (imp_mlp_work_set_single)");
    }
    w->leader = leader;
    return IMP_OK;
}

/* The elementwise loops, in AVX-512/AVX2/baseline versions (mlp_internal.h):
 * the weight rounding alone is 10^4 conversions per pass of the contact net. */
static inline __attribute__((always_inline)) void to_float_body(float *restrict out, const double *restrict in,
                                                                size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = (float)in[i];
}
IMP_ISA_VERSIONS(to_float, (float *restrict out, const double *restrict in, size_t n), (out, in, n))


static inline __attribute__((always_inline)) void to_double_body(double *restrict out, const float *restrict in,
                                                                 size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = (double)in[i];
}
IMP_ISA_VERSIONS(to_double, (double *restrict out, const float *restrict in, size_t n), (out, in, n))

/* out += in (float into double) */
static inline __attribute__((always_inline)) void add_float_body(double *restrict out, const float *restrict in,
                                                                 size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] += (double)in[i];
}
IMP_ISA_VERSIONS(add_float, (double *restrict out, const float *restrict in, size_t n), (out, in, n))

static inline __attribute__((always_inline)) void relu_float_body(float *restrict z, float *restrict s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int pos = z[i] > 0.0f;
        s[i] = pos ? 1.0f : 0.0f;
        z[i] = pos ? z[i] : 0.0f;
    }
}
IMP_ISA_VERSIONS(relu_float, (float *restrict z, float *restrict s, size_t n), (z, s, n))

/* Activation of a hidden layer in place (z -> a, s = phi'(z)). ReLU and
 * identity are exact in float; the smooth ones go through the double
 * kernels (zd, sd: double scratch of n) and are rounded once. */
static void act_single(imp_activation act, float *restrict z, float *restrict s, double *zd, double *sd, size_t n)
{
    switch (act) {
    case IMP_ACT_RELU: relu_float(z, s, n); return;
    case IMP_ACT_IDENTITY:
        for (size_t i = 0; i < n; i++) s[i] = 1.0f;
        return;
    default:
        to_double(zd, z, n);
        imp_act_forward(act, zd, sd, n);
        to_float(z, zd, n);
        to_float(s, sd, n);
    }
}

/* ---- the general passes in float (mlp_pass.inc) ---- */

static const float *input_f(imp_mlp_work *w, int B)
{
    to_float(w->fx, w->x, (size_t)B * (size_t)w->sizes[0]);
    return w->fx;
}

/* the forward's (round: 1) rounds them unless fixed or a leader's */
static const float *weights_f(const imp_mlp *m, const double *params, imp_mlp_work *w, int l, int round)
{
    if (w->leader) return w->leader->fW[l]; /* rounded by the leader's forward (imp_mlp_work_single_follow) */
    if (round && !w->fixed) to_float(w->fW[l], params + m->w_off[l], (size_t)m->sizes[l + 1] * (size_t)m->sizes[l]);
    return w->fW[l];
}

/* the output layer's activation in double */
static void activate_f(const imp_mlp *m, imp_mlp_work *w, int l, float *z, size_t cnt)
{
    if (l == m->n_layers - 1) {
        to_double(w->a[l], z, cnt);
        imp_act_forward(m->output_act, w->a[l], w->s[l], cnt);
    } else {
        act_single(m->hidden_act, z, w->fs[l], w->a[l], w->s[l], cnt);
    }
}

static void fixed_affine(imp_mlp_work *w, int l, const float *in, int B, float *z);

#define MP_REAL float
#define MP_SFX _f
#define MP_SINGLE 1
#define MP_GEMV cblas_sgemv
#define MP_GEMM cblas_sgemm
#define MP_X(w) ((w)->fx)
#define MP_A(w, l) ((w)->fa[l])
#define MP_S(w, l) ((w)->fs[l])
#define MP_Z(w) ((w)->fZ)
#define MP_NEXT(w) ((w)->fnext)
#include "nn/mlp_pass.inc"

static void single_forward(const imp_mlp *m, const double *params, int B, imp_mlp_work *w)
{
    forward_f(m, params, B, w, m->n_layers);
}

static int pad16(int n) { return (n + 15) / 16 * 16; }

int imp_mlp_work_single_fix(imp_mlp_work *w, const double *params)
{
    if (!w) return imp_fail(IMP_ERR_INVALID, "mlp work: NULL");
    if (!params) {
        w->fixed = 0;
        return IMP_OK;
    }
    if (!w->fslab) return imp_fail(IMP_ERR_INVALID, "mlp work: fixed weights need the single path first");
    if (w->leader) return imp_fail(IMP_ERR_INVALID, "mlp work: follows a leader's weights");
    const imp_mlp *m = &w->net;
    const int L = m->n_layers;
    if (!w->fixslab) {
        size_t total = 0, np_max = 0;
        for (int l = 0; l < L; l++) {
            const size_t np = (size_t)pad16(m->sizes[l + 1]);
            total += ((size_t)m->sizes[l] + 1) * np;
            np_max = np > np_max ? np : np_max;
        }
        total += np_max;
        float *p = calloc(total, sizeof(float));
        if (!p) return imp_fail(IMP_ERR_NOMEM, "mlp work: cannot allocate %zu floats for fixed weights", total);
        w->fixslab = p;
        for (int l = 0; l < L; l++) {
            const size_t np = (size_t)pad16(m->sizes[l + 1]);
            w->fWt[l] = p, p += (size_t)m->sizes[l] * np;
            w->fbt[l] = p, p += np;
        }
        w->fzrow = p;
    }
    for (int l = 0; l < L; l++) {
        const int n_in = m->sizes[l], n_out = m->sizes[l + 1], np = pad16(n_out);
        const double *W = params + m->w_off[l];
        to_float(w->fW[l], W, (size_t)n_out * (size_t)n_in);
        for (int j = 0; j < n_out; j++) {
            for (int k = 0; k < n_in; k++) w->fWt[l][(size_t)k * np + j] = (float)W[(size_t)j * n_in + k];
            w->fbt[l][j] = m->b_off[l] != SIZE_MAX ? (float)params[m->b_off[l] + j] : 0.0f;
        }
    }
    if (w->ffw && imp_mlp_fused_ok(m)) imp_mlp_fused_single_fix(w, params);
    w->fixed = 1;
    return IMP_OK;
}

/* z (B x n_out) = in W^T + b with the fixed weights: for at most
 * IMP_MLP_THIN rows the matrix-vector kernel of the work's version, row by
 * row through the padded scratch row; otherwise the bias rows and gemm_f */
static void fixed_affine(imp_mlp_work *w, int l, const float *in, int B, float *z)
{
    const int n_in = w->sizes[l], n_out = w->sizes[l + 1], np = pad16(n_out);
    if (B > IMP_MLP_THIN) {
        for (int r = 0; r < B; r++) memcpy(z + (size_t)r * n_out, w->fbt[l], (size_t)n_out * sizeof(float));
        gemm_f(w, 0, 1, B, n_out, n_in, 1.0f, in, n_in, w->fW[l], n_in, 1.0f, z, n_out);
        return;
    }
    for (int r = 0; r < B; r++) {
        const float *x = in + (size_t)r * n_in;
        imp_mlp_matvec_row_f(w->isa, n_in, np, x, w->fWt[l], w->fbt[l], w->fzrow);
        memcpy(z + (size_t)r * n_out, w->fzrow, (size_t)n_out * sizeof(float));
    }
}

/* forward and backward with float products; the elementwise kernels follow
 * the process's version (imp_act_isa) */
const imp_mlp_kernels imp_mlp_single_pass = {"forward/backward, float", 1, -1, NULL, NULL, single_forward,
                                             backward_f};
