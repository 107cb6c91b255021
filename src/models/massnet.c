/* Mass-matrix networks of the HNN and DeLaN baselines need the network's
 * outputs o = f(x) and their directional derivatives odot_j = J(x) t_j
 * along k input directions t_j (forward mode), and the reverse mode of both
 * with respect to x, t_j and the weights (second order: "forward over
 * reverse"). nn.h covers scalar networks only, so this is a small tanh-MLP
 * kernel of its own over the same imp_mlp parameter layout.
 *
 *   z_l = W_l a_{l-1} + b_l,  a_l = tanh(z_l) (hidden), o = z_L
 *   zdot_l = W_l adot_{l-1},  adot_l = s_l * zdot_l,  s_l = 1 - a_l^2
 * Reverse (zbar, zdotbar at the output = obar, odotbar):
 *   Wbar += zbar a^T + sum_j zdotbar_j adot_j^T,  bbar += zbar
 *   abar = W^T zbar,  adotbar_j = W^T zdotbar_j
 *   zbar_{l-1} = s (abar - 2 a sum_j adotbar_j zdot_j),  zdotbar_j = s adotbar_j */
#include "massnet.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void gemm(int ta, int tb, int M, int N, int K, double alpha, const double *A, int lda,
                 const double *B, int ldb, double beta, double *C, int ldc)
{
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K,
                alpha, A, lda, B, ldb, beta, C, ldc);
}

imp_tmlp_work *imp_tmlp_work_new(const imp_mlp *m, int max_batch, int k)
{
    imp_tmlp_work *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    int L = m->n_layers, nmax = 0;
    for (int l = 0; l <= L; l++) nmax = m->sizes[l] > nmax ? m->sizes[l] : nmax;
    w->max_batch = max_batch;
    w->k = k;
    size_t B = (size_t)max_batch, Bk = B * (size_t)k, total = B * m->sizes[0] + Bk * m->sizes[0];
    for (int l = 1; l <= L; l++) total += (B + Bk) * (size_t)m->sizes[l];
    total += 2 * (B + Bk) * (size_t)nmax;
    w->slab = malloc(total * sizeof(double));
    if (!w->slab) {
        free(w);
        return NULL;
    }
    double *p = w->slab;
    w->a[0] = p; p += B * m->sizes[0];
    w->ad[0] = p; p += Bk * m->sizes[0];
    for (int l = 1; l <= L; l++) {
        w->a[l] = p; p += B * m->sizes[l];
        w->ad[l] = p; p += Bk * m->sizes[l];
    }
    w->gb = p; p += B * nmax;
    w->gb2 = p; p += B * nmax;
    w->gd = p; p += Bk * nmax;
    w->gd2 = p;
    return w;
}

void imp_tmlp_work_free(imp_tmlp_work *w)
{
    if (!w) return;
    free(w->slab);
    free(w);
}

void imp_tmlp_forward(const imp_mlp *m, const double *params, const double *x, const double *t, int B,
                      imp_tmlp_work *w)
{
    int L = m->n_layers, k = w->k, Bk = B * k;
    memcpy(w->a[0], x, (size_t)B * m->sizes[0] * sizeof(double));
    memcpy(w->ad[0], t, (size_t)Bk * m->sizes[0] * sizeof(double));
    for (int l = 1; l <= L; l++) {
        int nin = m->sizes[l - 1], nout = m->sizes[l];
        const double *W = params + m->w_off[l - 1];
        double *z = w->a[l], *zd = w->ad[l];
        if (m->b_off[l - 1] != (size_t)-1) {
            const double *b = params + m->b_off[l - 1];
            for (int r = 0; r < B; r++) memcpy(z + (size_t)r * nout, b, (size_t)nout * sizeof(double));
            gemm(0, 1, B, nout, nin, 1.0, w->a[l - 1], nin, W, nin, 1.0, z, nout);
        } else {
            gemm(0, 1, B, nout, nin, 1.0, w->a[l - 1], nin, W, nin, 0.0, z, nout);
        }
        gemm(0, 1, Bk, nout, nin, 1.0, w->ad[l - 1], nin, W, nin, 0.0, zd, nout);
        if (l < L) {
            /* tangent row r*k + j belongs to sample r */
            for (int r = 0; r < B; r++)
                for (int i = 0; i < nout; i++) {
                    double a = tanh(z[(size_t)r * nout + i]), s = 1.0 - a * a;
                    z[(size_t)r * nout + i] = a;
                    for (int j = 0; j < k; j++) zd[((size_t)r * k + j) * nout + i] *= s;
                }
        }
    }
    /* a[L] holds o, ad[L] holds odot; for hidden layers a/ad hold tanh and
     * adot (zdot is recovered as adot / s in the reverse sweep). */
}

void imp_tmlp_backward(const imp_mlp *m, const double *params, const double *obar, const double *odbar,
                       int B, double *dparams, double *xbar, double *tbar, imp_tmlp_work *w)
{
    int L = m->n_layers, k = w->k, Bk = B * k;
    int nout = m->sizes[L];
    double *zb = w->gb, *zdb = w->gd, *ab = w->gb2, *adb = w->gd2;
    memcpy(zb, obar, (size_t)B * nout * sizeof(double));
    memcpy(zdb, odbar, (size_t)Bk * nout * sizeof(double));
    for (int l = L; l >= 1; l--) {
        int nin = m->sizes[l - 1], no = m->sizes[l];
        const double *W = params + m->w_off[l - 1];
        if (dparams) {
            double *Wb = dparams + m->w_off[l - 1];
            gemm(1, 0, no, nin, B, 1.0, zb, no, w->a[l - 1], nin, 1.0, Wb, nin);
            gemm(1, 0, no, nin, Bk, 1.0, zdb, no, w->ad[l - 1], nin, 1.0, Wb, nin);
            if (m->b_off[l - 1] != (size_t)-1) {
                double *bb = dparams + m->b_off[l - 1];
                for (int r = 0; r < B; r++)
                    for (int i = 0; i < no; i++) bb[i] += zb[(size_t)r * no + i];
            }
        }
        gemm(0, 0, B, nin, no, 1.0, zb, no, W, nin, 0.0, ab, nin);
        gemm(0, 0, Bk, nin, no, 1.0, zdb, no, W, nin, 0.0, adb, nin);
        if (l - 1 == 0) {
            if (xbar)
                for (size_t q = 0; q < (size_t)B * nin; q++) xbar[q] += ab[q];
            if (tbar)
                for (size_t q = 0; q < (size_t)Bk * nin; q++) tbar[q] += adb[q];
            break;
        }
        /* through a = tanh(z), adot = s zdot (s = 1 - a^2, zdot = adot / s) */
        const double *a = w->a[l - 1], *ad = w->ad[l - 1];
        for (int r = 0; r < B; r++)
            for (int i = 0; i < nin; i++) {
                double av = a[(size_t)r * nin + i], s = 1.0 - av * av;
                double acc = 0;
                for (int j = 0; j < k; j++) {
                    size_t q = ((size_t)r * k + j) * nin + i;
                    /* s * zdot = adot */
                    acc += adb[q] * ad[q];
                    adb[q] *= s;
                }
                /* zbar = s abar - 2 a s sum_j adotbar_j zdot_j = s abar - 2 a sum_j adotbar_j adot_j */
                ab[(size_t)r * nin + i] = s * ab[(size_t)r * nin + i] - 2.0 * av * acc;
            }
        double *tmp = zb; zb = ab; ab = tmp;
        tmp = zdb; zdb = adb; adb = tmp;
    }
}
