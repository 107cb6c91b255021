/* nn: every derivative of the MLP kernels against central differences
 * (and complex steps for sweep 1 and sweep 2), BLAS against the reference
 * loops, losses, L2, Glorot init, Adam/AdamW against PyTorch numbers,
 * cosine endpoints, and misuse (bad shapes, batch overflow, missing cache).
 *
 * Gradient checks compare block by block (each layer's W, each b, dx) with
 * err = max|analytic - numeric| / max(max|numeric|, 1e-3) < 1e-6. Central
 * differences with h = 1e-5 are good to ~1e-10 here, while a wrong sign or a
 * missing factor gives an error of order 1; check_detects() shows on each
 * kind of check that a corrupted gradient is caught. */
#include "impulse/nn.h"
#include "nn/act_math.h"
#include "nn/mlp_fixed.h"
#include "nn/mlp_internal.h"
#include "test.h"

#include <complex.h>
#include <stdint.h>

#define FD_H 1e-5
#define GRAD_TOL 1e-6
#define GRAD_FLOOR 1e-3
#define MAXP 512
#define MAXB 8
#define MAXIN 8

typedef struct {
    int n_layers;
    int sizes[6];
} shape;

/* scalar outputs (sweeps) and general outputs (forward/backward) */
static const shape scalar_shapes[] = {
    {1, {3, 1}}, {2, {1, 6, 1}}, {3, {3, 7, 5, 1}}, {4, {2, 4, 3, 5, 1}}};
static const shape vector_shapes[] = {{1, {3, 2}}, {2, {2, 5, 1}}, {3, {4, 6, 5, 3}}};
#define N_SCALAR (int)(sizeof scalar_shapes / sizeof scalar_shapes[0])
#define N_VECTOR (int)(sizeof vector_shapes / sizeof vector_shapes[0])

static const imp_activation all_acts[] = {IMP_ACT_IDENTITY, IMP_ACT_TANH, IMP_ACT_SOFTPLUS,
                                          IMP_ACT_RELU, IMP_ACT_SIGMOID};

static void fill_uniform(imp_rng *rng, double *p, size_t n, double lo, double hi)
{
    for (size_t i = 0; i < n; i++) p[i] = imp_rng_uniform_range(rng, lo, hi);
}

/* Glorot weights plus non-zero biases, so that bias gradients are exercised. */
static void random_params(const imp_mlp *m, double *params, imp_rng *rng)
{
    imp_mlp_init_params(m, params, rng);
    for (int l = 0; l < m->n_layers; l++)
        if (m->b_off[l] != SIZE_MAX) fill_uniform(rng, params + m->b_off[l], (size_t)m->sizes[l + 1], -0.5, 0.5);
    /* a little larger than Glorot so that curvature terms are not tiny */
    for (int l = 0; l < m->n_layers; l++)
        for (int i = 0; i < m->sizes[l] * m->sizes[l + 1]; i++) params[m->w_off[l] + (size_t)i] *= 1.5;
}

static double block_err(const double *an, const double *num, size_t n)
{
    return test_grad_rel_err(an, num, n, GRAD_FLOOR);
}

/* Compare per block: W_l, b_l for every layer. */
static double param_err(const imp_mlp *m, const double *an, const double *num)
{
    double worst = 0.0;
    for (int l = 0; l < m->n_layers; l++) {
        double e = block_err(an + m->w_off[l], num + m->w_off[l], (size_t)m->sizes[l] * (size_t)m->sizes[l + 1]);
        if (e > worst) worst = e;
        if (m->b_off[l] != SIZE_MAX) {
            e = block_err(an + m->b_off[l], num + m->b_off[l], (size_t)m->sizes[l + 1]);
            if (e > worst) worst = e;
        }
    }
    return worst;
}

/* A check that cannot fail is a defect: corrupt the analytic gradient (one
 * sign flip; separately one 1e-4 relative scale error) and make sure the
 * same error measure rejects it. */
static void check_detects(const double *an, const double *num, size_t n, const char *what)
{
    double bad[MAXP] = {0};
    if (n == 0 || n > MAXP) return;
    size_t imax = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(num[i]) > fabs(num[imax])) imax = i;
    if (fabs(num[imax]) < 10 * GRAD_FLOOR) return; /* nothing to corrupt */
    memcpy(bad, an, n * sizeof(double));
    bad[imax] = -bad[imax];
    CHECK_MSG(block_err(bad, num, n) > GRAD_TOL, "%s: a sign flip went unnoticed", what);
    memcpy(bad, an, n * sizeof(double));
    for (size_t i = 0; i < n; i++) bad[i] *= 1.0 + 1e-4;
    CHECK_MSG(block_err(bad, num, n) > GRAD_TOL, "%s: a 1e-4 scale error went unnoticed", what);
}

/* Gradients accumulate (+=): run each pass on top of a random baseline and
 * subtract it afterwards, so that an overwrite (beta = 0) is caught. */
static double baseline_p[MAXP], baseline_x[MAXB * MAXIN];
static void accumulate_check_begin(double *dp, size_t np_, double *dx, size_t nx, imp_rng *rng)
{
    fill_uniform(rng, baseline_p, np_, -1, 1);
    fill_uniform(rng, baseline_x, nx, -1, 1);
    memcpy(dp, baseline_p, np_ * sizeof(double));
    memcpy(dx, baseline_x, nx * sizeof(double));
}
static void accumulate_check_end(double *dp, size_t np_, double *dx, size_t nx)
{
    for (size_t i = 0; i < np_; i++) dp[i] -= baseline_p[i];
    for (size_t i = 0; i < nx; i++) dx[i] -= baseline_x[i];
}

/* ---- scalar objectives for finite differences ---- */

static double out_dot(const imp_mlp *m, const double *params, const double *x, int B, const double *c,
                      imp_mlp_work *w)
{
    double y[MAXB * 4];
    imp_mlp_forward(m, params, x, B, y, w);
    double s = 0.0;
    for (int i = 0; i < B * m->sizes[m->n_layers]; i++) s += c[i] * y[i];
    return s;
}

static double sum_V(const imp_mlp *m, const double *params, const double *x, int B, imp_mlp_work *w)
{
    double g[MAXB * MAXIN], V[MAXB];
    imp_mlp_grad_input(m, params, x, B, g, V, w);
    double s = 0.0;
    for (int b = 0; b < B; b++) s += V[b];
    return s;
}

static double g_dot(const imp_mlp *m, const double *params, const double *x, int B, const double *gbar,
                    imp_mlp_work *w)
{
    double g[MAXB * MAXIN];
    imp_mlp_grad_input(m, params, x, B, g, NULL, w);
    double s = 0.0;
    for (int i = 0; i < B * m->sizes[0]; i++) s += gbar[i] * g[i];
    return s;
}

typedef double (*objective)(const imp_mlp *, const double *, const double *, int, const double *,
                            imp_mlp_work *);

static double obj_V(const imp_mlp *m, const double *p, const double *x, int B, const double *unused,
                    imp_mlp_work *w)
{
    (void)unused;
    return sum_V(m, p, x, B, w);
}

/* Central differences of f wrt all params and all x. */
static void fd_grads(objective f, const imp_mlp *m, double *params, double *x, int B,
                     const double *aux, imp_mlp_work *w, double *dp, double *dx)
{
    for (size_t i = 0; i < m->n_params; i++) {
        double keep = params[i];
        params[i] = keep + FD_H;
        double fp = f(m, params, x, B, aux, w);
        params[i] = keep - FD_H;
        double fm = f(m, params, x, B, aux, w);
        params[i] = keep;
        dp[i] = (fp - fm) / (2 * FD_H);
    }
    for (int i = 0; i < B * m->sizes[0]; i++) {
        double keep = x[i];
        x[i] = keep + FD_H;
        double fp = f(m, params, x, B, aux, w);
        x[i] = keep - FD_H;
        double fm = f(m, params, x, B, aux, w);
        x[i] = keep;
        dx[i] = (fp - fm) / (2 * FD_H);
    }
}

static int make_net(imp_mlp *m, const shape *sh, imp_activation hid, imp_activation out, int last_bias)
{
    return imp_mlp_init(m, sh->n_layers, sh->sizes, hid, out, last_bias);
}

/* ---- backward: params and inputs, every activation, any output size ---- */
static void test_backward_fd(void)
{
    imp_rng rng;
    imp_rng_seed(&rng, 101);
    double worst = 0.0;
    int cases = 0, detect_done = 0;
    for (int si = 0; si < N_VECTOR + N_SCALAR; si++) {
        const shape *sh = si < N_VECTOR ? &vector_shapes[si] : &scalar_shapes[si - N_VECTOR];
        for (int hi = 0; hi < 5; hi++)
            for (int oi = 0; oi < 5; oi++)
                for (int lb = 0; lb <= 1; lb++) {
                    imp_mlp m;
                    CHECK_OK(make_net(&m, sh, all_acts[hi], all_acts[oi], lb));
                    int B = 3, in = m.sizes[0], out = m.sizes[m.n_layers];
                    double params[MAXP], x[MAXB * MAXIN], c[MAXB * 4], y[MAXB * 4];
                    double dp[MAXP] = {0}, dx[MAXB * MAXIN] = {0}, np_[MAXP], nx[MAXB * MAXIN];
                    random_params(&m, params, &rng);
                    fill_uniform(&rng, x, (size_t)(B * in), -1.5, 1.5);
                    fill_uniform(&rng, c, (size_t)(B * out), -1.0, 1.0);
                    imp_mlp_work *w = imp_mlp_work_new(&m, B);
                    imp_mlp_forward(&m, params, x, B, y, w);
                    accumulate_check_begin(dp, m.n_params, dx, (size_t)(B * in), &rng);
                    imp_mlp_backward(&m, params, c, B, dp, dx, w);
                    accumulate_check_end(dp, m.n_params, dx, (size_t)(B * in));
                    fd_grads(out_dot, &m, params, x, B, c, w, np_, nx);
                    double ep = param_err(&m, dp, np_), ex = block_err(dx, nx, (size_t)(B * in));
                    CHECK_MSG(ep < GRAD_TOL && ex < GRAD_TOL,
                              "backward shape %d hidden %s out %s bias %d: err params %.2e x %.2e", si,
                              imp_activation_name(all_acts[hi]), imp_activation_name(all_acts[oi]), lb, ep, ex);
                    worst = fmax(worst, fmax(ep, ex));
                    if (!detect_done && all_acts[hi] == IMP_ACT_TANH && m.n_layers >= 2) {
                        check_detects(dp, np_, m.n_params, "backward dparams");
                        check_detects(dx, nx, (size_t)(B * in), "backward dx");
                        detect_done = 1;
                    }
                    /* accumulation: a second backward adds the same again */
                    double dp2[MAXP];
                    memcpy(dp2, dp, sizeof dp2);
                    imp_mlp_forward(&m, params, x, B, y, w); /* the FD left another x cached */
                    imp_mlp_backward(&m, params, c, B, dp2, NULL, w);
                    int ok = 1;
                    for (size_t i = 0; i < m.n_params; i++) ok &= fabs(dp2[i] - 2 * dp[i]) <= 1e-12 * (1 + fabs(dp[i]));
                    CHECK_MSG(ok, "backward does not accumulate (+=)");
                    imp_mlp_work_free(w);
                    cases++;
                }
    }
    printf("backward: %d networks, worst relative error %.2e\n", cases, worst);
}

