/* MLP kernels: forward/backward for any output size, and for scalar networks
 * the input gradient (sweep 1) and its vector-Jacobian product (sweep 2).
 * Derivation and notation: docs/derivations/mlp-double-backprop.md.
 *
 * Notation (0-based layers l = 0..L-1, n_l = sizes[l], a_{-1} = x):
 *   z_l = a_{l-1} W_l^T + b_l   (B x n_{l+1}),  a_l = phi_l(z_l),
 *   s_l = phi_l'(z_l),  t_l = phi_l''(z_l),  phi_l = hidden_act for l < L-1.
 * Every product is a row-major GEMM over the whole batch through
 * cblas_dgemm (single-threaded, see src/core/blas.c), or through the plain
 * reference loops when the work space asks for them (tests compare both).
 * The products, forward and backward are written once for double and float
 * (mlp_pass.inc, included here with double and in mlp_single.c with float);
 * this file adds the sweeps, the reference loops and the public entry points.
 * No pass allocates: all scratch lives in imp_mlp_work. */
#include "nn/mlp_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- description ---- */

int imp_mlp_init(imp_mlp *m, int n_layers, const int *sizes, imp_activation hidden_act,
                 imp_activation output_act, int last_bias)
{
    if (!m) return imp_fail(IMP_ERR_INVALID, "mlp: NULL description");
    if (n_layers < 1 || n_layers > IMP_MLP_MAX_LAYERS)
        return imp_fail(IMP_ERR_INVALID, "n_layers: %d, want 1..%d", n_layers, IMP_MLP_MAX_LAYERS);
    if (!sizes) return imp_fail(IMP_ERR_INVALID, "sizes: NULL");
    if ((unsigned)hidden_act > IMP_ACT_SIGMOID)
        return imp_fail(IMP_ERR_INVALID, "hidden_act: unknown activation %d", (int)hidden_act);
    if ((unsigned)output_act > IMP_ACT_SIGMOID)
        return imp_fail(IMP_ERR_INVALID, "output_act: unknown activation %d", (int)output_act);
    if (last_bias != 0 && last_bias != 1)
        return imp_fail(IMP_ERR_INVALID, "last_bias: %d, want 0 or 1", last_bias);
    for (int l = 0; l <= n_layers; l++)
        if (sizes[l] < 1 || sizes[l] > (1 << 20))
            return imp_fail(IMP_ERR_INVALID, "sizes[%d]: %d, want 1..%d", l, sizes[l], 1 << 20);
    memset(m, 0, sizeof *m);
    m->n_layers = n_layers;
    m->hidden_act = hidden_act;
    m->output_act = output_act;
    m->last_bias = last_bias;
    size_t off = 0;
    for (int l = 0; l <= n_layers; l++) m->sizes[l] = sizes[l];
    for (int l = 0; l < n_layers; l++) {
        /* Keras order within a layer: kernel, then bias. */
        m->w_off[l] = off;
        off += (size_t)sizes[l + 1] * (size_t)sizes[l];
        if (l < n_layers - 1 || last_bias) {
            m->b_off[l] = off;
            off += (size_t)sizes[l + 1];
        } else {
            m->b_off[l] = SIZE_MAX;
        }
    }
    for (int l = n_layers; l < IMP_MLP_MAX_LAYERS; l++) m->b_off[l] = SIZE_MAX;
    m->n_params = off;
    return IMP_OK;
}

void imp_mlp_init_params(const imp_mlp *m, double *params, imp_rng *rng)
{
    for (int l = 0; l < m->n_layers; l++) {
        int fan_in = m->sizes[l], fan_out = m->sizes[l + 1];
        /* Glorot & Bengio 2010 uniform: U(-r, r), r = sqrt(6/(fan_in+fan_out)). */
        double r = sqrt(6.0 / (double)(fan_in + fan_out));
        double *W = params + m->w_off[l];
        for (size_t i = 0; i < (size_t)fan_in * (size_t)fan_out; i++)
            W[i] = imp_rng_uniform_range(rng, -r, r);
        if (m->b_off[l] != SIZE_MAX) memset(params + m->b_off[l], 0, (size_t)fan_out * sizeof(double));
    }
}

