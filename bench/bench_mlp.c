/* Timing of the MLP kernels at the shapes the models use (not run by ctest).
 *
 * Build and run from the repository root after scripts/build.sh:
 *   gcc -O2 -std=c11 -Iinclude -Isrc bench/bench_mlp.c build/libimpulse.a \
 *       -lopenblas -lmatio -lz -lpthread -lm -o build/bench_mlp
 *   OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 nice ./build/bench_mlp
 * (OPENBLAS_CORETYPE: see include/impulse/core.h; use Haswell on AVX2-only
 * machines.) Prints one line per (batch, depth, activation): milliseconds
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

int main(void)
{
    imp_blas_init();
    printf("OpenBLAS core: %s\n", imp_blas_corename());
    printf("%5s %6s %-9s %9s %9s %9s %9s %9s\n", "B", "hidden", "act", "fwd ms", "fwd+bwd", "sweep1",
           "sweep2", "GFLOP/s");
    const int batches[] = {32, 200};
    const imp_activation acts[] = {IMP_ACT_TANH, IMP_ACT_SOFTPLUS};
    for (int bi = 0; bi < 2; bi++)
        for (int depth = 1; depth <= 3; depth++)
            for (int ai = 0; ai < 2; ai++) {
                int B = batches[bi], sizes[5] = {2, 500, 500, 500, 1};
                sizes[depth + 1 - 1 + 1] = 1;
                int sz[5];
                sz[0] = 2;
                for (int l = 1; l <= depth; l++) sz[l] = 500;
                sz[depth + 1] = 1;
                (void)sizes;
                imp_mlp m;
                if (imp_mlp_init(&m, depth + 1, sz, acts[ai], IMP_ACT_IDENTITY, 1) != IMP_OK) return 1;
                double *p = malloc(m.n_params * sizeof(double)), *dp = calloc(m.n_params, sizeof(double));
                double *x = malloc((size_t)B * 2 * sizeof(double)), *g = malloc((size_t)B * 2 * sizeof(double));
                double *gbar = malloc((size_t)B * 2 * sizeof(double)), *dx = calloc((size_t)B * 2, sizeof(double));
                double *y = malloc((size_t)B * sizeof(double)), *V = malloc((size_t)B * sizeof(double));
                imp_rng rng;
                imp_rng_seed(&rng, 1);
                imp_mlp_init_params(&m, p, &rng);
                for (int i = 0; i < 2 * B; i++) x[i] = imp_rng_uniform_range(&rng, -1, 1), gbar[i] = 0.1;
                for (int i = 0; i < B; i++) y[i] = 1.0;
                imp_mlp_work *w = imp_mlp_work_new(&m, B);
                int reps = B == 32 ? 400 : 80;
                double t0 = imp_time_now();
                for (int r = 0; r < reps; r++) imp_mlp_forward(&m, p, x, B, V, w);
                double t_fwd = (imp_time_now() - t0) / reps;
                t0 = imp_time_now();
                for (int r = 0; r < reps; r++) {
                    imp_mlp_forward(&m, p, x, B, V, w);
                    imp_mlp_backward(&m, p, y, B, dp, NULL, w);
                }
                double t_fb = (imp_time_now() - t0) / reps;
                t0 = imp_time_now();
                for (int r = 0; r < reps; r++) imp_mlp_grad_input(&m, p, x, B, g, V, w);
                double t_s1 = (imp_time_now() - t0) / reps;
                t0 = imp_time_now();
                for (int r = 0; r < reps; r++) imp_mlp_grad_input_vjp(&m, p, gbar, B, dp, dx, w);
                double t_s2 = (imp_time_now() - t0) / reps;
                /* sweep 1: 2 products per layer (forward + down), sweep 2: 4 */
                double gf = gemm_flops(&m, B, 6) / (t_s1 + t_s2) * 1e-9;
                printf("%5d %4dx%d %-9s %9.3f %9.3f %9.3f %9.3f %9.1f\n", B, depth, 500,
                       imp_activation_name(acts[ai]), 1e3 * t_fwd, 1e3 * t_fb, 1e3 * t_s1, 1e3 * t_s2, gf);
                imp_mlp_work_free(w);
                free(p), free(dp), free(x), free(g), free(gbar), free(dx), free(y), free(V);
            }
    return 0;
}
