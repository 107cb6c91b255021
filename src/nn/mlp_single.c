/* Forward and backward of an MLP with its wide layers in single precision.
 *
 * Why: the contact network of the CD-Lagrange and ResNetContact models
 * (2D -> 100 -> 100 -> K, ReLU, sigmoid output) spends its time in the
 * 100 x 100 products, evaluated at every step of every training window.
 * At those shapes (32 x 100 x 100) OpenBLAS's sgemm runs 1.85x faster than
 * its dgemm here (36 against 19.5 us for the three products of one step,
 * measured, bench/bench_mlp.c). The contact network only classifies
 * (its output is a probability thresholded at 0.5 or fed to a
 * cross-entropy), so its products do not need double precision; the
 * potential network, whose gradient is the force, stays in double.
 *
 * What runs in single: the layers whose input and output both have more
 * than IMP_MLP_THIN units (their matrix products, activations and weight
 * gradients); the thin layers (a few inputs or outputs: here the first
 * layer and the sigmoid output layer), the loss and every accumulation into
 * the caller's double gradient stay in double. Values cross between the
 * two at layer boundaries. tests/test_nn.c checks the results against the
 * double path (relative agreement ~1e-6) and against finite differences.
 *
 * Only imp_mlp_forward/backward take this path, when
 * imp_mlp_work_set_single(w, 1) was called; the input-gradient sweeps of
 * the potentials are always double. The cache remembers which path made it
 * (w->single_cache), so a backward always matches its forward. */
#include "nn/mlp_internal.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

static int wide(const int *sizes, int l) { return sizes[l] > IMP_MLP_THIN && sizes[l + 1] > IMP_MLP_THIN; }

int imp_mlp_work_set_single(imp_mlp_work *w, int on)
{
    if (!w) return imp_fail(IMP_ERR_INVALID, "mlp work: NULL");
    if (!on || w->fslab) {
        w->single = on != 0;
        return IMP_OK;
    }
    const int L = w->n_layers;
    const size_t Bz = (size_t)w->max_batch;
    size_t total = Bz * (size_t)w->sizes[0] + 2 * Bz * (size_t)w->n_max, dw_max = 0;
    for (int l = 0; l < L; l++) {
        size_t nw = (size_t)w->sizes[l] * (size_t)w->sizes[l + 1];
        total += 2 * Bz * (size_t)w->sizes[l + 1] + (wide(w->sizes, l) ? nw : 0);
        if (wide(w->sizes, l) && nw > dw_max) dw_max = nw;
    }
    total += dw_max;
    /* the fused sweeps of one-hidden-layer scalar networks (mlp_fused_single.c):
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
        if (wide(w->sizes, l)) w->fW[l] = p, p += (size_t)w->sizes[l] * (size_t)w->sizes[l + 1];
    }
    w->fdW = p, p += dw_max;
    if (nf) {
        w->ffw = p, p += nf;
        w->ffacc = p, p += nf;
        w->ftr = p;
    }
    w->single = 1;
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
        if (!leader->fslab || !w->fslab)
            return imp_fail(IMP_ERR_INVALID, "leader: both works need the single path (imp_mlp_work_set_single)");
    }
    w->leader = leader;
    return IMP_OK;
}

int imp_mlp_single_applies(const imp_mlp *m, const imp_mlp_work *w)
{
    if (!w->single || w->use_reference) return 0;
    for (int l = 0; l < m->n_layers; l++)
        if (wide(m->sizes, l)) return 1;
    return 0;
}

/* The elementwise loops, in AVX-512/AVX2/baseline versions (mlp_internal.h):
 * the weight rounding alone is 10^4 conversions per pass of the contact net. */
static inline __attribute__((always_inline)) void to_float_body(float *restrict out, const double *restrict in,
                                                                size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = (float)in[i];
}
IMP_ISA_VERSIONS(to_float, (float *restrict out, const double *restrict in, size_t n), (out, in, n))

void imp_vec_to_float(float *out, const double *in, size_t n) { to_float(out, in, n); }

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

static inline __attribute__((always_inline)) void mul_float_body(float *restrict out, const float *restrict s,
                                                                 size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] *= s[i];
}
IMP_ISA_VERSIONS(mul_float, (float *restrict out, const float *restrict s, size_t n), (out, s, n))

