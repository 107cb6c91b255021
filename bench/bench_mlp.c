/* Timing of the MLP kernels at the shapes the models use (not run by ctest).
 *
 * Build and run from the repository root after scripts/build.sh:
 *   gcc -O2 -std=c11 -Iinclude -Isrc bench/bench_mlp.c build/libimpulse.a \
 *       -lopenblas -lmatio -lz -lpthread -lm -o build/bench_mlp
 *   nice ./build/bench_mlp
 * (it sets OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS itself and re-executes:
 * imp_blas_env_fixup, include/impulse/core.h). Prints one line per (batch, depth, activation): milliseconds
 * per call of forward, forward+backward, sweep 1, sweep 2, and the achieved
 * GFLOP/s of sweep 1 + sweep 2 counting only the matrix products. */
#include "impulse/nn.h"

#include <stdio.h>
#include <stdlib.h>

static double gemm_flops(const imp_mlp *m, int B, int n_products_per_layer)
{
    double f = 0.0;
    for (int l = 0; l < m->n_layers; l++) f += 2.0 * B * m->sizes[l] * m->sizes[l + 1];
    return f * n_products_per_layer;
}

enum { PASS_FWD, PASS_FWD_BWD, PASS_SWEEP1, PASS_SWEEP2 };

typedef struct {
    const imp_mlp *m;
    const double *p, *x, *gbar, *ones;
    double *dp, *dx, *g, *V;
    int B;
    imp_mlp_work *w;
} bench_case;

static void run(const bench_case *c, int pass)
{
    switch (pass) {
    case PASS_FWD: imp_mlp_forward(c->m, c->p, c->x, c->B, c->V, c->w); break;
    case PASS_FWD_BWD:
        imp_mlp_forward(c->m, c->p, c->x, c->B, c->V, c->w);
        imp_mlp_backward(c->m, c->p, c->ones, c->B, c->dp, NULL, c->w);
        break;
    case PASS_SWEEP1: imp_mlp_grad_input(c->m, c->p, c->x, c->B, c->g, c->V, c->w); break;
    case PASS_SWEEP2: imp_mlp_grad_input_vjp(c->m, c->p, c->gbar, c->B, c->dp, c->dx, c->w); break;
    }
}

/* Best of 7 trials: the machine is shared, the minimum is the kernel. */
static double time_pass(const bench_case *c, int pass, int reps)
{
    double best = 1e30;
    for (int trial = 0; trial < 7; trial++) {
        double t0 = imp_time_now();
        for (int r = 0; r < reps; r++) run(c, pass);
        double t = (imp_time_now() - t0) / reps;
        if (t < best) best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    (void)argc;
    imp_blas_env_fixup(argv); /* SkylakeX kernels, no idle OpenBLAS pool (include/impulse/core.h) */
    imp_blas_init();
    printf("OpenBLAS core: %s (best of 7 trials, ms per call)\n", imp_blas_corename());
    printf("%5s %3s %7s %-9s %9s %9s %9s %9s %9s\n", "B", "in", "hidden", "act", "fwd", "fwd+bwd",
           "sweep1", "sweep2", "GFLOP/s");
    const int batches[] = {32, 200}, inputs[] = {2, 12};
    const imp_activation acts[] = {IMP_ACT_TANH, IMP_ACT_SOFTPLUS};
    for (int bi = 0; bi < 2; bi++)
        for (int ii = 0; ii < 2; ii++)
            for (int depth = 1; depth <= 3; depth++)
                for (int ai = 0; ai < 2; ai++) {
                    int B = batches[bi], in = inputs[ii], sizes[IMP_MLP_MAX_LAYERS + 1];
                    sizes[0] = in;
                    for (int l = 1; l <= depth; l++) sizes[l] = 500;
                    sizes[depth + 1] = 1;
                    imp_mlp m;
                    if (imp_mlp_init(&m, depth + 1, sizes, acts[ai], IMP_ACT_IDENTITY, 1) != IMP_OK) return 1;
                    double *p = malloc(m.n_params * sizeof(double)), *dp = calloc(m.n_params, sizeof(double));
                    double *x = malloc((size_t)B * in * sizeof(double)), *g = malloc((size_t)B * in * sizeof(double));
                    double *gbar = malloc((size_t)B * in * sizeof(double)), *dx = calloc((size_t)B * in, sizeof(double));
                    double *ones = malloc((size_t)B * sizeof(double)), *V = malloc((size_t)B * sizeof(double));
                    imp_rng rng;
                    imp_rng_seed(&rng, 1);
                    imp_mlp_init_params(&m, p, &rng);
                    for (int i = 0; i < B * in; i++) x[i] = imp_rng_uniform_range(&rng, -1, 1), gbar[i] = 0.1;
                    for (int i = 0; i < B; i++) ones[i] = 1.0;
                    imp_mlp_work *w = imp_mlp_work_new(&m, B);
                    bench_case c = {&m, p, x, gbar, ones, dp, dx, g, V, B, w};
                    int reps = (int)(2e8 / gemm_flops(&m, B, 6)) + 1;
                    double t_fwd = time_pass(&c, PASS_FWD, reps);
                    double t_fb = time_pass(&c, PASS_FWD_BWD, reps);
                    double t_s1 = time_pass(&c, PASS_SWEEP1, reps);
                    double t_s2 = time_pass(&c, PASS_SWEEP2, reps); /* reuses the last sweep 1 */
                    /* sweep 1: 2 products per layer (forward + down), sweep 2: 4 */
                    double gf = gemm_flops(&m, B, 6) / (t_s1 + t_s2) * 1e-9;
                    printf("%5d %3d %5dx%d %-9s %9.3f %9.3f %9.3f %9.3f %9.1f\n", B, in, depth, 500,
                           imp_activation_name(acts[ai]), 1e3 * t_fwd, 1e3 * t_fb, 1e3 * t_s1,
                           1e3 * t_s2, gf);
                    imp_mlp_work_free(w);
                    free(p), free(dp), free(x), free(g), free(gbar), free(dx), free(ones), free(V);
                }
    return 0;
}