double imp_mlp_l2(const imp_mlp *m, const double *params, double lambda, double *dparams)
{
    double sum = 0.0;
    for (int l = 0; l < m->n_layers; l++) {
        size_t n = (size_t)m->sizes[l + 1] * (size_t)m->sizes[l];
        const double *W = params + m->w_off[l];
        for (size_t i = 0; i < n; i++) sum += W[i] * W[i];
        if (dparams) {
            double *dW = dparams + m->w_off[l];
            for (size_t i = 0; i < n; i++) dW[i] += 2.0 * lambda * W[i];
        }
    }
    return lambda * sum;
}

/* ---- work space ---- */

imp_mlp_work *imp_mlp_work_new(const imp_mlp *m, int max_batch)
{
    if (!m || m->n_layers < 1 || m->n_layers > IMP_MLP_MAX_LAYERS) {
        imp_fail(IMP_ERR_INVALID, "mlp: not initialised");
        return NULL;
    }
    if (max_batch < 1) {
        imp_fail(IMP_ERR_INVALID, "max_batch: %d, want >= 1", max_batch);
        return NULL;
    }
    imp_mlp_work *w = calloc(1, sizeof *w);
    if (!w) {
        imp_fail(IMP_ERR_NOMEM, "mlp work: out of memory");
        return NULL;
    }
    int L = m->n_layers, n_max = 0;
    for (int l = 0; l <= L; l++) n_max = m->sizes[l] > n_max ? m->sizes[l] : n_max;
    size_t Bz = (size_t)max_batch, total = 2 * Bz * (size_t)m->sizes[0] + 3 * Bz * (size_t)n_max;
    for (int l = 0; l < L; l++) total += 5 * Bz * (size_t)m->sizes[l + 1];
    size_t fz_n = (size_t)m->sizes[0] * (size_t)m->sizes[1];
    size_t facc_n = (size_t)(m->sizes[0] + 2 + (L >= 2 ? m->sizes[2] : 0)) * (size_t)m->sizes[1];
    total += fz_n + facc_n;
    w->slab = calloc(total, sizeof(double));
    if (!w->slab) {
        free(w);
        imp_fail(IMP_ERR_NOMEM, "mlp work: cannot allocate %zu doubles for batch %d", total,
                 max_batch);
        return NULL;
    }
    double *p = w->slab;
    w->x = p, p += Bz * (size_t)m->sizes[0];
    w->unit = p, p += Bz * (size_t)m->sizes[0];
    for (int k = 0; k < 3; k++) w->buf[k] = p, p += Bz * (size_t)n_max;
    w->fz = p, p += fz_n;
    w->facc = p, p += facc_n;
    for (int l = 0; l < L; l++) {
        size_t n = Bz * (size_t)m->sizes[l + 1];
        w->a[l] = p, p += n;
        w->s[l] = p, p += n;
        w->delta[l] = p, p += n;
        w->e[l] = p, p += n;
        w->r[l] = p, p += n;
    }
    w->n_layers = L;
    memcpy(w->sizes, m->sizes, sizeof w->sizes);
    w->max_batch = max_batch;
    w->n_max = n_max;
    w->net = *m;
    w->isa = imp_act_isa();
    imp_mlp_kernels_choose(w);
    return w;
}

void imp_mlp_work_free(imp_mlp_work *w)
{
    if (!w) return;
    free(w->slab);
    free(w->fslab);
    free(w->fixslab);
    free(w->gA);
    free(w);
}

void imp_mlp_work_set_reference(imp_mlp_work *w, int on)
{
    w->use_reference = on != 0;
    imp_mlp_kernels_choose(w);
}

int imp_mlp_work_max_batch(const imp_mlp_work *w) { return w ? w->max_batch : 0; }

int imp_mlp_work_check(const imp_mlp *m, const imp_mlp_work *w, int B)
{
    if (!m || !w) return imp_fail(IMP_ERR_INVALID, "mlp work: NULL");
    if (w->n_layers != m->n_layers ||
        memcmp(w->sizes, m->sizes, (size_t)(m->n_layers + 1) * sizeof(int)) != 0)
        return imp_fail(IMP_ERR_SHAPE, "mlp work: made for a network of another shape");
    if (B < 1 || B > w->max_batch)
        return imp_fail(IMP_ERR_SHAPE, "B: batch %d, work space holds 1..%d rows", B,
                        w->max_batch);
    return IMP_OK;
}