static inline __attribute__((always_inline)) void relu_float_body(float *restrict z, float *restrict s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int pos = z[i] > 0.0f;
        s[i] = pos ? 1.0f : 0.0f;
        z[i] = pos ? z[i] : 0.0f;
    }
}
IMP_ISA_VERSIONS(relu_float, (float *restrict z, float *restrict s, size_t n), (z, s, n))

/* The crossings between float and double in the passes below, vectorised
 * like the loops above (the same operations per element as plain loops,
 * so the results do not depend on the version). */
static inline __attribute__((always_inline)) void bias_rows_float_body(float *restrict z, const double *restrict bias,
                                                                       int B, int n)
{
    for (int b = 0; b < B; b++)
        for (int j = 0; j < n; j++) z[(size_t)b * n + j] = (float)bias[j];
}
IMP_ISA_VERSIONS(bias_rows_float, (float *restrict z, const double *restrict bias, int B, int n), (z, bias, B, n))

/* db += column sums of Z (B x n, float), row by row in double */
static inline __attribute__((always_inline)) void bias_grad_float_body(double *restrict db, const float *restrict Z,
                                                                       int B, int n)
{
    for (int b = 0; b < B; b++)
        for (int j = 0; j < n; j++) db[j] += (double)Z[(size_t)b * n + j];
}
IMP_ISA_VERSIONS(bias_grad_float, (double *restrict db, const float *restrict Z, int B, int n), (db, Z, B, n))

/* out = (double)f * s  and  out = (float)(d * (double)s) */
static inline __attribute__((always_inline)) void mul_to_double_body(double *restrict out, const float *restrict f,
                                                                     const double *restrict s, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = (double)f[i] * s[i];
}
IMP_ISA_VERSIONS(mul_to_double, (double *restrict out, const float *restrict f, const double *restrict s, size_t n),
                 (out, f, s, n))

static inline __attribute__((always_inline)) void mul_to_float_body(float *restrict out, const double *restrict d,
                                                                    const float *restrict s, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = (float)(d[i] * (double)s[i]);
}
IMP_ISA_VERSIONS(mul_to_float, (float *restrict out, const double *restrict d, const float *restrict s, size_t n),
                 (out, d, s, n))

/* Activation of a wide layer in place (z -> a, s = phi'(z)). ReLU and
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

void imp_mlp_single_forward(const imp_mlp *m, const double *params, int B, imp_mlp_work *w)
{
    const int L = m->n_layers;
    const double *in_d = w->x;
    const float *in_f = NULL;
    for (int l = 0; l < L; l++) {
        const int n_in = m->sizes[l], n_out = m->sizes[l + 1];
        const size_t cnt = (size_t)B * (size_t)n_out;
        const imp_activation act = l == L - 1 ? m->output_act : m->hidden_act;
        if (wide(m->sizes, l)) {
            if (!in_f) { /* from a thin layer (or the input): its values in float */
                float *buf = l == 0 ? w->fx : w->fa[l - 1];
                to_float(buf, in_d, (size_t)B * (size_t)n_in);
                in_f = buf;
            }
            float *z = w->fa[l];
            const float *W = w->fW[l];
            if (w->leader)
                W = w->leader->fW[l]; /* rounded by the leader's forward (imp_mlp_work_single_follow) */
            else
                to_float(w->fW[l], params + m->w_off[l], (size_t)n_out * (size_t)n_in);
            float beta = 0.0f;
            if (m->b_off[l] != SIZE_MAX) {
                bias_rows_float(z, params + m->b_off[l], B, n_out);
                beta = 1.0f;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, n_out, n_in, 1.0f, in_f, n_in, W, n_in, beta, z,
                        n_out);
            act_single(act, z, w->fs[l], w->a[l], w->s[l], cnt);
            in_f = z, in_d = NULL;
            if (l == L - 1 || !wide(m->sizes, l + 1)) { /* the next layer (or the caller) reads double */
                to_double(w->a[l], z, cnt);
                in_d = w->a[l];
            }
        } else {
            double *z = w->a[l];
            imp_mlp_affine(m, params, l, in_d, B, z, w);
            imp_act_forward(act, z, w->s[l], cnt);
            in_d = z, in_f = NULL;
        }
    }
    w->fwd_batch = B;
    w->sweep1_batch = 0;
    w->gradient_only = 0;
    w->fused = 0;
    w->single_cache = 1;
}

