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
 * Derivation: docs/derivations/mlp-double-backprop.md with L = 2. */
#include "nn/mlp_internal.h"

#include <string.h>

/* Inputs beyond this are better served by the matrix products of mlp.c. */
#define FUSED_MAX_INPUTS 8

int imp_mlp_fused_ok(const imp_mlp *m, const imp_mlp_work *w)
{
    return !w->use_reference && !w->no_fused && m->n_layers == 2 && m->sizes[2] == 1 &&
           m->output_act == IMP_ACT_IDENTITY && m->sizes[0] <= FUSED_MAX_INPUTS &&
           m->b_off[0] != SIZE_MAX;
}

void imp_mlp_work_set_fused(imp_mlp_work *w, int on) { w->no_fused = on == 0; }

/* W0^T (row i: column i of W0, contiguous), in w->fz unless W0 is a
 * single column already. */
static const double *fused_weights(const imp_mlp *m, const double *params, imp_mlp_work *w)
{
    const int n0 = m->sizes[0], n1 = m->sizes[1];
    const double *W0 = params + m->w_off[0];
    if (n0 == 1) return W0;
    for (int j = 0; j < n1; j++)
        for (int i = 0; i < n0; i++) w->fz[(size_t)i * n1 + j] = W0[(size_t)j * n0 + i];
    return w->fz;
}

/* dot products in eight fixed partial sums (a plain running sum is a
 * serial chain the compiler may not reorder without -ffast-math; the
 * partial sums vectorise and give the same result at every vector width),
 * the pre-activation, gradient and sweep-2 rows: the kernels shared with
 * the single-precision sweeps */
#define FR_REAL double
#define FR_SFX
#define FR_PARTS 8
#include "nn/mlp_fused_rows.h"
#undef FR_REAL
#undef FR_SFX
#undef FR_PARTS

IMP_ISA_VERSIONS(pre_activation_rows,
                 (int B, int n0, int n1, const double *x, const double *W0t, const double *b0, double *z),
                 (B, n0, n1, x, W0t, b0, z))

IMP_ISA_VERSIONS(grad_rows,
                 (int B, int n0, int n1, const double *s, const double *W0t, const double *w1, double *g,
                  int ldg),
                 (B, n0, n1, s, W0t, w1, g, ldg))

void imp_mlp_fused_sweep1(const imp_mlp *m, const double *params, int B, double *g, int ldg,
                          imp_mlp_work *w)
{
    const int n0 = m->sizes[0], n1 = m->sizes[1];
    const double *W0t = fused_weights(m, params, w);
    const double *b0 = params + m->b_off[0], *w1 = params + m->w_off[1];
    /* one activation call over the whole batch: the transcendental kernel
     * vectorises best on long runs. Softplus and relu need only s in sweep
     * 2, so z is built in s's place and turned into s there: half the
     * memory per cached pass (a training window keeps H + 1 of them). */
    size_t n = (size_t)B * (size_t)n1;
    int need_a = m->hidden_act != IMP_ACT_SOFTPLUS && m->hidden_act != IMP_ACT_RELU;
    pre_activation_rows(B, n0, n1, w->x, W0t, b0, need_a ? w->a[0] : w->s[0]);
    if (need_a)
        imp_act_forward(m->hidden_act, w->a[0], w->s[0], n);
    else
        imp_act_deriv_inplace(m->hidden_act, w->s[0], n);
    grad_rows(B, n0, n1, w->s[0], W0t, w1, g, ldg);
    w->fwd_batch = 0;
    w->gradient_only = 1;
    w->fused = 1;
    w->sweep1_batch = B;
}

/* The same for one input (the ball, the pendulum): one pass per row over s
 * (and a) for the sums, the z-adjoints kept in r, then xbar = r . W0 in
 * eight partial sums as a separate loop (in one loop the partial sums were
 * kept on the stack, a store-to-load chain; the order of the additions is
 * unchanged). acc is never NULL here. */