/* Misuse (batch too large, wrong work space, no cached pass) must not
 * overflow; the void kernels then record the message and fill what they
 * would have written with NaN so the mistake cannot go unnoticed. */
static void fill_nan(double *p, size_t n)
{
    if (p)
        for (size_t i = 0; i < n; i++) p[i] = NAN;
}

/* ---- matrix products ---- */

/* C (M x N) = alpha op(A) op(B) + beta C, row-major, op = transpose when
 * the flag is set; the algorithmic reference for the BLAS call below. */
static void gemm_ref(int ta, int tb, int M, int N, int K, double alpha, const double *A, int lda,
                     const double *Bm, int ldb, double beta, double *C, int ldc)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int k = 0; k < K; k++) {
                double aik = ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
                double bkj = tb ? Bm[(size_t)j * ldb + k] : Bm[(size_t)k * ldb + j];
                acc += aik * bkj;
            }
            double *c = &C[(size_t)i * ldc + j];
            *c = alpha * acc + (beta == 0.0 ? 0.0 : beta * *c);
        }
}

/* Multiply-adds of the general products (not thin, not reference), for
 * the benches' share of the machine's GEMM peak (imp_nn_gemm_flops). */
static _Atomic unsigned long long gemm_madds;

double imp_nn_gemm_flops(void) { return 2.0 * (double)gemm_madds; }

/* rows x cols of a row-major matrix at stride ld into contiguous floats */
static inline __attribute__((always_inline)) void round_rows_body(float *restrict out, const double *restrict in,
                                                                  int rows, int cols, int ld)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) out[(size_t)i * cols + j] = (float)in[(size_t)i * ld + j];
}
IMP_ISA_VERSIONS(round_rows, (float *restrict out, const double *restrict in, int rows, int cols, int ld),
                 (out, in, rows, cols, ld))

/* C = alpha Cf + beta C (beta 0 or 1), the float product into double */
static inline __attribute__((always_inline)) void widen_rows_body(double *restrict C, const float *restrict Cf,
                                                                  int rows, int cols, int ldc, double alpha,
                                                                  double beta)
{
    for (int i = 0; i < rows; i++) {
        double *restrict c = C + (size_t)i * ldc;
        const float *restrict f = Cf + (size_t)i * cols;
        if (beta == 0.0)
            for (int j = 0; j < cols; j++) c[j] = alpha * (double)f[j];
        else
            for (int j = 0; j < cols; j++) c[j] += alpha * (double)f[j];
    }
}
IMP_ISA_VERSIONS(widen_rows,
                 (double *restrict C, const float *restrict Cf, int rows, int cols, int ldc, double alpha,
                  double beta),
                 (C, Cf, rows, cols, ldc, alpha, beta))

/* A general product in float (imp_mlp_work_set_gemm_single): the operands
 * rounded once, OpenBLAS's sgemm, and the result added to C in double, so
 * sums across calls (weight gradients over the steps of a rollout) stay
 * double; only the sums inside one product are float. */
static void gemm_single(const imp_mlp_work *w, int ta, int tb, int M, int N, int K, double alpha,
                        const double *A, int lda, const double *Bm, int ldb, double beta, double *C, int ldc)
{
    float *Af = w->gA, *Bf = w->gB, *Cf = w->gC;
    const int ar = ta ? K : M, ac = ta ? M : K, br = tb ? N : K, bc = tb ? K : N;
    round_rows(Af, A, ar, ac, lda);
    round_rows(Bf, Bm, br, bc, ldb);
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, Af,
                ac, Bf, bc, 0.0f, Cf, N);
    if (beta != 0.0 && beta != 1.0)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) C[(size_t)i * ldc + j] *= beta;
    widen_rows(C, Cf, M, N, ldc, alpha, beta == 0.0 ? 0.0 : 1.0);
}

static int gemm_fits_single(const imp_mlp_work *w, int M, int N, int K)
{
    return w->gA && (size_t)M * K <= w->g_cap && (size_t)K * N <= w->g_cap && (size_t)M * N <= w->g_cap;
}