/* ---- sweep 1 (g = dV/dx) and sweep 2 (VJP of g) ---- */
static void test_sweeps_fd(void)
{
    imp_rng rng;
    imp_rng_seed(&rng, 202);
    double worst1 = 0.0, worst2 = 0.0;
    int cases = 0, detect_done = 0;
    for (int si = 0; si < N_SCALAR; si++)
        for (int hi = 0; hi < 5; hi++)
            for (int oi = 0; oi < 5; oi++)
                for (int lb = 0; lb <= 1; lb++) {
                    imp_mlp m;
                    CHECK_OK(make_net(&m, &scalar_shapes[si], all_acts[hi], all_acts[oi], lb));
                    int B = 4, in = m.sizes[0];
                    double params[MAXP], x[MAXB * MAXIN], gbar[MAXB * MAXIN], g[MAXB * MAXIN], V[MAXB], y[MAXB];
                    double dp[MAXP] = {0}, dx[MAXB * MAXIN] = {0}, np_[MAXP], nx[MAXB * MAXIN];
                    random_params(&m, params, &rng);
                    fill_uniform(&rng, x, (size_t)(B * in), -1.5, 1.5);
                    fill_uniform(&rng, gbar, (size_t)(B * in), -1.0, 1.0);
                    imp_mlp_work *w = imp_mlp_work_new(&m, MAXB);

                    /* sweep 1 against FD of V; V against the forward pass */
                    imp_mlp_forward(&m, params, x, B, y, w);
                    imp_mlp_grad_input(&m, params, x, B, g, V, w);
                    int same = 1;
                    for (int b = 0; b < B; b++) same &= V[b] == y[b];
                    CHECK_MSG(same, "grad_input V differs from forward");
                    fd_grads(obj_V, &m, params, x, B, NULL, w, np_, nx);
                    double e1 = block_err(g, nx, (size_t)(B * in));
                    CHECK_MSG(e1 < GRAD_TOL, "sweep 1 shape %d hidden %s out %s bias %d: err %.2e", si,
                              imp_activation_name(all_acts[hi]), imp_activation_name(all_acts[oi]), lb, e1);
                    worst1 = fmax(worst1, e1);

                    /* sweep 2 against FD of <gbar, g(x; theta)> */
                    imp_mlp_grad_input(&m, params, x, B, g, NULL, w);
                    accumulate_check_begin(dp, m.n_params, dx, (size_t)(B * in), &rng);
                    imp_mlp_grad_input_vjp(&m, params, gbar, B, dp, dx, w);
                    accumulate_check_end(dp, m.n_params, dx, (size_t)(B * in));
                    fd_grads(g_dot, &m, params, x, B, gbar, w, np_, nx);
                    double ep = param_err(&m, dp, np_), ex = block_err(dx, nx, (size_t)(B * in));
                    CHECK_MSG(ep < GRAD_TOL && ex < GRAD_TOL,
                              "sweep 2 shape %d hidden %s out %s bias %d: err params %.2e x %.2e", si,
                              imp_activation_name(all_acts[hi]), imp_activation_name(all_acts[oi]), lb, ep, ex);
                    worst2 = fmax(worst2, fmax(ep, ex));
                    if (!detect_done && all_acts[hi] == IMP_ACT_SOFTPLUS && m.n_layers >= 3) {
                        check_detects(g, nx, (size_t)(B * in), "sweep 1 g");
                        check_detects(dp, np_, m.n_params, "sweep 2 dparams");
                        check_detects(dx, nx, (size_t)(B * in), "sweep 2 dx");
                        detect_done = 1;
                    }

                    /* sweep 2 keeps the sweep 1 cache: a second call with
                     * dparams = NULL gives the same dx (now the HVP alone) */
                    imp_mlp_grad_input(&m, params, x, B, g, NULL, w);
                    double dxa[MAXB * MAXIN] = {0}, dxb[MAXB * MAXIN] = {0};
                    imp_mlp_grad_input_vjp(&m, params, gbar, B, NULL, dxa, w);
                    imp_mlp_grad_input_vjp(&m, params, gbar, B, NULL, dxb, w);
                    same = 1;
                    for (int i = 0; i < B * in; i++) same &= dxa[i] == dxb[i] && fabs(dxa[i] - dx[i]) <= 1e-12 * (1 + fabs(dx[i]));
                    CHECK_MSG(same, "repeated sweep 2 or dparams = NULL changes dx");
                    imp_mlp_work_free(w);
                    cases++;
                }
    printf("sweeps: %d networks, worst relative error sweep 1 %.2e, sweep 2 %.2e\n", cases, worst1, worst2);
}

/* ---- per-row Hessians against FD of g ---- */
static void test_hessian(void)
{
    imp_rng rng;
    imp_rng_seed(&rng, 303);
    for (int oi = 0; oi < 5; oi++) {
        imp_mlp m;
        int sizes[] = {3, 6, 5, 1};
        CHECK_OK(imp_mlp_init(&m, 3, sizes, IMP_ACT_TANH, all_acts[oi], 1));
        int B = 3, d = 3;
        double params[MAXP], x[MAXB * MAXIN], g[MAXB * MAXIN], gp[MAXB * MAXIN], gm[MAXB * MAXIN];
        double H[MAXB * MAXIN * MAXIN], Hn[MAXB * MAXIN * MAXIN];
        random_params(&m, params, &rng);
        fill_uniform(&rng, x, (size_t)(B * d), -1.0, 1.0);
        imp_mlp_work *w = imp_mlp_work_new(&m, B);
        for (int k = 0; k < d; k++) {
            double xs[MAXB * MAXIN];
            memcpy(xs, x, sizeof xs);
            for (int b = 0; b < B; b++) xs[b * d + k] = x[b * d + k] + FD_H;
            imp_mlp_grad_input(&m, params, xs, B, gp, NULL, w);
            for (int b = 0; b < B; b++) xs[b * d + k] = x[b * d + k] - FD_H;
            imp_mlp_grad_input(&m, params, xs, B, gm, NULL, w);
            for (int b = 0; b < B; b++)
                for (int j = 0; j < d; j++) Hn[(b * d + k) * d + j] = (gp[b * d + j] - gm[b * d + j]) / (2 * FD_H);
        }
        imp_mlp_grad_input(&m, params, x, B, g, NULL, w);
        imp_mlp_hessian_input(&m, params, B, H, w);
        double e = block_err(H, Hn, (size_t)(B * d * d));
        CHECK_MSG(e < GRAD_TOL, "hessian output %s: err %.2e", imp_activation_name(all_acts[oi]), e);
        check_detects(H, Hn, (size_t)(B * d * d), "hessian");
        double asym = 0.0;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < d; i++)
                for (int j = 0; j < d; j++) asym = fmax(asym, fabs(H[(b * d + i) * d + j] - H[(b * d + j) * d + i]));
        CHECK(asym < 1e-12);
        imp_mlp_work_free(w);
    }
}

/* ---- complex step: an independent complex-valued sweep 1 in the test ---- */
static double complex cact(imp_activation a, double complex z, double complex *s)
{
    double complex v;
    switch (a) {
    case IMP_ACT_TANH: v = ctanh(z); *s = 1 - v * v; return v;
    case IMP_ACT_SIGMOID: v = 1 / (1 + cexp(-z)); *s = v * (1 - v); return v;
    case IMP_ACT_SOFTPLUS: *s = 1 / (1 + cexp(-z)); return clog(1 + cexp(z));
    default: *s = 1; return z;
    }
}

/* g(x; theta) for one row, all in complex arithmetic (dense loops). */
static void csweep1(const imp_mlp *m, const double complex *p, const double complex *x, double complex *g)
{
    double complex a[IMP_MLP_MAX_LAYERS + 1][16], s[IMP_MLP_MAX_LAYERS][16], e[16], d[16];
    int L = m->n_layers;
    for (int i = 0; i < m->sizes[0]; i++) a[0][i] = x[i];
    for (int l = 0; l < L; l++) {
        imp_activation act = l == L - 1 ? m->output_act : m->hidden_act;
        for (int j = 0; j < m->sizes[l + 1]; j++) {
            double complex z = m->b_off[l] != SIZE_MAX ? p[m->b_off[l] + (size_t)j] : 0;
            for (int i = 0; i < m->sizes[l]; i++) z += p[m->w_off[l] + (size_t)(j * m->sizes[l] + i)] * a[l][i];
            a[l + 1][j] = cact(act, z, &s[l][j]);
        }
    }
    e[0] = 1;
    for (int l = L - 1; l >= 0; l--) {
        for (int j = 0; j < m->sizes[l + 1]; j++) d[j] = s[l][j] * e[j];
        for (int i = 0; i < m->sizes[l]; i++) {
            e[i] = 0;
            for (int j = 0; j < m->sizes[l + 1]; j++) e[i] += d[j] * p[m->w_off[l] + (size_t)(j * m->sizes[l] + i)];
        }
    }
    for (int i = 0; i < m->sizes[0]; i++) g[i] = e[i];
}

static void test_complex_step(void)
{
    const double hc = 1e-30;
    imp_rng rng;
    imp_rng_seed(&rng, 404);
    imp_activation smooth[] = {IMP_ACT_TANH, IMP_ACT_SOFTPLUS, IMP_ACT_SIGMOID, IMP_ACT_IDENTITY};
    double worst = 0.0;
    for (int hi = 0; hi < 4; hi++)
        for (int oi = 0; oi < 4; oi++) {
            imp_mlp m;
            int sizes[] = {3, 7, 5, 1};
            CHECK_OK(imp_mlp_init(&m, 3, sizes, smooth[hi], smooth[oi], oi % 2));
            int B = 2, d = 3;
            double params[MAXP], x[MAXB * MAXIN], gbar[MAXB * MAXIN], g[MAXB * MAXIN];
            double dp[MAXP] = {0}, dx[MAXB * MAXIN] = {0}, cp_[MAXP] = {0}, cx[MAXB * MAXIN];
            random_params(&m, params, &rng);
            fill_uniform(&rng, x, (size_t)(B * d), -1.5, 1.5);
            fill_uniform(&rng, gbar, (size_t)(B * d), -1.0, 1.0);
            imp_mlp_work *w = imp_mlp_work_new(&m, B);
            imp_mlp_grad_input(&m, params, x, B, g, NULL, w);
            imp_mlp_grad_input_vjp(&m, params, gbar, B, dp, dx, w);
            double complex P[MAXP], X[MAXIN], G[MAXIN];
            for (size_t i = 0; i < m.n_params; i++) P[i] = params[i];
            double gref_err = 0.0;
            for (int b = 0; b < B; b++) {
                for (int i = 0; i < d; i++) X[i] = x[b * d + i];
                csweep1(&m, P, X, G);
                for (int i = 0; i < d; i++) gref_err = fmax(gref_err, fabs(creal(G[i]) - g[b * d + i]));
                /* d<gbar_b, g_b>/dtheta_i = Im(<gbar_b, g_b(theta + i hc e_i)>)/hc */
                for (size_t k = 0; k < m.n_params; k++) {
                    P[k] = params[k] + I * hc;
                    csweep1(&m, P, X, G);
                    P[k] = params[k];
                    double s = 0.0;
                    for (int i = 0; i < d; i++) s += gbar[b * d + i] * cimag(G[i]) / hc;
                    cp_[k] += s;
                }
                for (int k = 0; k < d; k++) {
                    X[k] = x[b * d + k] + I * hc;
                    csweep1(&m, P, X, G);
                    X[k] = x[b * d + k];
                    double s = 0.0;
                    for (int i = 0; i < d; i++) s += gbar[b * d + i] * cimag(G[i]) / hc;
                    cx[b * d + k] = s;
                }
            }
            CHECK_MSG(gref_err < 1e-13, "complex reference sweep 1 disagrees: %.2e", gref_err);
            double ep = param_err(&m, dp, cp_), ex = block_err(dx, cx, (size_t)(B * d));
            CHECK_MSG(ep < 1e-12 && ex < 1e-12, "complex step sweep 2 hidden %s out %s: err %.2e %.2e",
                      imp_activation_name(smooth[hi]), imp_activation_name(smooth[oi]), ep, ex);
            worst = fmax(worst, fmax(ep, ex));
            imp_mlp_work_free(w);
        }
    printf("complex step: worst relative error of sweep 2 %.2e\n", worst);
}

/* ---- BLAS path against the reference loops ---- */
static double max_rel_diff(const double *a, const double *b, size_t n)
{
    double num = 0.0, den = 1e-300;
    for (size_t i = 0; i < n; i++) {
        num = fmax(num, fabs(a[i] - b[i]));
        den = fmax(den, fabs(b[i]));
    }
    return num / den;
}

/* BLAS (and the thin-layer loops, in every instruction-set version the
 * CPU has) against the plain reference loops; 2 inputs make the first
 * layer thin, 5 do not. */
