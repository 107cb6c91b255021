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
#include "nn/act_math.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static int needs_value(imp_activation act) { return act == IMP_ACT_TANH || act == IMP_ACT_SIGMOID; }

/* the row kernels of mlp_fused.c, in float with 16 partial sums (one
 * AVX-512 float vector) */
#define FR_REAL float
#define FR_SFX _f
#define FR_PARTS 16
#include "nn/mlp_fused_rows.h"
#undef FR_REAL
#undef FR_SFX
#undef FR_PARTS

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
            grad_rows_body_f(1, 1, n1, sb, W0t, w1, g + (size_t)b * ldg, ldg);
            continue;
        }
        pre_activation_rows_body_f(1, n0, n1, x + (size_t)b * n0, W0t, b0, value ? ab : sb);
        act_deriv_f_body(act, ab, sb, (size_t)n1);
        grad_rows_body_f(1, n0, n1, sb, W0t, w1, g + (size_t)b * ldg, ldg);
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

/* One input (the ball, the pendulum): one pass per row over s (and a)
 * for the sums and xbar = r . W0. xbar's 16 partial sums (lane k takes
 * j = k mod 16, in order of j, as in every dot product of this file) live
 * in vector registers (GCC's vector extension: as a float[16] they were
 * kept on the stack, a store-to-load chain that made the pass twice as
 * slow), so the z-adjoints r are never stored. The vectors are as wide as
 * the instruction set's (16 floats with AVX-512, 8 with AVX2, 4 in the
 * base version: with AVX2, GCC 12 lowered 16-float vectors through the
 * stack, 99 instructions per 16 elements), 16 / width of them for the 16
 * partial sums: the same operations in the same order at every width. */
#define SWEEP2F_ONE_INPUT_TERM(index, second)                                                \
    const int jx = (index);                                                                  \
    const float tj = g0 * W0[jx], sj = s[jx];                                                \
    const float rj = w1[jx] * tj * (second);                                                 \
    acc[jx] += w1[jx] * sj * g0 + rj * x0;                                                   \
    b0bar[jx] += rj;                                                                         \
    w1bar[jx] += sj * tj;
/* the elements jo..jo+L-1 of SWEEP2F_ONE_INPUT_TERM as one vector of type
 * V (unaligned access through VU), into the partial sums `part` */
#define SWEEP2F_ONE_INPUT_CHUNK(V, VU, jo, part, second_v)                                   \
    {                                                                                        \
        const V W = *(const VU *)(W0 + (jo)), w = *(const VU *)(w1 + (jo)),                  \
                sv = *(const VU *)(s + (jo));                                                \
        const V tv = g0 * W;                                                                 \
        const V rv = w * tv * (second_v);                                                    \
        *(VU *)(acc + (jo)) = *(const VU *)(acc + (jo)) + (w * sv * g0 + rv * x0);           \
        *(VU *)(b0bar + (jo)) = *(const VU *)(b0bar + (jo)) + rv;                            \
        *(VU *)(w1bar + (jo)) = *(const VU *)(w1bar + (jo)) + sv * tv;                       \
        part += rv * W;                                                                      \
    }