int imp_mlp_work_set_gemm_single(imp_mlp_work *w, int on)
{
    if (!w) return imp_fail(IMP_ERR_INVALID, "mlp work: NULL");
    if (on && !w->gA) {
        /* every product of the passes is (B or n) x n x (B or n) */
        size_t side = (size_t)(w->max_batch > w->n_max ? w->max_batch : w->n_max);
        size_t cap = side * (size_t)w->n_max;
        float *p = malloc(3 * cap * sizeof(float));
        if (!p) return imp_fail(IMP_ERR_NOMEM, "mlp work: cannot allocate %zu floats for float products", 3 * cap);
        w->gA = p, w->gB = p + cap, w->gC = p + 2 * cap, w->g_cap = cap;
    }
    w->gemm_single = on != 0;
    return IMP_OK;
}

static imp_activation layer_act(const imp_mlp *m, int l)
{
    return l == m->n_layers - 1 ? m->output_act : m->hidden_act;
}

/* ---- the general passes in double (mlp_pass.inc) ---- */

static const double *input_d(imp_mlp_work *w, int B)
{
    (void)B; /* copied by the caller (copy_input) */
    return w->x;
}

static const double *weights_d(const imp_mlp *m, const double *params, imp_mlp_work *w, int l, int round)
{
    (void)w, (void)round;
    return params + m->w_off[l];
}

static void activate_d(const imp_mlp *m, imp_mlp_work *w, int l, double *z, size_t cnt)
{
    imp_act_forward(layer_act(m, l), z, w->s[l], cnt);
}

#define MP_REAL double
#define MP_SFX _d
#define MP_SINGLE 0
#define MP_GEMV cblas_dgemv
#define MP_GEMM cblas_dgemm
#define MP_X(w) ((w)->x)
#define MP_A(w, l) ((w)->a[l])
#define MP_S(w, l) ((w)->s[l])
#define MP_Z(w) ((w)->buf[0])
#define MP_NEXT(w) ((w)->buf[1])
#include "nn/mlp_pass.inc"

/* ---- forward / backward ---- */

/* NaN over B rows of width n at stride ld (ld < n: the (B-1) ld + n
 * elements such a call would have touched). */
static void fill_nan_rows(double *p, int B, int n, int ld)
{
    if (!p || B < 1) return;
    if (ld < n) {
        fill_nan(p, (size_t)(B - 1) * (size_t)(ld > 0 ? ld : 0) + (size_t)n);
        return;
    }
    for (int b = 0; b < B; b++) fill_nan(p + (size_t)b * (size_t)ld, (size_t)n);
}

static int check_ld(int ld, int n, const char *what)
{
    if (ld < n) return imp_fail(IMP_ERR_SHAPE, "%s: leading dimension %d < row length %d", what, ld, n);
    return IMP_OK;
}

/* Fills the cache x, a_l, s_l for all layers from x (rows at stride ldx). */
/* Fills the cache a_l, s_l for all layers from x. With gradient_only (sweep
 * 1 of a scalar network with identity output whose value is not wanted) the
 * output layer is skipped and the last hidden layer keeps only s where the
 * activation allows: sweep 2 then needs neither value (see sweep2), and the
 * cache is marked unusable for imp_mlp_backward. */
static int gradient_only_ok(const imp_mlp *m)
{
    return m->n_layers >= 2 && m->output_act == IMP_ACT_IDENTITY;
}

static void copy_input(const imp_mlp *m, const double *x, int ldx, int B, imp_mlp_work *w)
{
    int n0 = m->sizes[0];
    if (ldx == n0)
        memcpy(w->x, x, (size_t)B * (size_t)n0 * sizeof(double));
    else
        for (int b = 0; b < B; b++)
            memcpy(w->x + (size_t)b * n0, x + (size_t)b * ldx, (size_t)n0 * sizeof(double));
}

static void forward_cache_mode(const imp_mlp *m, const double *params, const double *x, int ldx, int B,
                               imp_mlp_work *w, int gradient_only)
{
    copy_input(m, x, ldx, B, w);
    w->cache_k = NULL;
    w->fwd_batch = B;
    w->sweep1_batch = 0;
    w->gradient_only = 0;
    if (!gradient_only && w->pass_k) {
        w->pass_k->forward(m, params, B, w);
        w->cache_k = w->pass_k;
        return;
    }
    if (!gradient_only) {
        forward_d(m, params, B, w, m->n_layers);
        return;
    }
    /* layers 0..L-3, then z_{L-2} and s_{L-2} only */
    const int l = m->n_layers - 2;
    forward_d(m, params, B, w, l);
    affine_d(m, params, l, l > 0 ? w->a[l - 1] : w->x, params + m->w_off[l], B, w->a[l], w);
    imp_act_deriv_only(layer_act(m, l), w->a[l], w->s[l], (size_t)B * (size_t)m->sizes[l + 1]);
    w->fwd_batch = 0; /* values incomplete: no imp_mlp_backward on this cache */
    w->gradient_only = 1;
}