static void test_blas_vs_reference(void)
{
    imp_rng rng;
    imp_rng_seed(&rng, 505);
    int isa_runs = 0;
    for (int isa = IMP_ISA_BASE; isa <= IMP_ISA_AVX512; isa++) {
    if (imp_act_force_isa(isa) != IMP_OK) continue;
    isa_runs++;
    for (int in0 = 2; in0 <= 5; in0 += 3)
    for (int outn = 1; outn <= 3; outn += 2) {
        imp_mlp m;
        int sizes[] = {in0, 40, 30, 24, outn};
        CHECK_OK(imp_mlp_init(&m, 4, sizes, outn == 1 ? IMP_ACT_SOFTPLUS : IMP_ACT_TANH,
                              outn == 1 ? IMP_ACT_TANH : IMP_ACT_SIGMOID, outn == 1));
        int B = 17;
        size_t np_ = m.n_params;
        double *params = malloc(np_ * sizeof(double));
        double x[17 * 5], dy[17 * 3], gbar[17 * 5];
        double y[2][17 * 3], dx[2][17 * 5], g[2][17 * 5], V[2][17], hx[2][17 * 5], H[2][17 * 25];
        double *dp[2] = {calloc(np_, sizeof(double)), calloc(np_, sizeof(double))};
        double *dp2[2] = {calloc(np_, sizeof(double)), calloc(np_, sizeof(double))};
        random_params(&m, params, &rng);
        fill_uniform(&rng, x, sizeof x / sizeof x[0], -1, 1);
        fill_uniform(&rng, dy, sizeof dy / sizeof dy[0], -1, 1);
        fill_uniform(&rng, gbar, sizeof gbar / sizeof gbar[0], -1, 1);
        imp_mlp_work *w = imp_mlp_work_new(&m, 32);
        for (int ref = 0; ref < 2; ref++) {
            imp_mlp_work_set_reference(w, ref);
            memset(dx[ref], 0, sizeof dx[ref]);
            memset(hx[ref], 0, sizeof hx[ref]);
            imp_mlp_forward(&m, params, x, B, y[ref], w);
            imp_mlp_backward(&m, params, dy, B, dp[ref], dx[ref], w);
            if (outn == 1) {
                imp_mlp_grad_input(&m, params, x, B, g[ref], V[ref], w);
                imp_mlp_grad_input_vjp(&m, params, gbar, B, dp2[ref], hx[ref], w);
                imp_mlp_hessian_input(&m, params, B, H[ref], w);
            }
        }
        double e = max_rel_diff(y[0], y[1], (size_t)(B * outn));
        e = fmax(e, max_rel_diff(dp[0], dp[1], np_));
        e = fmax(e, max_rel_diff(dx[0], dx[1], (size_t)(B * in0)));
        if (outn == 1) {
            e = fmax(e, max_rel_diff(g[0], g[1], (size_t)(B * in0)));
            e = fmax(e, max_rel_diff(V[0], V[1], (size_t)B));
            e = fmax(e, max_rel_diff(dp2[0], dp2[1], np_));
            e = fmax(e, max_rel_diff(hx[0], hx[1], (size_t)(B * in0)));
            e = fmax(e, max_rel_diff(H[0], H[1], (size_t)(B * in0 * in0)));
        }
        CHECK_MSG(e < 1e-12, "BLAS and reference loops differ by %.2e (isa %d, in %d, out %d)", e, isa, in0, outn);
        /* and the comparison is not vacuous */
        CHECK(max_rel_diff(dp[0], dp2[0], np_) > 1e-3 || outn != 1);
        imp_mlp_work_free(w);
        free(params);
        for (int k = 0; k < 2; k++) free(dp[k]), free(dp2[k]);
    }
    }
    CHECK_OK(imp_act_force_isa(-1));
    CHECK(isa_runs >= 1);
}

/* ---- one row with fixed weights (imp_mlp_fixed) against the reference ----
 * In every instruction-set version the CPU has: the forward of networks
 * whose layers take the matrix-vector kernel (widths that end in each of
 * its blocks), the dot products (at most IMP_MLP_THIN outputs) and, after a
 * relu, the kernel that skips the zero inputs; the input gradient of the
 * fused potentials (softplus, 1 and 3 inputs) and of networks outside
 * them. The reference is the general path on its plain loops, row by row;
 * the sums differ in order only (1e-12). The fixed copy must not see later
 * changes of the parameters. */
static void test_fixed_rows(void)
{
    static const struct {
        int n_layers, sizes[5];
        imp_activation hid, out;
        int last_bias;
    } nets[] = {
        {3, {2, 100, 100, 1}, IMP_ACT_RELU, IMP_ACT_SIGMOID, 1}, /* the contact network */
        {3, {4, 37, 45, 13}, IMP_ACT_RELU, IMP_ACT_IDENTITY, 1},
        {2, {3, 9, 5}, IMP_ACT_TANH, IMP_ACT_SIGMOID, 0},
        {2, {1, 500, 1}, IMP_ACT_SOFTPLUS, IMP_ACT_IDENTITY, 0}, /* the ball's potential */
        {2, {3, 61, 1}, IMP_ACT_SOFTPLUS, IMP_ACT_IDENTITY, 0},
        {2, {2, 30, 1}, IMP_ACT_TANH, IMP_ACT_IDENTITY, 0},     /* not fused: general sweep */
        {3, {3, 20, 17, 1}, IMP_ACT_SOFTPLUS, IMP_ACT_IDENTITY, 1},
    };
    enum { ROWS = 9 };
    imp_rng rng;
    imp_rng_seed(&rng, 909);
    int isa_runs = 0;
    double worst = 0.0, worst_g = 0.0, worst_d = 0.0;
    for (int isa = IMP_ISA_BASE; isa <= IMP_ISA_AVX512; isa++) {
        if (imp_act_force_isa(isa) != IMP_OK) continue;
        isa_runs++;
        for (size_t k = 0; k < sizeof nets / sizeof nets[0]; k++) {
            imp_mlp m;
            CHECK_OK(imp_mlp_init(&m, nets[k].n_layers, nets[k].sizes, nets[k].hid, nets[k].out, nets[k].last_bias));
            const int n0 = m.sizes[0], nL = m.sizes[m.n_layers];
            double *params = malloc(m.n_params * sizeof(double));
            random_params(&m, params, &rng);
            imp_mlp_fixed *f = imp_mlp_fixed_new(&m, params);
            CHECK(f != NULL);
            imp_mlp_work *w = imp_mlp_work_new(&m, 1), *wd = imp_mlp_work_new(&m, 1);
            imp_mlp_work_set_reference(w, 1);
            double *saved = malloc(m.n_params * sizeof(double));
            memcpy(saved, params, m.n_params * sizeof(double));
            for (size_t i = 0; i < m.n_params; i++) params[i] += 1.0; /* the fixed copy keeps the old ones */
            double err = 0.0, gerr = 0.0, derr = 0.0;
            int zeros = 0;
            for (int r = 0; r < ROWS; r++) {
                double x[8], y[2][16], g[2][8];
                fill_uniform(&rng, x, (size_t)n0, -2, 2);
                imp_mlp_fixed_forward(f, x, y[0]);
                imp_mlp_forward(&m, saved, x, 1, y[1], w);
                /* relative to max(|y|, 1): a scalar output that sums units of both
                 * signs (V = w1 . phi) can be much smaller than its terms */
                err = fmax(err, test_grad_rel_err(y[0], y[1], (size_t)nL, 1.0));
                for (int l = 0; l + 1 < m.n_layers; l++)
                    for (int j = 0; j < m.sizes[l + 1]; j++) zeros += w->a[l][j] == 0.0;
                if (nL == 1) { /* against the reference, and the default path (fused sweep) */
                    double gd[8];
                    imp_mlp_fixed_grad_input(f, x, g[0]);
                    imp_mlp_grad_input(&m, saved, x, 1, g[1], NULL, w);
                    imp_mlp_grad_input(&m, saved, x, 1, gd, NULL, wd);
                    gerr = fmax(gerr, max_rel_diff(g[0], g[1], (size_t)n0));
                    derr = fmax(derr, max_rel_diff(g[0], gd, (size_t)n0));
                }
            }
            /* the gradient of a potential: a sum of 500 terms of both signs, whose
             * order moves the result by more than the size of g suggests */
            CHECK_MSG(err < 1e-12 && gerr < 1e-11 && derr < 1e-13,
                      "fixed rows (%s, network %zu): forward %.2e and gradient %.2e from the reference, "
                      "gradient %.2e from the default path", imp_isa_name(isa), k, err, gerr, derr);
            worst = fmax(worst, err);
            worst_g = fmax(worst_g, gerr), worst_d = fmax(worst_d, derr);
            if (nets[k].hid == IMP_ACT_RELU) CHECK(zeros > 0); /* the zero-skipping kernel ran */
            imp_mlp_fixed_free(f);
            imp_mlp_work_free(w), imp_mlp_work_free(wd);
            free(params), free(saved);
        }
    }
    CHECK_OK(imp_act_force_isa(-1));
    CHECK(isa_runs >= 1);
    printf("fixed rows: %d instruction-set versions, worst relative difference from the reference: forward %.2e, "
           "input gradient %.2e (%.2e from the default path)\n", isa_runs, worst, worst_g, worst_d);
    imp_mlp_fixed_free(NULL);
    imp_mlp bad = {0};
    CHECK(imp_mlp_fixed_new(&bad, NULL) == NULL);
}

/* ---- description, init, L2 ---- */
static void test_init_and_l2(void)
{
    imp_mlp m;
    int sizes[] = {4, 300, 200, 1};
    CHECK_OK(imp_mlp_init(&m, 3, sizes, IMP_ACT_TANH, IMP_ACT_IDENTITY, 0));
    CHECK(m.n_params == (size_t)(4 * 300 + 300 + 300 * 200 + 200 + 200));
    CHECK(m.w_off[0] == 0 && m.b_off[0] == 1200 && m.w_off[1] == 1500 && m.b_off[2] == SIZE_MAX);
    double *p = malloc(m.n_params * sizeof(double));
    imp_rng rng;
    imp_rng_seed(&rng, 9);
    imp_mlp_init_params(&m, p, &rng);
    /* layer 1: U(-r, r), r = sqrt(6/500): max near r, variance r^2/3 */
    double r = sqrt(6.0 / 500.0), mx = 0.0, s2 = 0.0;
    size_t n = 300 * 200;
    for (size_t i = 0; i < n; i++) {
        double v = p[m.w_off[1] + i];
        mx = fmax(mx, fabs(v));
        s2 += v * v;
    }
    CHECK(mx <= r && mx > 0.999 * r);
    CHECK_CLOSE(s2 / (double)n, r * r / 3.0, 0.02, 0);
    int zero = 1;
    for (int j = 0; j < 300; j++) zero &= p[m.b_off[0] + (size_t)j] == 0.0;
    CHECK(zero);
    free(p);

    /* L2 value and gradient (FD), kernels only */
    int small[] = {2, 3, 1};
    CHECK_OK(imp_mlp_init(&m, 2, small, IMP_ACT_TANH, IMP_ACT_IDENTITY, 1));
    double q[MAXP], dq[MAXP] = {0}, nq[MAXP];
    fill_uniform(&rng, q, m.n_params, -1, 1);
    double lambda = 0.05, want = 0.0;
    for (int i = 0; i < 6; i++) want += q[m.w_off[0] + (size_t)i] * q[m.w_off[0] + (size_t)i];
    for (int i = 0; i < 3; i++) want += q[m.w_off[1] + (size_t)i] * q[m.w_off[1] + (size_t)i];
    CHECK_CLOSE(imp_mlp_l2(&m, q, lambda, dq), lambda * want, 1e-14, 0);
    for (size_t i = 0; i < m.n_params; i++) {
        double keep = q[i];
        q[i] = keep + FD_H;
        double fp = imp_mlp_l2(&m, q, lambda, NULL);
        q[i] = keep - FD_H;
        double fm = imp_mlp_l2(&m, q, lambda, NULL);
        q[i] = keep;
        nq[i] = (fp - fm) / (2 * FD_H);
    }
    CHECK(param_err(&m, dq, nq) < GRAD_TOL);
    check_detects(dq, nq, m.n_params, "l2");
    CHECK(dq[m.b_off[0]] == 0.0 && dq[m.b_off[1]] == 0.0);

    /* activation names */
    imp_activation a;
    CHECK_OK(imp_activation_from_name("softplus", &a));
    CHECK(a == IMP_ACT_SOFTPLUS);
    CHECK_OK(imp_activation_from_name("linear", &a));
    CHECK(a == IMP_ACT_IDENTITY);
    CHECK_FAILS(imp_activation_from_name("gelu", &a), IMP_ERR_NOT_FOUND);
    for (int k = 0; k < 5; k++) {
        CHECK_OK(imp_activation_from_name(imp_activation_name(all_acts[k]), &a));
        CHECK(a == all_acts[k]);
    }
}

/* ---- activations at extreme inputs stay finite and accurate ---- */
static void test_activation_extremes(void)
{
    double z[4] = {-800, -40, 40, 800}, s[4];
    double zc[4];
    memcpy(zc, z, sizeof z);
    imp_act_forward(IMP_ACT_SOFTPLUS, zc, s, 4);
    CHECK(zc[0] == 0.0 && s[0] == 0.0);
    CHECK_CLOSE(zc[1], exp(-40.0), 1e-12, 0);
    CHECK_CLOSE(s[1], exp(-40.0), 1e-12, 0);
    CHECK(zc[3] == 800.0 && s[3] == 1.0);
    memcpy(zc, z, sizeof z);
    imp_act_forward(IMP_ACT_SIGMOID, zc, s, 4);
    CHECK_CLOSE(zc[1], exp(-40.0), 1e-12, 0);
    CHECK_CLOSE(s[2], exp(-40.0), 1e-12, 0);
    CHECK(zc[3] == 1.0 && isfinite(s[3]) && isfinite(s[0]));
}

/* ---- activation kernels against libm: values and derivatives to a few
 * ulp over [-50, 50] and down to |z| = 1e-300 (the kernels use their own
 * vectorised exponential) ---- */
static double ulp_err(double got, double want)
{
    if (got == want) return 0.0;
    return fabs(got - want) / fmax(fabs(want), 1e-300) / 2.220446049250313e-16;
}