#define SWEEP2_ONE_INPUT_LOOP(second)                                                      \
    for (int j = 0; j < n1; j++) {                                                         \
        const double tj = g0 * W0[j], sj = s[j];                                           \
        const double rj = w1[j] * tj * (second);                                           \
        acc[j] += w1[j] * sj * g0 + rj * x0;                                               \
        b0bar[j] += rj;                                                                    \
        w1bar[j] += sj * tj;                                                               \
        r[j] = rj;                                                                         \
    }
static inline __attribute__((always_inline)) double sweep2_row_one_input(
    imp_activation act, int n1, const double *restrict W0, const double *restrict w1, double g0,
    double x0, const double *restrict a, const double *restrict s, double *restrict acc, double *restrict r)
{
    double *restrict b0bar = acc + n1, *restrict w1bar = acc + 2 * (size_t)n1;
    switch (act) {
    case IMP_ACT_TANH: SWEEP2_ONE_INPUT_LOOP(-2.0 * a[j] * sj); break;
    case IMP_ACT_SIGMOID: SWEEP2_ONE_INPUT_LOOP(sj * (1.0 - 2.0 * a[j])); break;
    case IMP_ACT_SOFTPLUS: SWEEP2_ONE_INPUT_LOOP(sj * (1.0 - sj)); break;
    default: SWEEP2_ONE_INPUT_LOOP(0.0); break;
    }
    double part[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    int j = 0;
    for (; j + 8 <= n1; j += 8)
        for (int k = 0; k < 8; k++) part[k] += r[j + k] * W0[j + k];
    for (; j < n1; j++) part[0] += r[j] * W0[j];
    return sum_parts(part, 0.0);
}

static inline __attribute__((always_inline)) void sweep2_rows_body(
    imp_activation act, int B, int n0, int n1, const double *W0t, const double *w1, const double *gbar,
    int ldgbar, const double *x, const double *a, const double *s, double *t, double *r, double *acc,
    double *dx, int ldx)
{
    if (n0 == 1) {
        for (int b = 0; b < B; b++) {
            double xbar = sweep2_row_one_input(act, n1, W0t, w1, gbar[(size_t)b * ldgbar], x[b],
                                               a + (size_t)b * n1, s + (size_t)b * n1, acc, r);
            if (dx) dx[(size_t)b * ldx] += xbar;
        }
        return;
    }
    for (int b = 0; b < B; b++)
        sweep2_row(act, n0, n1, W0t, w1, gbar + (size_t)b * ldgbar, x + (size_t)b * n0,
                   a + (size_t)b * n1, s + (size_t)b * n1, t, r, acc, dx ? dx + (size_t)b * ldx : NULL);
}
IMP_ISA_VERSIONS(sweep2_rows,
                 (imp_activation act, int B, int n0, int n1, const double *W0t, const double *w1,
                  const double *gbar, int ldgbar, const double *x, const double *a, const double *s,
                  double *t, double *r, double *acc, double *dx, int ldx),
                 (act, B, n0, n1, W0t, w1, gbar, ldgbar, x, a, s, t, r, acc, dx, ldx))

void imp_mlp_fused_sweep2(const imp_mlp *m, const double *params, const double *gbar, int ldgbar,
                          int B, double *dparams, double *dx, int ldx, imp_mlp_work *w)
{
    const int n0 = m->sizes[0], n1 = m->sizes[1];
    const double *W0t = fused_weights(m, params, w);
    const double *w1 = params + m->w_off[1];
    double *t = w->buf[0], *r = w->buf[1];
    /* the one-input rows always accumulate (acc != NULL keeps their loop
     * branch-free); the sums are used only if dparams is asked for */
    memset(w->facc, 0, (size_t)(n0 + 2) * n1 * sizeof(double));
    sweep2_rows(m->hidden_act, B, n0, n1, W0t, w1, gbar, ldgbar, w->x, w->a[0], w->s[0], t, r,
                dparams || n0 == 1 ? w->facc : NULL, dx, ldx);
    if (dparams) {
        double *dW0 = dparams + m->w_off[0], *db0 = dparams + m->b_off[0], *dw1 = dparams + m->w_off[1];
        const double *b0bar = w->facc + (size_t)n0 * n1, *w1bar = b0bar + n1;
        for (int j = 0; j < n1; j++) {
            for (int i = 0; i < n0; i++) dW0[(size_t)j * n0 + i] += w->facc[(size_t)i * n1 + j];
            db0[j] += b0bar[j];
            dw1[j] += w1bar[j];
        }
    }
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

int imp_mlp_fused_vec_ok(const imp_mlp *m, const imp_mlp_work *w)
{
    return !w->use_reference && !w->no_fused && m->n_layers == 2 && m->sizes[0] <= FUSED_MAX_INPUTS &&
           m->sizes[2] <= FUSED_MAX_OUTPUTS && m->b_off[0] != SIZE_MAX;
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
            y[(size_t)b * n2 + k] = (b1 ? b1[k] : 0.0) + dot2(n1, a + (size_t)b * n1, W1 + (size_t)k * n1);
}
IMP_ISA_VERSIONS(output_rows,
                 (int B, int n1, int n2, const double *a, const double *W1, const double *b1, double *y),
                 (B, n1, n2, a, W1, b1, y))

void imp_mlp_fused_forward(const imp_mlp *m, const double *params, int B, imp_mlp_work *w)
{
    const int n0 = m->sizes[0], n1 = m->sizes[1], n2 = m->sizes[2];
    const double *W0t = fused_weights(m, params, w);
    pre_activation_rows(B, n0, n1, w->x, W0t, params + m->b_off[0], w->a[0]);
    imp_act_forward(m->hidden_act, w->a[0], w->s[0], (size_t)B * (size_t)n1);
    output_rows(B, n1, n2, w->a[0], params + m->w_off[1],
                m->b_off[1] != SIZE_MAX ? params + m->b_off[1] : NULL, w->a[1]);
    imp_act_forward(m->output_act, w->a[1], w->s[1], (size_t)B * (size_t)n2);
    w->fused = 0; /* a complete forward cache, valid for every backward */
    w->gradient_only = 0;
    w->fwd_batch = B;
    w->sweep1_batch = 0;
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
        for (int i = 0; i < n0; i++) dx[i] += dot2(n1, Z0, W0t + (size_t)i * n1);
}

static inline __attribute__((always_inline)) void backward_rows_body(
    int B, int n0, int n1, int n2, const double *W0t, const double *W1, const double *Z1,
    const double *x, const double *a, const double *s, double *Z0, double *acc, double *dx, int lddx)
{
    for (int b = 0; b < B; b++)
        backward_row(n0, n1, n2, W0t, W1, Z1 + (size_t)b * n2, x + (size_t)b * n0, a + (size_t)b * n1,
                     s + (size_t)b * n1, Z0, acc, dx ? dx + (size_t)b * lddx : NULL);
}
IMP_ISA_VERSIONS(backward_rows,
                 (int B, int n0, int n1, int n2, const double *W0t, const double *W1, const double *Z1,
                  const double *x, const double *a, const double *s, double *Z0, double *acc, double *dx,
                  int lddx),
                 (B, n0, n1, n2, W0t, W1, Z1, x, a, s, Z0, acc, dx, lddx))

void imp_mlp_fused_backward(const imp_mlp *m, const double *params, const double *dy, int lddy, int B,
                            double *dparams, double *dx, int lddx, imp_mlp_work *w)
{
    const int n0 = m->sizes[0], n1 = m->sizes[1], n2 = m->sizes[2];
    const double *W0t = fused_weights(m, params, w);
    double *Z1 = w->buf[0], *Z0 = w->buf[1];
    for (int b = 0; b < B; b++)
        for (int k = 0; k < n2; k++)
            Z1[(size_t)b * n2 + k] = dy[(size_t)b * lddy + k] * w->s[1][(size_t)b * n2 + k];
    memset(w->facc, 0, (size_t)(n0 + 1 + n2) * n1 * sizeof(double));
    backward_rows(B, n0, n1, n2, W0t, params + m->w_off[1], Z1, w->x, w->a[0], w->s[0], Z0, w->facc, dx,
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