static void forward_cache(const imp_mlp *m, const double *params, const double *x, int ldx, int B,
                          imp_mlp_work *w)
{
    forward_cache_mode(m, params, x, ldx, B, w, 0);
}

void imp_mlp_forward_ld(const imp_mlp *m, const double *params, const double *x, int ldx, int B,
                        double *y, int ldy, imp_mlp_work *w)
{
    int L = m->n_layers, n_out = m->sizes[L];
    if (imp_mlp_work_check(m, w, B) != IMP_OK || check_ld(ldx, m->sizes[0], "ldx") != IMP_OK ||
        check_ld(ldy, n_out, "ldy") != IMP_OK) {
        if (w) w->fwd_batch = w->sweep1_batch = 0;
        fill_nan_rows(y, B, n_out, ldy);
        return;
    }
    forward_cache(m, params, x, ldx, B, w);
    for (int b = 0; b < B; b++)
        memcpy(y + (size_t)b * ldy, w->a[L - 1] + (size_t)b * n_out, (size_t)n_out * sizeof(double));
}

void imp_mlp_forward(const imp_mlp *m, const double *params, const double *x, int B, double *y,
                     imp_mlp_work *w)
{
    imp_mlp_forward_ld(m, params, x, m->sizes[0], B, y, m->sizes[m->n_layers], w);
}

void imp_mlp_backward_ld(const imp_mlp *m, const double *params, const double *dy, int lddy, int B,
                         double *dparams, double *dx, int lddx, imp_mlp_work *w)
{
    const int n_out_last = m->sizes[m->n_layers];
    int st = imp_mlp_work_check(m, w, B);
    if (st == IMP_OK && w->fwd_batch != B)
        st = imp_fail(IMP_ERR_INVALID, "B: backward over %d rows, but the cached forward has %d (0 = none)",
                      B, w->fwd_batch);
    if (st == IMP_OK) st = check_ld(lddy, n_out_last, "lddy");
    if (st == IMP_OK && dx) st = check_ld(lddx, m->sizes[0], "lddx");
    if (st != IMP_OK) {
        fill_nan(dparams, m->n_params);
        fill_nan_rows(dx, B, m->sizes[0], lddx);
        return;
    }
    if (w->cache_k && w->cache_k->backward) {
        w->cache_k->backward(m, params, dy, lddy, B, dparams, dx, lddx, w);
        return;
    }
    backward_d(m, params, dy, lddy, B, dparams, dx, lddx, w);
}

void imp_mlp_backward(const imp_mlp *m, const double *params, const double *dy, int B,
                      double *dparams, double *dx, imp_mlp_work *w)
{
    imp_mlp_backward_ld(m, params, dy, m->sizes[m->n_layers], B, dparams, dx, m->sizes[0], w);
}

/* ---- sweep 1: g = dV/dx for a scalar network ---- */

static int check_scalar(const imp_mlp *m)
{
    if (m->sizes[m->n_layers] != 1)
        return imp_fail(IMP_ERR_SHAPE, "sizes[%d]: output size %d, input gradients need a scalar network",
                        m->n_layers, m->sizes[m->n_layers]);
    return IMP_OK;
}