static void activation_accuracy(const char *isa_name)
{
    enum { N = 40000 };
    static double z[N], a[N], s[N];
    for (int i = 0; i < N / 2; i++) z[i] = -50.0 + 100.0 * i / (N / 2);
    for (int i = N / 2; i < N; i++) {
        int k = i - N / 2;
        double mag = pow(10.0, -300.0 + 299.0 * (double)(k / 2) / (N / 4));
        z[i] = k % 2 ? mag : -mag;
    }
    for (int q = 0; q < 3; q++) {
        imp_activation act = q == 0 ? IMP_ACT_TANH : q == 1 ? IMP_ACT_SOFTPLUS : IMP_ACT_SIGMOID;
        memcpy(a, z, sizeof a);
        imp_act_forward(act, a, s, N);
        double worst_a = 0.0, worst_s = 0.0;
        for (int i = 0; i < N; i++) {
            double x = z[i], wa, ws, e = exp(-fabs(x));
            if (q == 0) {
                wa = tanh(x);
                ws = 1.0 / (cosh(x) * cosh(x));
            } else if (q == 1) {
                wa = (x > 0 ? x : 0.0) + log1p(e);
                ws = x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
            } else {
                wa = x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
                ws = e / ((1.0 + e) * (1.0 + e));
            }
            worst_a = fmax(worst_a, ulp_err(a[i], wa));
            worst_s = fmax(worst_s, ulp_err(s[i], ws));
        }
        CHECK_MSG(worst_a < 6.0 && worst_s < 8.0, "%s (%s): value %.1f ulp, derivative %.1f ulp",
                  imp_activation_name(act), isa_name, worst_a, worst_s);
        /* NaN in, NaN out; infinities saturate */
        double zn[3] = {NAN, INFINITY, -INFINITY}, sn[3];
        imp_act_forward(act, zn, sn, 3);
        CHECK(isnan(zn[0]) && isnan(sn[0]));
        CHECK(sn[1] == (q == 1 ? 1.0 : 0.0) && sn[2] == 0.0);
        CHECK(zn[1] == (q == 1 ? INFINITY : 1.0) && zn[2] == (q == 0 ? -1.0 : 0.0));
    }

}

/* Every instruction-set version the CPU has, then the automatic choice. */
static void test_activation_accuracy(void)
{
    static const char *names[] = {"base", "avx2", "avx512"};
    int ran = 0;
    for (int isa = IMP_ISA_BASE; isa <= IMP_ISA_AVX512; isa++) {
        if (imp_act_force_isa(isa) != IMP_OK) {
            printf("activation kernels: %s version not available here, skipped\n", names[isa]);
            continue;
        }
        activation_accuracy(names[isa]);
        ran++;
    }
    CHECK_OK(imp_act_force_isa(-1));
    CHECK(ran >= 1);
    CHECK_FAILS(imp_act_force_isa(7), IMP_ERR_UNSUPPORTED);
    activation_accuracy("auto");

    /* second derivatives (sweep 2 up step with dbar = e = 1) against central
     * differences of the first derivative, for every activation */
    for (int k = 0; k < 5; k++) {
        enum { M = 64 };
        double zz[M], aa[M], ss[M], r[M], num[M], one[M], zp[M], sp[M], zm[M], sm[M];
        for (int i = 0; i < M; i++) zz[i] = -4.0 + 8.0 * (i + 0.37) / M, one[i] = 1.0;
        memcpy(aa, zz, sizeof aa);
        imp_act_forward(all_acts[k], aa, ss, M);
        imp_act_sweep2_up(all_acts[k], M, one, NULL, aa, ss, r, NULL);
        for (int i = 0; i < M; i++) zp[i] = zz[i] + FD_H, zm[i] = zz[i] - FD_H;
        imp_act_forward(all_acts[k], zp, sp, M);
        imp_act_forward(all_acts[k], zm, sm, M);
        for (int i = 0; i < M; i++) num[i] = (sp[i] - sm[i]) / (2 * FD_H);
        CHECK_MSG(block_err(r, num, M) < GRAD_TOL, "%s: second derivative err %.2e",
                  imp_activation_name(all_acts[k]), block_err(r, num, M));
        check_detects(r, num, M, "second derivative");
        for (int i = 0; i < M; i++)
            CHECK_CLOSE(r[i], imp_act_second(all_acts[k], aa[i], ss[i]), 1e-14, 1e-300);
    }
}

/* ---- strided (leading-dimension) variants equal the contiguous ones and
 * leave the gaps between rows alone ---- */
static void test_strided(void)
{
    imp_rng rng;
    imp_rng_seed(&rng, 707);
    imp_mlp m;
    int sizes[] = {3, 6, 5, 1};
    CHECK_OK(imp_mlp_init(&m, 3, sizes, IMP_ACT_SOFTPLUS, IMP_ACT_TANH, 1));
    enum { B = 4, D = 3, LD = 7 };
    const double sentinel = 12345.0;
    double params[MAXP], x[B * D], gbar[B * D], y[B], g[B * D], V[B], dx[B * D] = {0}, dxg[B * D] = {0};
    double dp[MAXP] = {0}, dpg[MAXP] = {0}, dps[MAXP] = {0}, dpgs[MAXP] = {0};
    double xs[B * LD], gbars[B * LD], ys[B * 2], gs[B * LD], dxs[B * LD], dxgs[B * LD], dys[B * 2];
    random_params(&m, params, &rng);
    fill_uniform(&rng, x, B * D, -1, 1);
    fill_uniform(&rng, gbar, B * D, -1, 1);
    for (int i = 0; i < B * LD; i++) xs[i] = gbars[i] = gs[i] = dxs[i] = dxgs[i] = sentinel;
    for (int i = 0; i < B * 2; i++) ys[i] = dys[i] = sentinel;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < D; j++) {
            xs[b * LD + 2 + j] = x[b * D + j]; /* x sits at column 2 of each row */
            gbars[b * LD + 1 + j] = gbar[b * D + j];
            dxs[b * LD + j] = dxgs[b * LD + j] = 0.0;
        }
    for (int b = 0; b < B; b++) dys[b * 2] = 1.0 + b;
    double dy[B] = {1, 2, 3, 4};
    imp_mlp_work *w = imp_mlp_work_new(&m, B);
    imp_mlp_forward(&m, params, x, B, y, w);
    imp_mlp_backward(&m, params, dy, B, dp, dx, w);
    imp_mlp_grad_input(&m, params, x, B, g, V, w);
    imp_mlp_grad_input_vjp(&m, params, gbar, B, dpg, dxg, w);

    imp_mlp_forward_ld(&m, params, xs + 2, LD, B, ys, 2, w);
    imp_mlp_backward_ld(&m, params, dys, 2, B, dps, dxs, LD, w);
    imp_mlp_grad_input_ld(&m, params, xs + 2, LD, B, gs + 4, LD, NULL, w);
    imp_mlp_grad_input_vjp_ld(&m, params, gbars + 1, LD, B, dpgs, dxgs, LD, w);
    int same = 1, gaps = 1;
    for (int b = 0; b < B; b++) {
        same &= ys[b * 2] == y[b];
        gaps &= ys[b * 2 + 1] == sentinel;
        for (int j = 0; j < LD; j++) {
            /* g lands in columns 4..6, dx in columns 0..2 of each row */
            if (j >= 4) same &= gs[b * LD + j] == g[b * D + j - 4];
            else gaps &= gs[b * LD + j] == sentinel;
            if (j < D)
                same &= dxs[b * LD + j] == dx[b * D + j] && dxgs[b * LD + j] == dxg[b * D + j];
            else
                gaps &= dxs[b * LD + j] == sentinel && dxgs[b * LD + j] == sentinel;
        }
    }
    for (size_t i = 0; i < m.n_params; i++) same &= dps[i] == dp[i] && dpgs[i] == dpg[i];
    CHECK_MSG(same, "strided passes differ from contiguous ones");
    CHECK_MSG(gaps, "strided passes wrote between rows");
    /* a leading dimension shorter than the row */
    imp_clear_error();
    imp_mlp_grad_input_ld(&m, params, xs, 2, B, gs, LD, NULL, w);
    CHECK(isnan(gs[0]) && strstr(imp_last_error(), "ldx") != NULL);
    imp_mlp_work_free(w);
}

/* ---- misuse ---- */
static void test_misuse(void)
{
    imp_mlp m;
    int sizes[] = {2, 4, 1}, bad[] = {2, 0, 1}, vec[] = {2, 4, 3};
    CHECK_FAILS(imp_mlp_init(&m, 0, sizes, IMP_ACT_TANH, IMP_ACT_IDENTITY, 1), IMP_ERR_INVALID);
    CHECK_FAILS(imp_mlp_init(&m, IMP_MLP_MAX_LAYERS + 1, sizes, IMP_ACT_TANH, IMP_ACT_IDENTITY, 1), IMP_ERR_INVALID);
    CHECK_FAILS(imp_mlp_init(&m, 2, bad, IMP_ACT_TANH, IMP_ACT_IDENTITY, 1), IMP_ERR_INVALID);
    CHECK_FAILS(imp_mlp_init(&m, 2, sizes, (imp_activation)17, IMP_ACT_IDENTITY, 1), IMP_ERR_INVALID);
    CHECK_FAILS(imp_mlp_init(&m, 2, sizes, IMP_ACT_TANH, IMP_ACT_IDENTITY, 2), IMP_ERR_INVALID);
    CHECK_OK(imp_mlp_init(&m, 2, sizes, IMP_ACT_TANH, IMP_ACT_IDENTITY, 1));
    imp_clear_error();
    CHECK(imp_mlp_work_new(&m, 0) == NULL && imp_last_error()[0] != '\0');

    double params[MAXP], x[8 * 2] = {0}, y[8], g[8 * 2], V[8], dp[MAXP], dx[8 * 2];
    imp_rng rng;
    imp_rng_seed(&rng, 1);
    imp_mlp_init_params(&m, params, &rng);
    imp_mlp_work *w = imp_mlp_work_new(&m, 4);
    CHECK(imp_mlp_work_max_batch(w) == 4);
    CHECK_OK(imp_mlp_work_check(&m, w, 4));
    CHECK_FAILS(imp_mlp_work_check(&m, w, 5), IMP_ERR_SHAPE);
    CHECK_FAILS(imp_mlp_work_check(&m, w, 0), IMP_ERR_SHAPE);

    /* B > max_batch: outputs become NaN, message recorded, nothing overflows
     * (the sanitizer build would catch an overflow here) */
    imp_clear_error();
    imp_mlp_forward(&m, params, x, 8, y, w);
    CHECK(isnan(y[0]) && isnan(y[7]) && strstr(imp_last_error(), "B:") != NULL);
    imp_mlp_grad_input(&m, params, x, 8, g, V, w);
    CHECK(isnan(g[15]) && isnan(V[7]));

    /* backward without a matching forward */
    imp_mlp_work *w2 = imp_mlp_work_new(&m, 4);
    memset(dp, 0, sizeof dp);
    imp_clear_error();
    imp_mlp_backward(&m, params, y, 2, dp, NULL, w2);
    CHECK(isnan(dp[0]) && imp_last_error()[0] != '\0');
    imp_mlp_forward(&m, params, x, 3, y, w2);
    memset(dp, 0, sizeof dp);
    imp_mlp_backward(&m, params, y, 2, dp, NULL, w2); /* batch mismatch */
    CHECK(isnan(dp[0]));
    /* sweep 2 without sweep 1 (a forward alone does not count) */
    memset(dx, 0, sizeof dx);
    imp_mlp_grad_input_vjp(&m, params, x, 3, NULL, dx, w2);
    CHECK(isnan(dx[0]));
    /* sweep 1 on a vector-output network */
    imp_mlp mv;
    CHECK_OK(imp_mlp_init(&mv, 2, vec, IMP_ACT_TANH, IMP_ACT_IDENTITY, 1));
    imp_mlp_work *wv = imp_mlp_work_new(&mv, 4);
    imp_clear_error();
    imp_mlp_grad_input(&mv, params, x, 2, g, NULL, wv);
    CHECK(isnan(g[0]) && strstr(imp_last_error(), "sizes[2]") != NULL);
    /* a work space of another shape */
    CHECK_FAILS(imp_mlp_work_check(&m, wv, 2), IMP_ERR_SHAPE);
    imp_mlp_forward(&m, params, x, 2, y, wv);
    CHECK(isnan(y[0]));
    imp_mlp_work_free(w);
    imp_mlp_work_free(w2);
    imp_mlp_work_free(wv);
    imp_mlp_work_free(NULL);
}