void imp_mlp_single_backward(const imp_mlp *m, const double *params, const double *dy, int lddy, int B,
                             double *dparams, double *dx, int lddx, imp_mlp_work *w)
{
    const int L = m->n_layers, nL = m->sizes[L];
    double *Zd = w->buf[0], *nextd = w->buf[1];
    float *Zf = w->fZ, *nextf = w->fnext;
    int in_float = wide(m->sizes, L - 1);
    /* Z = dL/dz_{L-1} = dy * s_{L-1} */
    for (int b = 0; b < B; b++) {
        const double *dyb = dy + (size_t)b * lddy;
        size_t o = (size_t)b * nL;
        if (in_float)
            for (int j = 0; j < nL; j++) Zf[o + j] = (float)(dyb[j] * (double)w->fs[L - 1][o + j]);
        else
            imp_vec_mul(Zd + o, dyb, w->s[L - 1] + o, (size_t)nL);
    }
    for (int l = L - 1; l >= 0; l--) {
        const int n_in = m->sizes[l], n_out = m->sizes[l + 1];
        const size_t cnt_in = (size_t)B * (size_t)n_in;
        if (wide(m->sizes, l)) {
            if (!in_float) {
                to_float(Zf, Zd, (size_t)B * (size_t)n_out);
                in_float = 1;
            }
            if (dparams) {
                const float *A_in = l > 0 ? w->fa[l - 1] : w->fx;
                const size_t nw = (size_t)n_out * (size_t)n_in;
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n_out, n_in, B, 1.0f, Zf, n_out, A_in, n_in,
                            0.0f, w->fdW, n_in);
                add_float(dparams + m->w_off[l], w->fdW, nw);
                if (m->b_off[l] != SIZE_MAX) bias_grad_float(dparams + m->b_off[l], Zf, B, n_out);
            }
            if (l == 0 && !dx) break;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, n_in, n_out, 1.0f, Zf, n_out,
                        w->leader ? w->leader->fW[l] : w->fW[l], n_in,
                        0.0f, nextf, n_in);
            if (l == 0) {
                for (int b = 0; b < B; b++) add_float(dx + (size_t)b * lddx, nextf + (size_t)b * n_in, (size_t)n_in);
            } else if (wide(m->sizes, l - 1)) {
                mul_float(nextf, w->fs[l - 1], cnt_in);
                float *t = Zf;
                Zf = nextf, nextf = t;
            } else {
                mul_to_double(nextd, nextf, w->s[l - 1], cnt_in);
                double *t = Zd;
                Zd = nextd, nextd = t;
                in_float = 0;
            }
        } else {
            if (in_float) {
                to_double(Zd, Zf, (size_t)B * (size_t)n_out);
                in_float = 0;
            }
            /* a thin layer after a wide one reads the double copy the forward made */
            const double *A_in = l > 0 ? w->a[l - 1] : w->x;
            if (dparams) imp_mlp_layer_grad(m, w, l, Zd, A_in, B, dparams);
            const double *W = params + m->w_off[l];
            if (l == 0) {
                if (dx) imp_mlp_gemm(w, 0, 0, B, n_in, n_out, 1.0, Zd, n_out, W, n_in, 1.0, dx, lddx);
                break;
            }
            imp_mlp_gemm(w, 0, 0, B, n_in, n_out, 1.0, Zd, n_out, W, n_in, 0.0, nextd, n_in);
            if (wide(m->sizes, l - 1)) {
                mul_to_float(nextf, nextd, w->fs[l - 1], cnt_in);
                float *t = Zf;
                Zf = nextf, nextf = t;
                in_float = 1;
            } else {
                imp_vec_mul_inplace(nextd, w->s[l - 1], cnt_in);
                double *t = Zd;
                Zd = nextd, nextd = t;
            }
        }
    }
}
