/* The fused sweeps of mlp_fused.c (gradient dV/dx of a scalar network with
 * one hidden layer and a few inputs, and the reverse sweep through it) in
 * single precision, for training the CD-Lagrange and VIN potentials.
 *
 * Why: after the contact network went to single precision (mlp_single.c),
 * the potential's sweeps were 43 % of a CD-Lagrange training epoch of the
 * ball (perf, bench/bench_cdl.c), half of it the exponential and
 * reciprocal behind softplus' = sigmoid over B x 500 hidden units at every
 * step. In float a vector holds twice the lanes and the series are half as
 * long. Accuracy: the training loss and its gradient only steer Adam and
 * the windows are 10 steps, so relative errors of ~1e-6 in the force during
 * training are far below the noise of the data (sigma = 0.2); rollouts,
 * evaluation and imp_model_potential_grad stay double. tests/test_nn.c
 * compares these sweeps with the double ones (and through them with finite
 * differences); tests/test_cdl_models.c compares whole window losses.
 *
 * Taken by imp_mlp_grad_input_ld (V not asked for) when the work is in
 * single mode (imp_mlp_work_set_single) and the fused path applies; the
 * cache is marked w->fused = 1 and w->single_cache = 1, and sweep 2 follows
 * it. The weights are rounded in sweep 1 and reused by sweep 2 (which, as
 * always, must get the same parameters).
 *
 * Equations as mlp_fused.c:
 * Sweep 1:  z = W0 x + b0,  g = W0^T (w1 * s),  s = phi'(z)
 * Sweep 2:  t = W0 gbar,  r = w1 * t * phi''(z),
 *           w1bar += s * t,  b0bar += r,  W0bar += (w1 * s) gbar^T + r x^T,
 *           xbar += W0^T r. */