/* ---- losses ---- */
static void test_losses(void)
{
    imp_rng rng;
    imp_rng_seed(&rng, 606);
    enum { N = 7 };
    double p[N], t[N], gr[N], num[N];
    fill_uniform(&rng, p, N, -2, 2);
    fill_uniform(&rng, t, N, -2, 2);
    double (*fns[2])(const double *, const double *, size_t, double *) = {imp_mse, imp_l1};
    for (int k = 0; k < 2; k++) {
        fns[k](p, t, N, gr);
        for (int i = 0; i < N; i++) {
            double keep = p[i];
            p[i] = keep + FD_H;
            double fp = fns[k](p, t, N, NULL);
            p[i] = keep - FD_H;
            double fm = fns[k](p, t, N, NULL);
            p[i] = keep;
            num[i] = (fp - fm) / (2 * FD_H);
        }
        CHECK(block_err(gr, num, N) < GRAD_TOL);
        check_detects(gr, num, N, k ? "l1" : "mse");
    }
    double a[2] = {1.0, 3.0}, b[2] = {2.0, 0.0};
    CHECK_CLOSE(imp_mse(a, b, 2, NULL), (1.0 + 9.0) / 2, 1e-15, 0);
    CHECK_CLOSE(imp_l1(a, b, 2, NULL), (1.0 + 3.0) / 2, 1e-15, 0);
    double g0[1];
    imp_l1(a, a, 1, g0);
    CHECK(g0[0] == 0.0);

    /* BCE on probabilities: value, FD gradient inside, clamp outside */
    double pr[N], lab[N], z[N];
    fill_uniform(&rng, pr, N, 0.05, 0.95);
    for (int i = 0; i < N; i++) lab[i] = i % 3 == 0 ? 0.3 : (double)(i % 2);
    imp_bce(pr, lab, N, gr);
    for (int i = 0; i < N; i++) {
        double keep = pr[i];
        pr[i] = keep + 1e-6;
        double fp = imp_bce(pr, lab, N, NULL);
        pr[i] = keep - 1e-6;
        double fm = imp_bce(pr, lab, N, NULL);
        pr[i] = keep;
        num[i] = (fp - fm) / 2e-6;
    }
    CHECK(block_err(gr, num, N) < GRAD_TOL);
    check_detects(gr, num, N, "bce");
    double one = 1.0, zero = 0.0, half = 0.5;
    CHECK_CLOSE(imp_bce(&half, &one, 1, NULL), log(2.0), 1e-15, 0);
    CHECK_CLOSE(imp_bce(&zero, &one, 1, gr), -log(1e-7), 1e-12, 0); /* clamped, finite */
    CHECK(gr[0] == 0.0);
    CHECK_CLOSE(imp_bce(&one, &zero, 1, gr), -log1p(-(1.0 - 1e-7)), 1e-9, 0);
    CHECK(gr[0] == 0.0);

    /* BCE on logits equals BCE of sigmoid, gradient sigmoid - y */
    fill_uniform(&rng, z, N, -4, 4);
    for (int i = 0; i < N; i++) pr[i] = 1.0 / (1.0 + exp(-z[i]));
    CHECK_CLOSE(imp_bce_logits(z, lab, N, gr), imp_bce(pr, lab, N, NULL), 1e-12, 0);
    for (int i = 0; i < N; i++) {
        double keep = z[i];
        z[i] = keep + FD_H;
        double fp = imp_bce_logits(z, lab, N, NULL);
        z[i] = keep - FD_H;
        double fm = imp_bce_logits(z, lab, N, NULL);
        z[i] = keep;
        num[i] = (fp - fm) / (2 * FD_H);
    }
    CHECK(block_err(gr, num, N) < GRAD_TOL);
    double big = 800.0;
    CHECK(isfinite(imp_bce_logits(&big, &zero, 1, gr)) && gr[0] == 1.0);
}