/* av: the activations a at the chunk, for the second derivatives that need them */
#define SWEEP2F_ONE_INPUT_FN(name, L, V, VU)                                                 \
    typedef float V __attribute__((vector_size(4 * L)));                                     \
    typedef float VU __attribute__((vector_size(4 * L), aligned(4), may_alias));             \
    static inline __attribute__((always_inline)) float name(                                 \
        imp_activation act, int n1, const float *restrict W0, const float *restrict w1,      \
        float g0, float x0, const float *restrict a, const float *restrict s,                \
        float *restrict acc)                                                                 \
    {                                                                                        \
        float *restrict b0bar = acc + n1, *restrict w1bar = acc + 2 * (size_t)n1;            \
        V part[16 / L];                                                                      \
        for (int c = 0; c < 16 / L; c++) part[c] = (V){0};                                   \
        float p16[16];                                                                       \
        int j = 0;                                                                           \
        for (; j + 16 <= n1; j += 16)                                                        \
            for (int c = 0; c < 16 / L; c++) {                                               \
                const int jo = j + c * L;                                                    \
                switch (act) {                                                               \
                case IMP_ACT_TANH:                                                           \
                    SWEEP2F_ONE_INPUT_CHUNK(V, VU, jo, part[c], -2.0f * *(const VU *)(a + jo) * sv); \
                    break;                                                                   \
                case IMP_ACT_SIGMOID:                                                        \
                    SWEEP2F_ONE_INPUT_CHUNK(V, VU, jo, part[c], sv * (1.0f - 2.0f * *(const VU *)(a + jo))); \
                    break;                                                                   \
                case IMP_ACT_SOFTPLUS:                                                       \
                    SWEEP2F_ONE_INPUT_CHUNK(V, VU, jo, part[c], sv * (1.0f - sv));           \
                    break;                                                                   \
                default: SWEEP2F_ONE_INPUT_CHUNK(V, VU, jo, part[c], (V){0}); break;         \
                }                                                                            \
            }                                                                                \
        memcpy(p16, part, sizeof p16);                                                       \
        for (; j < n1; j++) {                                                                \
            switch (act) {                                                                   \
            case IMP_ACT_TANH: { SWEEP2F_ONE_INPUT_TERM(j, -2.0f * a[jx] * sj) p16[0] += rj * W0[j]; break; } \
            case IMP_ACT_SIGMOID: { SWEEP2F_ONE_INPUT_TERM(j, sj * (1.0f - 2.0f * a[jx])) p16[0] += rj * W0[j]; break; } \
            case IMP_ACT_SOFTPLUS: { SWEEP2F_ONE_INPUT_TERM(j, sj * (1.0f - sj)) p16[0] += rj * W0[j]; break; } \
            default: { SWEEP2F_ONE_INPUT_TERM(j, 0.0f) p16[0] += rj * W0[j]; break; }        \
            }                                                                                \
        }                                                                                    \
        return sum_parts_f(p16, 0.0f);                                                             \
    }
SWEEP2F_ONE_INPUT_FN(sweep2_row_f_one_input16, 16, imp_v16f, imp_v16f_u)
SWEEP2F_ONE_INPUT_FN(sweep2_row_f_one_input8, 8, imp_v8f, imp_v8f_u)
SWEEP2F_ONE_INPUT_FN(sweep2_row_f_one_input4, 4, imp_v4f, imp_v4f_u)

/* width: the vector width in floats of the version being compiled */
static inline __attribute__((always_inline)) void sweep2_rows_f_body(
    int width, imp_activation act, int B, int n0, int n1, const float *W0t, const float *w1, const float *gbar,
    const float *x, const float *a, const float *s, float *t, float *r, float *acc, double *dx, int ldx)
{
    if (n0 == 1) {
        for (int b = 0; b < B; b++) {
            const float *ab = a + (size_t)b * n1, *sb = s + (size_t)b * n1;
            float xbar = width == 16 ? sweep2_row_f_one_input16(act, n1, W0t, w1, gbar[b], x[b], ab, sb, acc)
                         : width == 8 ? sweep2_row_f_one_input8(act, n1, W0t, w1, gbar[b], x[b], ab, sb, acc)
                                      : sweep2_row_f_one_input4(act, n1, W0t, w1, gbar[b], x[b], ab, sb, acc);
            if (dx) dx[(size_t)b * ldx] += (double)xbar;
        }
        return;
    }
    for (int b = 0; b < B; b++)
        sweep2_row_f(act, n0, n1, W0t, w1, gbar + (size_t)b * n0, x + (size_t)b * n0, a + (size_t)b * n1,
                     s + (size_t)b * n1, t, r, acc, dx ? dx + (size_t)b * ldx : NULL);
}
IMP_ISA_VERSIONS_WIDTH(sweep2_rows_f,
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