#include "nn/mlp_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* For x <= 0: *em = expm1(x), returns exp(x), in float. x = n ln2 + r with
 * |r| <= ln2/2 and expm1(r) by its Taylor series to r^7 (truncation
 * < 2e-8 relative, below float's 6e-8); exp(x) = 2^n (1 + p). Below -60
 * the results are 0 and -1: exp(-60) ~ 9e-27 is far below float rounding
 * next to any unsaturated unit. */
static inline __attribute__((always_inline)) float expf_neg(float x, float *em)
{
    const float log2e = 1.44269504f, ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187e-06f,
                shifter = 0x1.8p23f;
    int under = x < -60.0f;
    float xc = under ? -60.0f : x;
    float kd = xc * log2e + shifter;
    float n = kd - shifter;
    float r = (xc - n * ln2_hi) - n * ln2_lo;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r * r + r; /* expm1(r) */
    uint32_t kbits, sbits;
    memcpy(&kbits, &kd, sizeof kbits);
    sbits = (kbits - UINT32_C(0x4B400000) + 127u) << 23; /* 2^n: n sits in kd's low mantissa bits */
    float scale;
    memcpy(&scale, &sbits, sizeof scale);
    *em = under ? -1.0f : scale * p + (scale - 1.0f);
    return under ? 0.0f : scale * p + scale;
}

/* exp(x) for x <= 0, in float, without expm1 (softplus' and sigmoid
 * need only exp): the reduction of expf_neg and a degree-5 polynomial
 * for exp(r) on |r| <= ln2/2, fitted to minimise the relative error
 * (7.5e-8 = 1.3 float ulp; the truncated Taylor series of expf_neg needs
 * degree 7 and the expm1 form: three operations more per element). Below
 * -60 it returns exp(-60) ~ 9e-27 rather than a select to 0, which made
 * GCC mask every operation of the vectorised loop (10 % slower). */
static inline __attribute__((always_inline)) float expf_neg_only(float x)
{
    const float log2e = 1.44269504f, ln2_hi = 0.693145751953125f, ln2_lo = 1.428606765330187e-06f,
                shifter = 0x1.8p23f;
    float xc = x < -60.0f ? -60.0f : x; /* a max, not a branch: below, exp(-60) ~ 9e-27 stands in for 0 */
    float kd = xc * log2e + shifter;
    float n = kd - shifter;
    float r = (xc - n * ln2_hi) - n * ln2_lo;
    float p = 8.2976e-3f;
    p = p * r + 4.191538e-2f;
    p = p * r + 0.16667576f;
    p = p * r + 0.49998894f;
    p = p * r + 0.9999997f;
    p = p * r + 1.0000001f;
    uint32_t kbits, sbits;
    memcpy(&kbits, &kd, sizeof kbits);
    sbits = (kbits - UINT32_C(0x4B400000) + 127u) << 23; /* 2^n: n sits in kd's low mantissa bits */
    float scale;
    memcpy(&scale, &sbits, sizeof scale);
    return scale * p;
}

/* 1/d for d in [1, 2] without a division: a quadratic guess fitted to
 * minimise |1 - d y| (<= 0.0102) and two Newton steps (0.0102^4 ~ 1e-8,
 * below float's 6e-8); a linear guess needs three steps. */
static inline __attribute__((always_inline)) float recipf_1_2(float d)
{
    float y = (0.32317632f * d - 1.45437444f) * d + 2.12108835f;
    y = y + y * (1.0f - d * y);
    y = y + y * (1.0f - d * y);
    return y;
}

/* softplus'(z) = sigmoid(z) = 1 / (1 + exp(-z)), through exp(-|z|) */
static inline __attribute__((always_inline)) float softplus_deriv_f(float z)
{
    float e = expf_neg_only(-fabsf(z));
    float sig_abs = recipf_1_2(1.0f + e);
    return z >= 0.0f ? sig_abs : e * sig_abs;
}

/* s = phi'(z) in place in zs, and for tanh and sigmoid also a = phi(z)
 * (a holds z on entry); the formulas of activation.c. */
static inline __attribute__((always_inline)) void act_deriv_f_body(imp_activation act, float *restrict a,
                                                                   float *restrict zs, size_t n)
{
    switch (act) {
    case IMP_ACT_SOFTPLUS:
        for (size_t i = 0; i < n; i++) zs[i] = softplus_deriv_f(zs[i]);
        break;
    case IMP_ACT_TANH:
        for (size_t i = 0; i < n; i++) {
            float zi = a[i], em;
            float e = expf_neg(-2.0f * fabsf(zi), &em);
            float inv = recipf_1_2(2.0f + em);
            a[i] = copysignf(-em * inv, zi);
            zs[i] = 4.0f * e * inv * inv;
        }
        break;
    case IMP_ACT_SIGMOID:
        for (size_t i = 0; i < n; i++) {
            float zi = a[i];
            float e = expf_neg_only(-fabsf(zi));
            float inv = recipf_1_2(1.0f + e);
            a[i] = zi >= 0.0f ? inv : e * inv;
            zs[i] = e * inv * inv;
        }
        break;
    case IMP_ACT_RELU:
        for (size_t i = 0; i < n; i++) zs[i] = zs[i] > 0.0f ? 1.0f : 0.0f;
        break;
    case IMP_ACT_IDENTITY:
        for (size_t i = 0; i < n; i++) zs[i] = 1.0f;
        break;
    }
}

static int needs_value(imp_activation act) { return act == IMP_ACT_TANH || act == IMP_ACT_SIGMOID; }

/* 16 fixed partial sums (one AVX-512 float vector), the same at every
 * vector width, as mlp_fused.c's dot products */
static inline __attribute__((always_inline)) float sum16(const float *part, float tail)
{
    float s8[8];
    for (int k = 0; k < 8; k++) s8[k] = part[k] + part[k + 8];
    return (((s8[0] + s8[1]) + (s8[2] + s8[3])) + ((s8[4] + s8[5]) + (s8[6] + s8[7]))) + tail;
}

static inline __attribute__((always_inline)) void pre_activation_rows_f_body(
    int B, int n0, int n1, const float *restrict x, const float *restrict W0t, const float *restrict b0,
    float *restrict z)
{
    for (int b = 0; b < B; b++) {
        float *restrict zb = z + (size_t)b * n1;
        const float x0 = x[(size_t)b * n0];
        for (int j = 0; j < n1; j++) zb[j] = b0[j] + x0 * W0t[j];
        for (int i = 1; i < n0; i++) {
            const float xi = x[(size_t)b * n0 + i];
            const float *restrict col = W0t + (size_t)i * n1;
            for (int j = 0; j < n1; j++) zb[j] += xi * col[j];
        }
    }
}

/* g_i = sum_j s_j w1_j W0[j,i] for every row, rounded up to double */
static inline __attribute__((always_inline)) void grad_rows_f_body(int B, int n0, int n1,
                                                                   const float *restrict s,
                                                                   const float *restrict W0t,
                                                                   const float *restrict w1,
                                                                   double *restrict g, int ldg)
{
    for (int b = 0; b < B; b++)
        for (int i = 0; i < n0; i++) {
            const float *restrict sb = s + (size_t)b * n1, *restrict col = W0t + (size_t)i * n1;
            float part[16] = {0};
            int j = 0;
            for (; j + 16 <= n1; j += 16)
                for (int k = 0; k < 16; k++) part[k] += sb[j + k] * w1[j + k] * col[j + k];
            float tail = 0.0f;
            for (; j < n1; j++) tail += sb[j] * w1[j] * col[j];
            g[(size_t)b * ldg + i] = (double)sum16(part, tail);
        }
}

/* Sweep 1 row by row: pre-activation, activation and gradient of one row
 * while its n1 values are in L1 (over the whole batch the three passes
 * went through L2). Each element sees the same operations as in the
 * batch-wide kernels above, so the results are the same bit for bit. */
static inline __attribute__((always_inline)) void sweep1_rows_f_body(imp_activation act, int B, int n0, int n1,
                                                                     const float *x, const float *W0t,
                                                                     const float *b0, const float *w1, float *a,
                                                                     float *s, double *g, int ldg)
{
    const int value = needs_value(act);
    for (int b = 0; b < B; b++) {
        float *ab = value ? a + (size_t)b * n1 : NULL, *sb = s + (size_t)b * n1;
        if (n0 == 1 && act == IMP_ACT_SOFTPLUS) { /* the potentials of the ball and pendulum: z never stored */
            const float x0 = x[b];
            for (int j = 0; j < n1; j++) sb[j] = softplus_deriv_f(b0[j] + x0 * W0t[j]);
            grad_rows_f_body(1, 1, n1, sb, W0t, w1, g + (size_t)b * ldg, ldg);
            continue;
        }
        pre_activation_rows_f_body(1, n0, n1, x + (size_t)b * n0, W0t, b0, value ? ab : sb);
        act_deriv_f_body(act, ab, sb, (size_t)n1);
        grad_rows_f_body(1, n0, n1, sb, W0t, w1, g + (size_t)b * ldg, ldg);
    }
}
IMP_ISA_VERSIONS(sweep1_rows_f,
                 (imp_activation act, int B, int n0, int n1, const float *x, const float *W0t, const float *b0,
                  const float *w1, float *a, float *s, double *g, int ldg),
                 (act, B, n0, n1, x, W0t, b0, w1, a, s, g, ldg))

void imp_mlp_fused_single_sweep1(const imp_mlp *m, const double *params, int B, double *g, int ldg,
                                 imp_mlp_work *w)
{
    const int n0 = m->sizes[0], n1 = m->sizes[1];
    float *W0t = w->ffw, *b0 = W0t + (size_t)n0 * n1, *w1 = b0 + n1;
    const double *W0 = params + m->w_off[0];
    if (n0 == 1)
        imp_vec_to_float(W0t, W0, (size_t)n1);
    else
        for (int j = 0; j < n1; j++)
            for (int i = 0; i < n0; i++) W0t[(size_t)i * n1 + j] = (float)W0[(size_t)j * n0 + i];
    imp_vec_to_float(b0, params + m->b_off[0], (size_t)n1);
    imp_vec_to_float(w1, params + m->w_off[1], (size_t)n1);
    imp_vec_to_float(w->fx, w->x, (size_t)B * (size_t)n0);
    const unsigned csr = imp_flush_subnormals_begin();
    sweep1_rows_f(m->hidden_act, B, n0, n1, w->fx, W0t, b0, w1, w->fa[0], w->fs[0], g, ldg);
    imp_flush_subnormals_end(csr);
    w->fwd_batch = 0;
    w->gradient_only = 1;
    w->fused = 1;
    w->single_cache = 1;
    w->sweep1_batch = B;
}

/* One row of sweep 2 in float; acc rows 0..n0-1: W0bar^T, n0: b0bar,
 * n0+1: w1bar (float sums over the B rows of one call). Returns nothing;
 * xbar is added to dx (double). */
static inline __attribute__((always_inline)) void sweep2_row_f(
    imp_activation act, int n0, int n1, const float *restrict W0t, const float *restrict w1,
    const float *restrict gb, const float *restrict x, const float *restrict a, const float *restrict s,
    float *restrict t, float *restrict r, float *restrict acc, double *restrict dx)
{
    for (int j = 0; j < n1; j++) t[j] = 0.0f;
    for (int i = 0; i < n0; i++) {
        const float gi = gb[i];
        const float *restrict col = W0t + (size_t)i * n1;
        for (int j = 0; j < n1; j++) t[j] += gi * col[j];
    }
    switch (act) {
    case IMP_ACT_TANH:
        for (int j = 0; j < n1; j++) r[j] = w1[j] * t[j] * (-2.0f * a[j] * s[j]);
        break;
    case IMP_ACT_SIGMOID:
        for (int j = 0; j < n1; j++) r[j] = w1[j] * t[j] * (s[j] * (1.0f - 2.0f * a[j]));
        break;
    case IMP_ACT_SOFTPLUS:
        for (int j = 0; j < n1; j++) r[j] = w1[j] * t[j] * (s[j] * (1.0f - s[j]));
        break;
    default:
        for (int j = 0; j < n1; j++) r[j] = 0.0f;
        break;
    }
    float *restrict b0bar = acc + (size_t)n0 * n1, *restrict w1bar = b0bar + n1;
    for (int j = 0; j < n1; j++) {
        b0bar[j] += r[j];
        w1bar[j] += s[j] * t[j];
    }
    for (int i = 0; i < n0; i++) {
        const float gi = gb[i], xi = x[i];
        float *restrict row = acc + (size_t)i * n1;
        for (int j = 0; j < n1; j++) row[j] += w1[j] * s[j] * gi + r[j] * xi;
    }
    if (dx)
        for (int i = 0; i < n0; i++) {
            const float *restrict col = W0t + (size_t)i * n1;
            float part[16] = {0};
            int j = 0;
            for (; j + 16 <= n1; j += 16)
                for (int k = 0; k < 16; k++) part[k] += r[j + k] * col[j + k];
            float tail = 0.0f;
            for (; j < n1; j++) tail += r[j] * col[j];
            dx[i] += (double)sum16(part, tail);
        }
}

/* One input (the ball, the pendulum): one pass per row over s (and a)
 * for the sums and xbar = r . W0. xbar's 16 partial sums (lane k takes
 * j = k mod 16, in order of j, as in every dot product of this file) live
 * in one vector register (GCC's vector extension: as a float[16] they were
 * kept on the stack, a store-to-load chain that made the pass twice as
 * slow), so the z-adjoints r are never stored. */
typedef float imp_v16f __attribute__((vector_size(64)));
#define SWEEP2F_ONE_INPUT_TERM(index, second)                                                \
    const int jx = (index);                                                                  \
    const float tj = g0 * W0[jx], sj = s[jx];                                                \
    const float rj = w1[jx] * tj * (second);                                                 \
    acc[jx] += w1[jx] * sj * g0 + rj * x0;                                                   \
    b0bar[jx] += rj;                                                                         \
    w1bar[jx] += sj * tj;
/* unaligned vector access to float arrays (no function: a 64-byte vector
 * argument or result would change the ABI of the non-AVX-512 versions) */
typedef float imp_v16f_u __attribute__((vector_size(64), aligned(4), may_alias));
#define load16(p) (*(const imp_v16f_u *)(p))
#define store16(p, v) (*(imp_v16f_u *)(p) = (v))
/* the 16 elements j..j+15 of SWEEP2F_ONE_INPUT_TERM as vectors, the same
 * operations in the same order */
#define SWEEP2F_ONE_INPUT_LOOP(second, second_v)                                             \
    for (; j + 16 <= n1; j += 16) {                                                          \
        const imp_v16f W = load16(W0 + j), w = load16(w1 + j), sv = load16(s + j);           \
        const imp_v16f tv = g0 * W;                                                          \
        const imp_v16f rv = w * tv * (second_v);                                             \
        store16(acc + j, load16(acc + j) + (w * sv * g0 + rv * x0));                         \
        store16(b0bar + j, load16(b0bar + j) + rv);                                          \
        store16(w1bar + j, load16(w1bar + j) + sv * tv);                                     \
        part += rv * W;                                                                      \
    }                                                                                        \
    memcpy(p16, &part, sizeof p16);                                                          \
    for (; j < n1; j++) {                                                                    \
        SWEEP2F_ONE_INPUT_TERM(j, second)                                                    \
        p16[0] += rj * W0[j];                                                                \
    }
static inline __attribute__((always_inline)) float sweep2_row_f_one_input(
    imp_activation act, int n1, const float *restrict W0, const float *restrict w1, float g0, float x0,
    const float *restrict a, const float *restrict s, float *restrict acc)
{
    float *restrict b0bar = acc + n1, *restrict w1bar = acc + 2 * (size_t)n1;
    imp_v16f part = {0};
    float p16[16];
    int j = 0;
    switch (act) {
    case IMP_ACT_TANH: SWEEP2F_ONE_INPUT_LOOP(-2.0f * a[jx] * sj, -2.0f * load16(a + j) * sv); break;
    case IMP_ACT_SIGMOID: SWEEP2F_ONE_INPUT_LOOP(sj * (1.0f - 2.0f * a[jx]), sv * (1.0f - 2.0f * load16(a + j))); break;
    case IMP_ACT_SOFTPLUS: SWEEP2F_ONE_INPUT_LOOP(sj * (1.0f - sj), sv * (1.0f - sv)); break;
    default: SWEEP2F_ONE_INPUT_LOOP(0.0f, (imp_v16f){0}); break;
    }
    return sum16(p16, 0.0f);
}

static inline __attribute__((always_inline)) void sweep2_rows_f_body(
    imp_activation act, int B, int n0, int n1, const float *W0t, const float *w1, const float *gbar,
    const float *x, const float *a, const float *s, float *t, float *r, float *acc, double *dx, int ldx)
{
    if (n0 == 1) {
        for (int b = 0; b < B; b++) {
            float xbar = sweep2_row_f_one_input(act, n1, W0t, w1, gbar[b], x[b], a + (size_t)b * n1,
                                                s + (size_t)b * n1, acc);
            if (dx) dx[(size_t)b * ldx] += (double)xbar;
        }
        return;
    }
    for (int b = 0; b < B; b++)
        sweep2_row_f(act, n0, n1, W0t, w1, gbar + (size_t)b * n0, x + (size_t)b * n0, a + (size_t)b * n1,
                     s + (size_t)b * n1, t, r, acc, dx ? dx + (size_t)b * ldx : NULL);
}
IMP_ISA_VERSIONS(sweep2_rows_f,
                 (imp_activation act, int B, int n0, int n1, const float *W0t, const float *w1,
                  const float *gbar, const float *x, const float *a, const float *s, float *t, float *r,
                  float *acc, double *dx, int ldx),
                 (act, B, n0, n1, W0t, w1, gbar, x, a, s, t, r, acc, dx, ldx))

void imp_mlp_fused_single_sweep2(const imp_mlp *m, const double *params, const double *gbar, int ldgbar,
                                 int B, double *dparams, double *dx, int ldx, imp_mlp_work *w)
{
    const int n0 = m->sizes[0], n1 = m->sizes[1];
    const float *W0t = w->ffw, *w1 = W0t + (size_t)(n0 + 1) * n1;
    /* gbar rounded into fZ (B x n0) */
    float *gb = w->fZ, *t = w->ftr, *r = w->ftr + n1;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < n0; i++) gb[(size_t)b * n0 + i] = (float)gbar[(size_t)b * ldgbar + i];
    float *acc = w->ffacc;
    memset(acc, 0, (size_t)(n0 + 2) * n1 * sizeof(float));
    const unsigned csr = imp_flush_subnormals_begin();
    sweep2_rows_f(m->hidden_act, B, n0, n1, W0t, w1, gb, w->fx, w->fa[0], w->fs[0], t, r, acc, dx, ldx);
    imp_flush_subnormals_end(csr);
    (void)params;
    if (dparams) {
        double *dW0 = dparams + m->w_off[0], *db0 = dparams + m->b_off[0], *dw1 = dparams + m->w_off[1];
        const float *b0bar = acc + (size_t)n0 * n1, *w1bar = b0bar + n1;
        if (n0 == 1) { /* W0 is a column: the three sums are contiguous like the gradients */
            imp_vec_add_float(dW0, acc, (size_t)n1);
            imp_vec_add_float(db0, b0bar, (size_t)n1);
            imp_vec_add_float(dw1, w1bar, (size_t)n1);
        } else
            for (int j = 0; j < n1; j++) {
                for (int i = 0; i < n0; i++) dW0[(size_t)j * n0 + i] += (double)acc[(size_t)i * n1 + j];
                db0[j] += (double)b0bar[j];
                dw1[j] += (double)w1bar[j];
            }
    }
}