/* ---- optimisers: PyTorch 1.13 and hand-computed trajectories ---- */
static void test_adam(void)
{
    static const double grads[3][3] = {{0.5, -2.0, 1e-3}, {0.1, -1.0, -3.0}, {-0.7, 0.25, 2.0}};
    /* torch.optim.Adam(lr=0.1, betas=(0.9,0.999), eps=1e-8), float64 */
    static const double adam[3][3] = {
        {0.90000000199999997, -0.40000000050000001, 1.9000009999900001},
        {0.81969590638465184, -0.30678203720851044, 1.9743923537626746},
        {0.83482263486916053, -0.24227550431405509, 1.9867845434107847}};
    /* torch.optim.AdamW(same, weight_decay=0.01) */
    static const double adamw[3][3] = {
        {0.89900000199999996, -0.39950000050000001, 1.89800099999},
        {0.81779690638265179, -0.30588253720801045, 1.9704943527626846},
        {0.83210583796077786, -0.24107012177634707, 1.9809160480580319}};
    /* torch.optim.Adam(lr=0.05, betas=(0.5,0.8), eps=1e-3): eps matters here */
    static const double adam_b[3][3] = {
        {0.95009980039920161, -0.45002498750624687, 1.9750000000000001},
        {0.91604300593062182, -0.4064099621954661, 2.0196939162766796},
        {0.94487254650540198, -0.38833198386781548, 2.0130258135471362}};
    /* Keras placement, same settings as adam_b (hand loop in Python) */
    static const double keras_b[3][3] = {
        {0.95022261124997498, -0.45005583926923659, 1.9845491502812527},
        {0.91623196606236712, -0.40645982836964417, 2.0292297513317776},
        {0.94503761748302628, -0.38838842851423699, 2.0225629906707927}};
    struct { double lr, b1, b2, eps, wd; int hat; const double (*want)[3]; const char *name; } cases[] = {
        {0.1, 0.9, 0.999, 1e-8, 0.0, 0, adam, "adam"},
        {0.1, 0.9, 0.999, 1e-8, 0.01, 0, adamw, "adamw"},
        {0.05, 0.5, 0.8, 1e-3, 0.0, 0, adam_b, "adam eps"},
        {0.05, 0.5, 0.8, 1e-3, 0.0, 1, keras_b, "adam keras eps"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        imp_adam opt;
        CHECK_OK(imp_adam_init(&opt, 3, cases[c].lr, cases[c].b1, cases[c].b2, cases[c].eps, cases[c].wd));
        opt.eps_hat = cases[c].hat;
        double p[3] = {1.0, -0.5, 2.0};
        for (int s = 0; s < 3; s++) {
            imp_adam_step(&opt, p, grads[s], opt.lr);
            for (int i = 0; i < 3; i++)
                CHECK_MSG(fabs(p[i] - cases[c].want[s][i]) <= 1e-14, "%s step %d param %d: %.17g want %.17g",
                          cases[c].name, s + 1, i, p[i], cases[c].want[s][i]);
        }
        CHECK(opt.t == 3);
        imp_adam_free(&opt);
    }
    /* first Keras step by hand: p -= lr g / (|g| + eps / sqrt(1 - b2)) */
    CHECK_CLOSE(keras_b[0][2], 2.0 - 0.05 * 1e-3 / (1e-3 + 1e-3 / sqrt(0.2)), 1e-15, 0);

    imp_adam opt;
    CHECK_FAILS(imp_adam_init(&opt, 3, -1.0, 0.9, 0.999, 1e-8, 0), IMP_ERR_INVALID);
    CHECK_FAILS(imp_adam_init(&opt, 3, 1e-3, 1.0, 0.999, 1e-8, 0), IMP_ERR_INVALID);
    CHECK_FAILS(imp_adam_init(&opt, 3, 1e-3, 0.9, 0.999, -1, 0), IMP_ERR_INVALID);
    CHECK_FAILS(imp_adam_init(&opt, 3, 1e-3, 0.9, 0.999, 1e-8, NAN), IMP_ERR_INVALID);
    CHECK_FAILS(imp_adam_init(&opt, 0, 1e-3, 0.9, 0.999, 1e-8, 0), IMP_ERR_INVALID);

    /* gradient-norm clipping (torch.nn.utils.clip_grad_norm_): (3, -4) has norm 5 */
    double g[2] = {3.0, -4.0};
    CHECK(imp_clip_grad_norm(g, 2, 10.0) == 5.0 && g[0] == 3.0 && g[1] == -4.0); /* below: untouched */
    CHECK(imp_clip_grad_norm(g, 2, 0.0) == 5.0 && g[0] == 3.0 && g[1] == -4.0);  /* 0: off */
    CHECK(imp_clip_grad_norm(g, 2, 1.0) == 5.0);
    CHECK_CLOSE(g[0], 3.0 / (5.0 + 1e-6), 1e-15, 0);
    CHECK_CLOSE(g[1], -4.0 / (5.0 + 1e-6), 1e-15, 0);
    CHECK_CLOSE(hypot(g[0], g[1]), 1.0, 1e-6, 0);

    /* cosine schedule: endpoints, midpoint, clamping */
    CHECK(imp_cosine_lr(1e-2, 1e-4, 0, 100) == 1e-2);
    CHECK_CLOSE(imp_cosine_lr(1e-2, 1e-4, 100, 100), 1e-4, 1e-15, 0);
    CHECK_CLOSE(imp_cosine_lr(1e-2, 1e-4, 50, 100), 0.5 * (1e-2 + 1e-4), 1e-14, 0);
    CHECK_CLOSE(imp_cosine_lr(1e-2, 0, 25, 100), 1e-2 * (1 + sqrt(0.5)) / 2, 1e-14, 0);
    CHECK_CLOSE(imp_cosine_lr(1e-2, 1e-4, 500, 100), 1e-4, 1e-15, 0);
    CHECK(imp_cosine_lr(1e-2, 1e-4, 5, 0) == 1e-2);
}

/* Sweep 1 without the network value takes a cheaper path (no output layer,
 * derivative-only last hidden layer for softplus/relu): both sweeps must
 * give the same numbers as with the value, and the cache must refuse an
 * ordinary backward afterwards. */
static void test_gradient_only_path(void)
{
    const imp_activation acts[4] = {IMP_ACT_SOFTPLUS, IMP_ACT_RELU, IMP_ACT_TANH, IMP_ACT_SIGMOID};
    for (int a = 0; a < 4; a++)
        for (int depth = 2; depth <= 3; depth++) {
            int sizes[4] = {3, 9, 7, 1};
            if (depth == 2) sizes[2] = 1;
            imp_mlp m;
            CHECK_OK(imp_mlp_init(&m, depth, sizes, acts[a], IMP_ACT_IDENTITY, a % 2));
            double *p = malloc(m.n_params * sizeof(double));
            imp_rng r;
            imp_rng_seed(&r, 40 + a);
            imp_mlp_init_params(&m, p, &r);
            const int B = 5;
            double x[15], gbar[15], g1[15], g2[15], V[5], dx1[15] = {0}, dx2[15] = {0};
            for (int i = 0; i < 15; i++) x[i] = imp_rng_normal(&r), gbar[i] = imp_rng_normal(&r);
            double *dp1 = calloc(m.n_params, sizeof(double)), *dp2 = calloc(m.n_params, sizeof(double));
            imp_mlp_work *w = imp_mlp_work_new(&m, B);
            imp_mlp_grad_input(&m, p, x, B, g1, V, w);
            imp_mlp_grad_input_vjp(&m, p, gbar, B, dp1, dx1, w);
            imp_mlp_grad_input(&m, p, x, B, g2, NULL, w);
            imp_mlp_grad_input_vjp(&m, p, gbar, B, dp2, dx2, w);
            double err = 0;
            for (int i = 0; i < 15; i++) err = fmax(err, fabs(g1[i] - g2[i]) + fabs(dx1[i] - dx2[i]));
            for (size_t i = 0; i < m.n_params; i++) err = fmax(err, fabs(dp1[i] - dp2[i]));
            CHECK_MSG(err < 1e-12, "gradient-only path differs by %g (act %d, depth %d)", err, a, depth);
            free(p), free(dp1), free(dp2);
            imp_mlp_work_free(w);
        }
}

/* The fused one-hidden-layer sweeps (mlp_fused.c), on every
 * instruction-set version the CPU runs (forced), against the plain
 * reference loops of the general passes on the same work space: sweep 1,
 * sweep 2 with and without
 * parameter gradients, and the Hessian, for every activation and 1..8
 * inputs (the fused limit), at a width that is not a multiple of the
 * vector length. */
static void test_fused_path(void)
{
    imp_rng r;
    imp_rng_seed(&r, 77);
    double worst = 0.0;
    int taken = 0, versions = 0;
    for (int isa = IMP_ISA_BASE; isa <= IMP_ISA_AVX512; isa++) { /* every version this CPU runs, forced */
        if (imp_act_force_isa(isa) != IMP_OK) continue;
        versions++;
        for (int a = 0; a < 5; a++)
            for (int n0 = 1; n0 <= 9; n0 += 4) {
                int sizes[3] = {n0, 37, 1};
                imp_mlp m;
                CHECK_OK(imp_mlp_init(&m, 2, sizes, all_acts[a], IMP_ACT_IDENTITY, a % 2));
                double *p = malloc(m.n_params * sizeof(double));
                random_params(&m, p, &r);
                enum { B = 7 };
                double x[B * 9], gbar[B * 9], g[2][B * 9], dx[2][B * 9], hx[2][B * 9], H[2][B * 81];
                fill_uniform(&r, x, (size_t)(B * n0), -2, 2);
                fill_uniform(&r, gbar, (size_t)(B * n0), -1, 1);
                double *dp[2] = {calloc(m.n_params, sizeof(double)), calloc(m.n_params, sizeof(double))};
                imp_mlp_work *w = imp_mlp_work_new(&m, B);
                /* the table was picked when the work was made, for the forced version */
                CHECK(w->isa == isa && (n0 > 8 || (w->sweep_k && w->sweep_k->isa == isa && !w->sweep_k->single)));
                for (int general = 0; general < 2; general++) {
                    /* general: the plain reference loops of mlp.c */
                    imp_mlp_work_set_reference(w, general);
                    memset(dx[general], 0, sizeof dx[general]);
                    memset(hx[general], 0, sizeof hx[general]);
                    imp_mlp_grad_input(&m, p, x, B, g[general], NULL, w);
                    if (!general) taken += imp_mlp_cache_fused(w);
                    CHECK(general ? !imp_mlp_cache_fused(w) : imp_mlp_cache_fused(w) == (n0 <= 8));
                    imp_mlp_grad_input_vjp(&m, p, gbar, B, dp[general], dx[general], w);
                    imp_mlp_grad_input_vjp(&m, p, gbar, B, NULL, hx[general], w);
                    imp_mlp_hessian_input(&m, p, B, H[general], w);
                }
                size_t nx = (size_t)(B * n0);
                double e = max_rel_diff(g[0], g[1], nx);
                e = fmax(e, max_rel_diff(dp[0], dp[1], m.n_params));
                e = fmax(e, max_rel_diff(dx[0], dx[1], nx));
                e = fmax(e, max_rel_diff(hx[0], hx[1], nx));
                e = fmax(e, max_rel_diff(H[0], H[1], nx * (size_t)n0));
                CHECK_MSG(e < 1e-12, "fused (%s) and reference sweeps differ by %.2e (act %s, %d inputs)",
                          imp_isa_name(isa), e, imp_activation_name(all_acts[a]), n0);
                worst = fmax(worst, e);
                imp_mlp_work_free(w);
                free(p), free(dp[0]), free(dp[1]);
            }
    }
    CHECK_OK(imp_act_force_isa(-1));
    CHECK_MSG(versions >= 1 && taken == 10 * versions, "fused path taken %d times, want %d", taken, 10 * versions);
    printf("fused one-hidden-layer sweeps (%d versions): worst relative difference to the reference %.2e\n",
           versions, worst);
}

/* The single-precision fused sweeps (mlp_fused.c's float table) against
 * the plain reference loops in double (which finite differences check):
 * gradient, sweep 2 with and without parameter
 * gradients, and the Hessian, for every activation, 1..8 inputs, on every
 * instruction-set version the CPU has; within float rounding (2e-5 of the
 * largest entry), not identical (the path is taken), the caller's MXCSR
 * unchanged. Then a saturated network whose products fall into float's
 * subnormal range still gives finite results close to double. */
static unsigned read_mxcsr(void)
{
#if defined(__x86_64__)
    unsigned c;
    __asm__ volatile("stmxcsr %0" : "=m"(c));
    return c;
#else
    return 0;
#endif
}

static double fused_single_case(imp_rng *r, imp_activation act, int n0, double scale, int *taken)
{
    int sizes[3] = {n0, 37, 1};
    imp_mlp m;
    CHECK_OK(imp_mlp_init(&m, 2, sizes, act, IMP_ACT_IDENTITY, 0));
    double *p = malloc(m.n_params * sizeof(double));
    random_params(&m, p, r);
    for (size_t i = 0; i < m.n_params; i++) p[i] *= scale;
    enum { B = 7 };
    double x[B * 9], gbar[B * 9], g[2][B * 9], dx[2][B * 9], hx[2][B * 9], H[2][B * 81];
    fill_uniform(r, x, (size_t)(B * n0), -2, 2);
    fill_uniform(r, gbar, (size_t)(B * n0), -1, 1);
    double *dp[2] = {calloc(m.n_params, sizeof(double)), calloc(m.n_params, sizeof(double))};
    imp_mlp_work *w = imp_mlp_work_new(&m, B);
    const unsigned csr = read_mxcsr();
    for (int single = 0; single < 2; single++) {
        imp_mlp_work_set_reference(w, !single);
        CHECK_OK(imp_mlp_work_set_single(w, single));
        if (single) CHECK(w->sweep_k && w->sweep_k->single && w->sweep_k->isa == imp_act_isa());
        memset(dx[single], 0, sizeof dx[single]);
        memset(hx[single], 0, sizeof hx[single]);
        imp_mlp_grad_input(&m, p, x, B, g[single], NULL, w);
        CHECK(single ? imp_mlp_cache_fused(w) && imp_mlp_cache_single(w) : !w->cache_k);
        *taken += single && imp_mlp_cache_single(w);
        if (single) CHECK_OK(imp_mlp_work_set_single(w, 0)); /* the cache decides sweep 2 */
        imp_mlp_grad_input_vjp(&m, p, gbar, B, dp[single], dx[single], w);
        imp_mlp_grad_input_vjp(&m, p, gbar, B, NULL, hx[single], w);
        imp_mlp_hessian_input(&m, p, B, H[single], w);
    }
    CHECK(read_mxcsr() == csr);
    size_t nx = (size_t)(B * n0);
    double e = max_rel_diff(g[1], g[0], nx);
    e = fmax(e, max_rel_diff(dp[1], dp[0], m.n_params));
    e = fmax(e, max_rel_diff(dx[1], dx[0], nx));
    e = fmax(e, max_rel_diff(hx[1], hx[0], nx));
    e = fmax(e, max_rel_diff(H[1], H[0], nx * (size_t)n0));
    int finite = 1;
    for (size_t i = 0; i < m.n_params; i++) finite &= isfinite(dp[1][i]);
    CHECK(finite);
    imp_mlp_work_free(w);
    free(p), free(dp[0]), free(dp[1]);
    return e;
}

static void test_fused_single_path(void)
{
    static const char *names[] = {"base", "avx2", "avx512"};
    imp_rng r;
    imp_rng_seed(&r, 79);
    double worst = 0.0;
    int taken = 0, cases = 0;
    for (int isa = IMP_ISA_BASE; isa <= IMP_ISA_AVX512; isa++) {
        if (imp_act_force_isa(isa) != IMP_OK) continue;
        for (int a = 0; a < 5; a++)
            for (int n0 = 1; n0 <= 8; n0 += 3) {
                double e = fused_single_case(&r, all_acts[a], n0, 1.0, &taken);
                CHECK_MSG(e < 2e-5, "single fused sweeps (%s) differ from double by %.2e (act %s, %d inputs)",
                          names[isa], e, imp_activation_name(all_acts[a]), n0);
                /* relu and identity have phi'' = 0: sweep 2 rounds only the sums */
                CHECK_MSG(e > 0.0, "single fused sweeps identical to double (act %s): not taken?",
                          imp_activation_name(all_acts[a]));
                worst = fmax(worst, e);
                cases++;
            }
    }
    CHECK_OK(imp_act_force_isa(-1));
    CHECK(taken == cases && cases >= 15);
    /* weights x 40: most units saturated, sigmoid' down to exp(-60) */
    double e_sat = fused_single_case(&r, IMP_ACT_SOFTPLUS, 1, 40.0, &taken);
    CHECK_MSG(e_sat < 1e-4, "saturated single fused sweeps differ from double by %.2e", e_sat);
    printf("single-precision fused sweeps: %d cases, worst relative difference to double %.2e (saturated %.2e)\n",
           cases, worst, e_sat);
}

/* The fused one-hidden-layer forward and backward against the general
 * passes: outputs, parameter and input gradients, for hidden and output
 * activations, both last-bias settings, 1..8 inputs and outputs; and each
 * backward after the other forward (the caches are the same). */
/* The fused forward/backward tables (the ResNet baselines' one hidden
 * layer), on every version the CPU runs, forced before the work is made:
 * the work takes that version's table, and each mix of fused and general
 * forward and backward agrees with the plain reference loops. The table is
 * the work's, not the process's: forcing another version afterwards leaves
 * its results bit-identical. */
static void test_fused_forward_backward(void)
{
    imp_rng r;
    imp_rng_seed(&r, 78);
    double worst = 0.0;
    int cases = 0, isa_runs = 0, pinned = 0, versions_differ = 0;
    const imp_activation outs[3] = {IMP_ACT_IDENTITY, IMP_ACT_SIGMOID, IMP_ACT_TANH};
    for (int isa = IMP_ISA_BASE; isa <= IMP_ISA_AVX512; isa++) {
        if (imp_act_force_isa(isa) != IMP_OK) continue;
        isa_runs++;
        for (int a = 0; a < 5; a++)
            for (int o = 0; o < 3; o++)
                for (int n0 = 1; n0 <= 8; n0 += 7)
                    for (int n2 = 1; n2 <= 8; n2 += 3) {
                        int sizes[3] = {n0, 37, n2};
                        imp_mlp m;
                        CHECK_OK(imp_mlp_init(&m, 2, sizes, all_acts[a], outs[o], (a + o) % 2));
                        double *p = malloc(m.n_params * sizeof(double));
                        random_params(&m, p, &r);
                        enum { B = 7 };
                        double x[B * 8], dy[B * 8], y[6][B * 8], dx[6][B * 8];
                        double *dp[6];
                        fill_uniform(&r, x, (size_t)(B * n0), -2, 2);
                        fill_uniform(&r, dy, (size_t)(B * n2), -1, 1);
                        imp_mlp_work *w = imp_mlp_work_new(&m, B);
                        CHECK(w && w->pass_k == imp_mlp_fused_pass(isa) && w->pass_k->isa == isa &&
                              !w->pass_k->single);
                        /* k < 4: bit 0 = fused forward, bit 1 = fused backward (else the
                         * general path on the reference loops); 4: the reference alone;
                         * 5: fused both, with another version forced */
                        for (int k = 0; k < 6; k++) {
                            dp[k] = calloc(m.n_params, sizeof(double));
                            memset(dx[k], 0, sizeof dx[k]);
                            const int fwd = k == 5 || (k < 4 && (k & 1)), bwd = k == 5 || (k < 4 && (k >> 1));
                            if (k == 5) CHECK_OK(imp_act_force_isa(isa == IMP_ISA_BASE ? imp_isa_choose(NULL, imp_isa_cpu()) : IMP_ISA_BASE));
                            imp_mlp_work_set_reference(w, !fwd);
                            imp_mlp_forward(&m, p, x, B, y[k], w);
                            if (k == 5) CHECK(w->cache_k == imp_mlp_fused_pass(isa) && w->cache_k->isa == isa);
                            imp_mlp_work_set_reference(w, !bwd);
                            imp_mlp_backward(&m, p, dy, B, dp[k], dx[k], w);
                            if (k == 5) CHECK_OK(imp_act_force_isa(isa));
                        }
                        imp_mlp_work_set_reference(w, 0);
                        CHECK(w->pass_k == imp_mlp_fused_pass(isa));
                        for (int k = 0; k < 4; k++) {
                            double e = max_rel_diff(y[k], y[4], (size_t)(B * n2));
                            e = fmax(e, max_rel_diff(dp[k], dp[4], m.n_params));
                            e = fmax(e, max_rel_diff(dx[k], dx[4], (size_t)(B * n0)));
                            CHECK_MSG(e < 1e-12,
                                      "fused forward/backward (%d, %s) differ from the reference by %.2e (act %s, "
                                      "out %s, %d->%d)",
                                      k, imp_isa_name(isa), e, imp_activation_name(all_acts[a]),
                                      imp_activation_name(outs[o]), n0, n2);
                            worst = fmax(worst, e);
                        }
                        const size_t ny = (size_t)(B * n2) * sizeof(double), nx = (size_t)(B * n0) * sizeof(double);
                        CHECK_MSG(memcmp(y[5], y[3], ny) == 0 && memcmp(dx[5], dx[3], nx) == 0 &&
                                      memcmp(dp[5], dp[3], m.n_params * sizeof(double)) == 0,
                                  "fused forward/backward of a %s work changed with the process's version",
                                  imp_isa_name(isa));
                        /* how often a work made under the other version computes otherwise (in
                         * optimised builds: FMA contraction and vector widths differ) */
                        const int other = isa == IMP_ISA_BASE ? imp_isa_choose(NULL, imp_isa_cpu()) : IMP_ISA_BASE;
                        CHECK_OK(imp_act_force_isa(other));
                        imp_mlp_work *wo = imp_mlp_work_new(&m, B);
                        CHECK_OK(imp_act_force_isa(isa));
                        double yo[B * 8];
                        imp_mlp_forward(&m, p, x, B, yo, wo);
                        versions_differ += memcmp(yo, y[3], ny) != 0;
                        imp_mlp_work_free(wo);
                        pinned++;
                        imp_mlp_work_free(w);
                        free(p);
                        for (int k = 0; k < 6; k++) free(dp[k]);
                        cases++;
                    }
    }
    CHECK_OK(imp_act_force_isa(-1));
    CHECK(isa_runs >= 1 && cases == isa_runs * 5 * 3 * 2 * 3 && pinned == cases);
    printf("fused one-hidden-layer forward/backward: %d networks on %d versions, worst relative difference to the "
           "reference %.2e; outputs of another version's work differ in %d\n",
           cases, isa_runs, worst, versions_differ);
}


/* The single-precision path (mlp_single.c) against the double path, which
 * the tests above check by finite differences: outputs, parameter and input
 * gradients within float rounding (~1e-6 relative to the largest entry),
 * on the contact network's shape (wide middle layer between thin ones), a
 * smooth net (activations through the double kernels), a net whose first
 * layer is wide, and one made of wide layers only. Then finite differences
 * of the single path itself (smooth nets; steps large against float
 * rounding), and a backward that follows a single forward after the flag
 * was switched off must still match that forward's cache. */
static double single_obj(const imp_mlp *m, const double *p, const double *x, int B, const double *c,
                         imp_mlp_work *w)
{
    double y[64 * 8];
    imp_mlp_forward(m, p, x, B, y, w);
    double s = 0.0;
    for (int i = 0; i < B * m->sizes[m->n_layers]; i++) s += c[i] * y[i];
    return s;
}

static void test_single_path(void)
{
    static const struct {
        int L, sizes[5];
        imp_activation hid, out;
        int last_bias, smooth;
    } nets[] = {
        {3, {6, 100, 100, 2}, IMP_ACT_RELU, IMP_ACT_SIGMOID, 1, 0},
        {3, {3, 40, 30, 2}, IMP_ACT_TANH, IMP_ACT_IDENTITY, 0, 1},
        {2, {9, 20, 1}, IMP_ACT_SOFTPLUS, IMP_ACT_SIGMOID, 1, 1},
        {4, {5, 12, 12, 12, 6}, IMP_ACT_RELU, IMP_ACT_IDENTITY, 1, 0},
        /* a thin first layer wider than IMP_MLP_THIN_COPY_MAX: its W^T is read strided */
        {3, {2, 1030, 8, 1}, IMP_ACT_TANH, IMP_ACT_SIGMOID, 1, 0},
    };
    imp_rng r;
    imp_rng_seed(&r, 4242);
    double worst = 0.0, worst_fd = 0.0;
    for (size_t k = 0; k < sizeof nets / sizeof nets[0]; k++) {
        imp_mlp m;
        CHECK_OK(imp_mlp_init(&m, nets[k].L, nets[k].sizes, nets[k].hid, nets[k].out, nets[k].last_bias));
        enum { B = 13 };
        const int n0 = m.sizes[0], nL = m.sizes[m.n_layers];
        double *p = malloc(m.n_params * sizeof(double));
        random_params(&m, p, &r);
        double x[B * 9], dy[B * 6], y[2][B * 6], dx[2][B * 9];
        fill_uniform(&r, x, (size_t)(B * n0), -1.5, 1.5);
        fill_uniform(&r, dy, (size_t)(B * nL), -1, 1);
        double *dp[2] = {calloc(m.n_params, sizeof(double)), calloc(m.n_params, sizeof(double))};
        imp_mlp_work *w = imp_mlp_work_new(&m, B);
        /* against the double path on the plain reference loops; one row (it
         * takes other branches of the thin products), then all (kept for the
         * finite differences below) */
        for (int Bc = 1; Bc <= B; Bc = Bc == 1 ? B : B + 1) {
            for (int single = 0; single < 2; single++) {
                memset(dp[single], 0, m.n_params * sizeof(double));
                imp_mlp_work_set_reference(w, !single);
                CHECK_OK(imp_mlp_work_set_single(w, single));
                memset(dx[single], 0, sizeof dx[single]);
                imp_mlp_forward(&m, p, x, Bc, y[single], w);
                CHECK(imp_mlp_cache_single(w) == single);
                if (single) CHECK_OK(imp_mlp_work_set_single(w, 0)); /* the cache decides the backward */
                imp_mlp_backward(&m, p, dy, Bc, dp[single], dx[single], w);
            }
            imp_mlp_work_set_reference(w, 0);
            double e = max_rel_diff(y[1], y[0], (size_t)(Bc * nL));
            e = fmax(e, max_rel_diff(dp[1], dp[0], m.n_params));
            e = fmax(e, max_rel_diff(dx[1], dx[0], (size_t)(Bc * n0)));
            CHECK_MSG(e < 2e-5, "single path differs from double by %.2e (net %zu, %d rows)", e, k, Bc);
            CHECK_MSG(e > 0.0, "single path identical to double (net %zu): not taken?", k);
            worst = fmax(worst, e);
        }
        if (nets[k].smooth) {
            /* central differences of the single forward: 40 parameters and all inputs */
            CHECK_OK(imp_mlp_work_set_single(w, 1));
            const double h = 1e-2;
            double num = 0.0, den = 1e-300;
            for (int t = 0; t < 40 + B * n0; t++) {
                double *v = t < 40 ? &p[imp_rng_next(&r) % m.n_params] : &x[t - 40];
                double an = t < 40 ? dp[1][v - p] : dx[1][t - 40];
                double v0 = *v;
                *v = v0 + h;
                double fp = single_obj(&m, p, x, B, dy, w);
                *v = v0 - h;
                double fm = single_obj(&m, p, x, B, dy, w);
                *v = v0;
                num = fmax(num, fabs((fp - fm) / (2 * h) - an));
                den = fmax(den, fabs(an));
            }
            CHECK_MSG(num / den < 2e-3, "single path: finite differences differ by %.2e (net %zu)", num / den, k);
            worst_fd = fmax(worst_fd, num / den);
        }
        imp_mlp_work_free(w);
        free(p), free(dp[0]), free(dp[1]);
    }
    CHECK(imp_mlp_work_set_single(NULL, 1) == IMP_ERR_INVALID);

    /* a follower (imp_mlp_work_single_follow) reuses the leader's rounded
     * weights: bit-identical outputs and gradients to rounding its own; a
     * follower whose leader saw other parameters computes with those (the
     * caller's contract), which shows the weights really are shared */
    {
        int sizes[4] = {2, 24, 24, 1};
        imp_mlp m;
        CHECK_OK(imp_mlp_init(&m, 3, sizes, IMP_ACT_RELU, IMP_ACT_SIGMOID, 1));
        enum { B = 5 };
        double *p = malloc(m.n_params * sizeof(double)), *p2 = malloc(m.n_params * sizeof(double));
        random_params(&m, p, &r);
        random_params(&m, p2, &r);
        double x[B * 2], dy[B], y[3][B], dx[3][B * 2];
        fill_uniform(&r, x, B * 2, -1, 1);
        fill_uniform(&r, dy, B, -1, 1);
        double *dp[3];
        imp_mlp_work *lead = imp_mlp_work_new(&m, B), *own = imp_mlp_work_new(&m, B), *fol = imp_mlp_work_new(&m, B);
        CHECK_FAILS(imp_mlp_work_single_follow(fol, lead), IMP_ERR_INVALID); /* not single yet */
        CHECK_OK(imp_mlp_work_set_single(lead, 1));
        CHECK_OK(imp_mlp_work_set_single(own, 1));
        CHECK_OK(imp_mlp_work_set_single(fol, 1));
        CHECK_FAILS(imp_mlp_work_single_follow(fol, fol), IMP_ERR_INVALID);
        CHECK_FAILS(imp_mlp_work_single_follow(NULL, lead), IMP_ERR_INVALID);
        CHECK_OK(imp_mlp_work_single_follow(fol, lead));
        CHECK_FAILS(imp_mlp_work_single_follow(lead, fol), IMP_ERR_INVALID); /* fol follows */
        imp_mlp_work *works[3] = {lead, own, fol};
        for (int k = 0; k < 3; k++) {
            dp[k] = calloc(m.n_params, sizeof(double));
            memset(dx[k], 0, sizeof dx[k]);
            imp_mlp_forward(&m, p, x, B, y[k], works[k]);
            imp_mlp_backward(&m, p, dy, B, dp[k], dx[k], works[k]);
        }
        CHECK(memcmp(y[1], y[2], sizeof y[1]) == 0 && memcmp(dx[1], dx[2], sizeof dx[1]) == 0);
        CHECK(memcmp(dp[1], dp[2], m.n_params * sizeof(double)) == 0);
        imp_mlp_forward(&m, p2, x, B, y[0], lead); /* the leader moves on */
        imp_mlp_forward(&m, p, x, B, y[2], fol);
        CHECK(memcmp(y[1], y[2], sizeof y[1]) != 0);
        CHECK_OK(imp_mlp_work_single_follow(fol, NULL)); /* rounds its own again */
        imp_mlp_forward(&m, p, x, B, y[2], fol);
        CHECK(memcmp(y[1], y[2], sizeof y[1]) == 0);
        int other[3] = {2, 24, 1};
        imp_mlp m2;
        CHECK_OK(imp_mlp_init(&m2, 2, other, IMP_ACT_RELU, IMP_ACT_SIGMOID, 1));
        imp_mlp_work *w2 = imp_mlp_work_new(&m2, B);
        CHECK_OK(imp_mlp_work_set_single(w2, 1));
        CHECK_FAILS(imp_mlp_work_single_follow(w2, lead), IMP_ERR_SHAPE);
        imp_mlp_work_free(w2);
        for (int k = 0; k < 3; k++) imp_mlp_work_free(works[k]), free(dp[k]);
        free(p), free(p2);
    }
    printf("single-precision wide layers: worst relative difference to double %.2e, to finite differences %.2e\n",
           worst, worst_fd);
}

/* Weights rounded once (imp_mlp_work_single_fix), on the version in use:
 * at batches up to IMP_MLP_THIN the matrix-vector kernel, against the plain
 * reference loops in double (within float rounding) and against the
 * rounding-per-forward single path (close, not identical: another order of
 * summation, so the kernel is taken); above it bit-identical to the single
 * path. Later params are ignored until the weights are released. Shapes:
 * the contact network, and odd sizes (odd k, every block width, tails). */
static void test_single_fixed(void)
{
    static const struct {
        int L, sizes[4];
        imp_activation hid, out;
    } nets[] = {
        {3, {2, 100, 100, 1}, IMP_ACT_RELU, IMP_ACT_SIGMOID},
        {3, {5, 37, 19, 3}, IMP_ACT_TANH, IMP_ACT_IDENTITY},
        {2, {1, 70, 17}, IMP_ACT_SOFTPLUS, IMP_ACT_SIGMOID},
    };
    imp_rng r;
    imp_rng_seed(&r, 777);
    double worst = 0.0;
    for (size_t k = 0; k < sizeof nets / sizeof nets[0]; k++) {
        imp_mlp m;
        CHECK_OK(imp_mlp_init(&m, nets[k].L, nets[k].sizes, nets[k].hid, nets[k].out, 1));
        enum { BM = 6 };
        const int n0 = m.sizes[0], nL = m.sizes[m.n_layers];
        double *p = malloc(m.n_params * sizeof(double)), *p2 = malloc(m.n_params * sizeof(double));
        random_params(&m, p, &r);
        random_params(&m, p2, &r);
        double x[BM * 5], yr[BM * 17], ys[BM * 17], yf[BM * 17], y2[BM * 17];
        fill_uniform(&r, x, (size_t)(BM * n0), -1.5, 1.5);
        imp_mlp_work *ref = imp_mlp_work_new(&m, BM), *sw = imp_mlp_work_new(&m, BM), *fw = imp_mlp_work_new(&m, BM);
        imp_mlp_work_set_reference(ref, 1);
        CHECK_FAILS(imp_mlp_work_single_fix(fw, p), IMP_ERR_INVALID); /* not single yet */
        CHECK_FAILS(imp_mlp_work_single_fix(NULL, p), IMP_ERR_INVALID);
        CHECK_OK(imp_mlp_work_set_single(sw, 1));
        CHECK_OK(imp_mlp_work_set_single(fw, 1));
        CHECK_OK(imp_mlp_work_single_follow(sw, fw));
        CHECK_FAILS(imp_mlp_work_single_fix(sw, p), IMP_ERR_INVALID); /* follows a leader */
        CHECK_OK(imp_mlp_work_single_follow(sw, NULL));
        CHECK_OK(imp_mlp_work_single_fix(fw, p));
        CHECK_FAILS(imp_mlp_work_single_follow(fw, sw), IMP_ERR_INVALID); /* fixed weights of its own */
        for (int B = 1; B <= BM; B++) {
            const size_t n = (size_t)B * nL;
            imp_mlp_forward(&m, p, x, B, yr, ref);
            imp_mlp_forward(&m, p, x, B, ys, sw);
            imp_mlp_forward(&m, p2, x, B, yf, fw); /* p2 ignored: the weights of p */
            double e = max_rel_diff(yf, yr, n);
            CHECK_MSG(e < 2e-5, "fixed single weights: %.2e from the double reference (net %zu, B %d)", e, k, B);
            worst = fmax(worst, e);
            if (B <= IMP_MLP_THIN)
                CHECK_MSG(memcmp(yf, ys, n * sizeof(double)) != 0, "fixed weights (net %zu, B %d): kernel not taken", k, B);
            else
                CHECK_MSG(memcmp(yf, ys, n * sizeof(double)) == 0, "fixed weights (net %zu, B %d): not the single path", k, B);
        }
        CHECK_OK(imp_mlp_work_single_fix(fw, NULL)); /* round per forward again */
        imp_mlp_forward(&m, p2, x, 1, y2, fw);
        imp_mlp_forward(&m, p, x, 1, yf, fw);
        CHECK(memcmp(y2, yf, (size_t)nL * sizeof(double)) != 0);
        imp_mlp_work_free(ref), imp_mlp_work_free(sw), imp_mlp_work_free(fw);
        free(p), free(p2);
    }
    printf("fixed single weights (%s): worst relative difference to the double reference %.2e\n",
           imp_isa_name(imp_act_isa()), worst);
}

/* The float fused sweeps of a potential with weights rounded once
 * (imp_mlp_work_single_fix), on the version in use: sweep 1 (the force)
 * and sweep 2 bit-identical to rounding per call with the same params,
 * later params ignored, and rounding per call again once released. One and
 * three inputs (the ball's and a 3-D potential), softplus and tanh. */
static void test_single_fixed_sweeps(void)
{
    static const struct {
        int n0;
        imp_activation hid;
    } nets[] = {{1, IMP_ACT_SOFTPLUS}, {3, IMP_ACT_TANH}, {3, IMP_ACT_SOFTPLUS}};
    imp_rng r;
    imp_rng_seed(&r, 4242);
    for (size_t k = 0; k < sizeof nets / sizeof nets[0]; k++) {
        const int sizes[3] = {nets[k].n0, 67, 1};
        imp_mlp m;
        CHECK_OK(imp_mlp_init(&m, 2, sizes, nets[k].hid, IMP_ACT_IDENTITY, 1));
        enum { B = 3 };
        const int n0 = m.sizes[0];
        double *p = malloc(m.n_params * sizeof(double)), *p2 = malloc(m.n_params * sizeof(double));
        double *d[2] = {calloc(m.n_params, sizeof(double)), calloc(m.n_params, sizeof(double))};
        random_params(&m, p, &r);
        random_params(&m, p2, &r);
        double x[B * 3], gbar[B * 3], g[2][B * 3] = {{0}}, dx[2][B * 3] = {{0}};
        fill_uniform(&r, x, (size_t)(B * n0), -1.5, 1.5);
        fill_uniform(&r, gbar, (size_t)(B * n0), -1.0, 1.0);
        imp_mlp_work *sw = imp_mlp_work_new(&m, B), *fw = imp_mlp_work_new(&m, B);
        CHECK_OK(imp_mlp_work_set_single(sw, 1));
        CHECK_OK(imp_mlp_work_set_single(fw, 1));
        CHECK_OK(imp_mlp_work_single_fix(fw, p));
        imp_mlp_grad_input(&m, p, x, B, g[0], NULL, sw);
        imp_mlp_grad_input(&m, p2, x, B, g[1], NULL, fw); /* p2 ignored: the weights of p */
        imp_mlp_grad_input_vjp(&m, p, gbar, B, d[0], dx[0], sw);
        imp_mlp_grad_input_vjp(&m, p2, gbar, B, d[1], dx[1], fw);
        CHECK_MSG(memcmp(g[0], g[1], sizeof g[0]) == 0, "fixed sweep 1 (net %zu): not the per-call rounding", k);
        CHECK_MSG(memcmp(dx[0], dx[1], sizeof dx[0]) == 0, "fixed sweep 2 (net %zu): dx differs", k);
        CHECK_MSG(memcmp(d[0], d[1], m.n_params * sizeof(double)) == 0, "fixed sweep 2 (net %zu): dparams differ", k);
        CHECK_OK(imp_mlp_work_single_fix(fw, NULL)); /* round per call again */
        imp_mlp_grad_input(&m, p2, x, B, g[1], NULL, fw);
        CHECK_MSG(memcmp(g[0], g[1], sizeof g[0]) != 0, "released fixed sweep (net %zu): still the weights of p", k);
        imp_mlp_work_free(sw), imp_mlp_work_free(fw);
        free(p), free(p2), free(d[0]), free(d[1]);
    }
}

/* Float general products (imp_mlp_work_set_gemm_single) against the double
 * passes on a CHNN-shaped network (every pass: forward, backward, sweep 1,
 * sweep 2, Hessian), on every instruction-set version the CPU has: within
 * float rounding of the products, not identical (the path is taken), and
 * the thin first layer's products stay double. */
static void test_gemm_single(void)
{
    static const char *names[] = {"base", "avx2", "avx512"};
    imp_rng r;
    imp_rng_seed(&r, 3131);
    imp_mlp m;
    int sizes[5] = {6, 48, 40, 36, 1};
    CHECK_OK(imp_mlp_init(&m, 4, sizes, IMP_ACT_TANH, IMP_ACT_IDENTITY, 1));
    enum { B = 23 };
    double *p = malloc(m.n_params * sizeof(double));
    random_params(&m, p, &r);
    double x[B * 6], gbar[B * 6], dy[B], y[2][B], g[2][B * 6], V[2][B], dx[2][B * 6], hx[2][B * 6], H[2][B * 36];
    fill_uniform(&r, x, B * 6, -1.5, 1.5);
    fill_uniform(&r, gbar, B * 6, -1, 1);
    fill_uniform(&r, dy, B, -1, 1);
    double *dp[2] = {malloc(m.n_params * sizeof(double)), malloc(m.n_params * sizeof(double))};
    double *dq[2] = {malloc(m.n_params * sizeof(double)), malloc(m.n_params * sizeof(double))};
    int ran = 0;
    for (int isa = IMP_ISA_BASE; isa <= IMP_ISA_AVX512; isa++) {
        if (imp_act_force_isa(isa) != IMP_OK) continue;
        ran++;
        imp_mlp_work *w = imp_mlp_work_new(&m, B);
        for (int single = 0; single < 2; single++) {
            CHECK_OK(imp_mlp_work_set_gemm_single(w, single));
            memset(dp[single], 0, m.n_params * sizeof(double));
            memset(dq[single], 0, m.n_params * sizeof(double));
            memset(dx[single], 0, sizeof dx[single]);
            memset(hx[single], 0, sizeof hx[single]);
            double f0 = imp_nn_gemm_flops();
            imp_mlp_forward(&m, p, x, B, y[single], w);
            imp_mlp_backward(&m, p, dy, B, dp[single], dx[single], w);
            imp_mlp_grad_input(&m, p, x, B, g[single], V[single], w);
            imp_mlp_grad_input_vjp(&m, p, gbar, B, dq[single], hx[single], w);
            imp_mlp_hessian_input(&m, p, B, H[single], w);
            CHECK(imp_nn_gemm_flops() > f0); /* the general products ran */
        }
        double e = max_rel_diff(y[1], y[0], B);
        e = fmax(e, max_rel_diff(dp[1], dp[0], m.n_params));
        e = fmax(e, max_rel_diff(dx[1], dx[0], B * 6));
        e = fmax(e, max_rel_diff(g[1], g[0], B * 6));
        e = fmax(e, max_rel_diff(V[1], V[0], B));
        e = fmax(e, max_rel_diff(dq[1], dq[0], m.n_params));
        e = fmax(e, max_rel_diff(hx[1], hx[0], B * 6));
        e = fmax(e, max_rel_diff(H[1], H[0], B * 36));
        CHECK_MSG(e < 2e-5, "float products (%s) differ from double by %.2e", names[isa], e);
        CHECK_MSG(e > 1e-12, "float products (%s) identical to double: not taken?", names[isa]);
        printf("float general products (%s): worst relative difference to double %.2e\n", names[isa], e);
        imp_mlp_work_free(w);
    }
    CHECK_OK(imp_act_force_isa(-1));
    CHECK(ran >= 1);
    CHECK(imp_mlp_work_set_gemm_single(NULL, 1) == IMP_ERR_INVALID);
    free(p);
    for (int k = 0; k < 2; k++) free(dp[k]), free(dq[k]);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
/* Whether this CPU and OS run a version, from cpuid and XCR0 directly
 * (not through the library's or the compiler's feature test): AVX2 needs
 * AVX2, FMA and the YMM state enabled by the OS; AVX-512 needs AVX-512F,
 * FMA and the opmask and ZMM states. */
static int cpuid_runs(int isa)
{
    unsigned a, b, c, d;
    if (isa == IMP_ISA_BASE) return 1;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 12) & 1) || !((c >> 27) & 1)) return 0; /* FMA, OSXSAVE */
    unsigned xlo, xhi;
    __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    (void)xhi;
    if ((xlo & 6u) != 6u || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    if (isa == IMP_ISA_AVX2) return (b >> 5) & 1;
    return isa == IMP_ISA_AVX512 && ((b >> 16) & 1) && (xlo & 0xe0u) == 0xe0u;
}
#endif