void imp_mlp_grad_input_ld(const imp_mlp *m, const double *params, const double *x, int ldx, int B,
                           double *g, int ldg, double *V, imp_mlp_work *w)
{
    int L = m->n_layers, n0 = m->sizes[0];
    if (check_scalar(m) != IMP_OK || imp_mlp_work_check(m, w, B) != IMP_OK ||
        check_ld(ldx, n0, "ldx") != IMP_OK || check_ld(ldg, n0, "ldg") != IMP_OK) {
        if (w) w->fwd_batch = w->sweep1_batch = 0;
        fill_nan_rows(g, B, n0, ldg);
        if (B > 0) fill_nan(V, (size_t)B);
        return;
    }
    if (V == NULL && w->sweep_k) {
        copy_input(m, x, ldx, B, w);
        w->sweep_k->sweep1(m, params, B, g, ldg, w);
        w->cache_k = w->sweep_k;
        w->fwd_batch = 0;
        w->gradient_only = 1;
        w->sweep1_batch = B;
        return;
    }
    forward_cache_mode(m, params, x, ldx, B, w, V == NULL && gradient_only_ok(m));
    if (V) memcpy(V, w->a[L - 1], (size_t)B * sizeof(double));
    /* e_{L-1} = dV/da_{L-1} = 1, so delta_{L-1} = s_{L-1} (= 1 for an
     * identity output, whose layer the gradient-only cache skips). */
    if (w->gradient_only)
        for (int b = 0; b < B; b++) w->delta[L - 1][b] = 1.0;
    else
        memcpy(w->delta[L - 1], w->s[L - 1], (size_t)B * sizeof(double));
    for (int l = L - 1; l >= 1; l--) {
        int n_in = m->sizes[l], n_out = m->sizes[l + 1];
        /* e_{l-1} = delta_l W_l;  delta_{l-1} = s_{l-1} * e_{l-1} */
        gemm_d(w, 0, 0, B, n_in, n_out, 1.0, w->delta[l], n_out, params + m->w_off[l], n_in, 0.0,
             w->e[l - 1], n_in);
        imp_vec_mul(w->delta[l - 1], w->s[l - 1], w->e[l - 1], (size_t)B * (size_t)n_in);
    }
    /* g = delta_0 W_0 */
    gemm_d(w, 0, 0, B, n0, m->sizes[1], 1.0, w->delta[0], m->sizes[1], params + m->w_off[0], n0, 0.0,
         g, ldg);
    w->sweep1_batch = B;
}

void imp_mlp_grad_input(const imp_mlp *m, const double *params, const double *x, int B,
                        double *g, double *V, imp_mlp_work *w)
{
    imp_mlp_grad_input_ld(m, params, x, m->sizes[0], B, g, m->sizes[0], V, w);
}

/* ---- sweep 2: reverse mode through sweep 1 ---- */

/* Shared by the public VJP and the Hessian: up pass through sweep 1 from
 * gbar, then ordinary backprop of the collected z-adjoints. */
static void sweep2(const imp_mlp *m, const double *params, const double *gbar, int ldgbar, int B,
                   double *dparams, double *dx, int ldx, imp_mlp_work *w)
{
    if (w->cache_k && w->cache_k->sweep2) {
        w->cache_k->sweep2(m, params, gbar, ldgbar, B, dparams, dx, ldx, w);
        return;
    }
    int L = m->n_layers;
    int n0 = m->sizes[0], n1 = m->sizes[1];
    double *dbar = w->buf[0], *ebar = w->buf[1], *abar = w->buf[2];
    /* g = delta_0 W_0:  W0bar += delta_0^T gbar,  deltabar_0 = gbar W_0^T */
    if (dparams)
        gemm_d(w, 1, 0, n1, n0, B, 1.0, w->delta[0], n1, gbar, ldgbar, 1.0, dparams + m->w_off[0], n0);
    gemm_d(w, 0, 1, B, n1, n0, 1.0, gbar, ldgbar, params + m->w_off[0], n0, 0.0, dbar, n1);
    /* Up pass, l = 0..L-1: delta_l = s_l * e_l gives
     *   sbar_l = deltabar_l * e_l  -> z-adjoint r_l = sbar_l * phi''(z_l)
     *   ebar_l = deltabar_l * s_l, and e_l = delta_{l+1} W_{l+1} gives
     *   W_{l+1}bar += delta_{l+1}^T ebar_l,  deltabar_{l+1} = ebar_l W_{l+1}^T. */
    for (int l = 0; l < L; l++) {
        int n = m->sizes[l + 1];
        size_t cnt = (size_t)B * (size_t)n;
        if (l == L - 1) { /* e_{L-1} = 1 */
            imp_act_sweep2_up(layer_act(m, l), cnt, dbar, NULL, w->a[l], w->s[l], w->r[l], NULL);
            break;
        }
        imp_act_sweep2_up(layer_act(m, l), cnt, dbar, w->e[l], w->a[l], w->s[l], w->r[l], ebar);
        int n_next = m->sizes[l + 2];
        const double *W = params + m->w_off[l + 1];
        if (dparams)
            gemm_d(w, 1, 0, n_next, n, B, 1.0, w->delta[l + 1], n_next, ebar, n, 1.0,
                 dparams + m->w_off[l + 1], n);
        gemm_d(w, 0, 1, B, n_next, n, 1.0, ebar, n, W, n, 0.0, dbar, n_next);
    }
    /* Down pass: zbar_l = r_l + s_l * abar_l, abar_{l-1} = zbar_l W_l. An
     * identity output has r = 0 and abar = 0 there (the loss depends on g,
     * not on V), so its layer contributes nothing and is skipped: this is
     * also what lets the gradient-only cache omit the hidden values. */
    int top = gradient_only_ok(m) ? L - 2 : L - 1;
    for (int l = top; l >= 0; l--) {
        int n_in = m->sizes[l], n_out = m->sizes[l + 1];
        size_t cnt = (size_t)B * (size_t)n_out;
        double *Z = w->r[l];
        if (l < top) imp_vec_fma_inplace(Z, w->s[l], abar, cnt);
        const double *A_in = l > 0 ? w->a[l - 1] : w->x;
        if (dparams) layer_grad_d(m, w, l, Z, A_in, B, dparams);
        const double *W = params + m->w_off[l];
        if (l > 0)
            gemm_d(w, 0, 0, B, n_in, n_out, 1.0, Z, n_out, W, n_in, 0.0, abar, n_in);
        else if (dx)
            gemm_d(w, 0, 0, B, n_in, n_out, 1.0, Z, n_out, W, n_in, 1.0, dx, ldx);
    }
}