/* The dispatch never picks a version the CPU cannot run: imp_isa_choose on
 * made-up CPUs for every request IMPULSE_ISA can hold, then the choice on
 * this machine (the process's and the one a new work's kernel tables are
 * compiled for) against cpuid, and every version the tests force. */
static void test_isa_dispatch(void)
{
    static const char *requests[] = {NULL, "", "auto", "base", "avx2", "avx512", "AVX2", "sse9"};
    const unsigned B1 = 1u << IMP_ISA_BASE, A2 = 1u << IMP_ISA_AVX2, A5 = 1u << IMP_ISA_AVX512;
    const unsigned cpus[] = {B1, B1 | A2, B1 | A5, B1 | A2 | A5};
    for (size_t c = 0; c < sizeof cpus / sizeof cpus[0]; c++)
        for (size_t q = 0; q < sizeof requests / sizeof requests[0]; q++) {
            int isa = imp_isa_choose(requests[q], cpus[c]);
            CHECK_MSG(isa >= IMP_ISA_BASE && isa <= IMP_ISA_AVX512 && (cpus[c] & 1u << isa),
                      "request '%s' on cpu mask %u picked version %d, which that CPU lacks",
                      requests[q] ? requests[q] : "(unset)", cpus[c], isa);
        }
    CHECK(imp_isa_choose(NULL, B1 | A2 | A5) == IMP_ISA_AVX512);
    CHECK(imp_isa_choose(NULL, B1 | A2) == IMP_ISA_AVX2);
    CHECK(imp_isa_choose("avx512", B1 | A2) == IMP_ISA_AVX2);
    CHECK(imp_isa_choose("avx2", B1 | A2 | A5) == IMP_ISA_AVX2);
    CHECK(imp_isa_choose("avx2", B1 | A5) == IMP_ISA_BASE);
    CHECK(imp_isa_choose("base", B1 | A2 | A5) == IMP_ISA_BASE);
    const int isa = imp_act_isa();
    CHECK(imp_isa_cpu() & 1u << isa);
#if defined(__x86_64__) && defined(__GNUC__)
    if (isa == IMP_ISA_AVX512) CHECK(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma"));
    if (isa == IMP_ISA_AVX2) CHECK(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
#else
    CHECK(isa == IMP_ISA_BASE);
#endif
    CHECK(strcmp(imp_nn_isa(), imp_isa_name(isa)) == 0);
    int sizes[3] = {1, 16, 1};
    imp_mlp m;
    CHECK_OK(imp_mlp_init(&m, 2, sizes, IMP_ACT_SOFTPLUS, IMP_ACT_IDENTITY, 1));
    imp_mlp_work *w = imp_mlp_work_new(&m, 4);
    CHECK(w && w->sweep_k && w->isa == isa && w->sweep_k->isa == isa);
#if defined(__x86_64__) && defined(__GNUC__)
    CHECK_MSG(cpuid_runs(isa) && cpuid_runs(w->sweep_k->isa), "dispatch picked %s, which cpuid says this CPU cannot run",
              imp_isa_name(isa));
    for (int v = IMP_ISA_BASE; v <= IMP_ISA_AVX512; v++) {
        int forced = imp_act_force_isa(v) == IMP_OK;
        CHECK_MSG(!forced || cpuid_runs(v), "version %s could be forced but cpuid says the CPU lacks it",
                  imp_isa_name(v));
        /* the versions the CPU runs are all tested (when the build has them) */
        CHECK(forced || !cpuid_runs(v) || !IMP_HAVE_ISA_VERSIONS);
    }
    CHECK_OK(imp_act_force_isa(-1));
#endif
    imp_mlp_work_free(w);
    printf("kernel version in use: %s\n", imp_nn_isa());
}

int main(void)
{
    imp_blas_init();
    test_isa_dispatch();
    test_gemm_single();
    for (int isa = IMP_ISA_BASE; isa <= IMP_ISA_AVX512; isa++) /* every version this CPU runs */
        if (imp_act_force_isa(isa) == IMP_OK) test_single_path(), test_single_fixed(), test_single_fixed_sweeps();
    CHECK_OK(imp_act_force_isa(-1));
    test_single_path();
    test_fused_path();
    test_fused_single_path();
    test_fused_forward_backward();
    test_gradient_only_path();
    test_init_and_l2();
    test_activation_extremes();
    test_activation_accuracy();
    test_backward_fd();
    test_sweeps_fd();
    test_hessian();
    test_complex_step();
    test_blas_vs_reference();
    test_fixed_rows();
    test_strided();
    test_misuse();
    test_losses();
    test_adam();
    TEST_MAIN_END();
}