static int check_sweep1(const imp_mlp *m, const imp_mlp_work *w, int B)
{
    int st = check_scalar(m);
    if (st == IMP_OK) st = imp_mlp_work_check(m, w, B);
    if (st == IMP_OK && w->sweep1_batch != B)
        st = imp_fail(IMP_ERR_INVALID,
                      "B: sweep 2 over %d rows, but the cached sweep 1 has %d (0 = none)", B,
                      w->sweep1_batch);
    return st;
}

void imp_mlp_grad_input_vjp_ld(const imp_mlp *m, const double *params, const double *gbar,
                               int ldgbar, int B, double *dparams, double *dx, int lddx,
                               imp_mlp_work *w)
{
    int n0 = m->sizes[0];
    int st = check_sweep1(m, w, B);
    if (st == IMP_OK) st = check_ld(ldgbar, n0, "ldgbar");
    if (st == IMP_OK && dx) st = check_ld(lddx, n0, "lddx");
    if (st != IMP_OK) {
        fill_nan(dparams, m->n_params);
        fill_nan_rows(dx, B, n0, lddx);
        return;
    }
    sweep2(m, params, gbar, ldgbar, B, dparams, dx, lddx, w);
}

void imp_mlp_grad_input_vjp(const imp_mlp *m, const double *params, const double *gbar, int B,
                            double *dparams, double *dx, imp_mlp_work *w)
{
    imp_mlp_grad_input_vjp_ld(m, params, gbar, m->sizes[0], B, dparams, dx, m->sizes[0], w);
}

void imp_mlp_hessian_input(const imp_mlp *m, const double *params, int B, double *H,
                           imp_mlp_work *w)
{
    int d = m->sizes[0];
    if (check_sweep1(m, w, B) != IMP_OK) {
        if (B > 0) fill_nan(H, (size_t)B * (size_t)d * (size_t)d);
        return;
    }
    memset(H, 0, (size_t)B * (size_t)d * (size_t)d * sizeof(double));
    /* Row k of each row's Hessian is the HVP seeded with gbar = e_k (the
     * Hessian is symmetric); it lands in H[b][k][:] by a leading dimension
     * of d*d. */
    for (int k = 0; k < d; k++) {
        memset(w->unit, 0, (size_t)B * (size_t)d * sizeof(double));
        for (int b = 0; b < B; b++) w->unit[(size_t)b * d + k] = 1.0;
        sweep2(m, params, w->unit, d, B, NULL, H + (size_t)k * d, d * d, w);
    }
}
