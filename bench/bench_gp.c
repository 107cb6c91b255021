/* GP fit with hyperparameter optimisation on 450 samples, 5-D inputs (the
 * size of the [CoRL] Fig. 7 training sets), default options (3 starts).
 * Build (from the repo root, after scripts/build.sh):
 *   cc -O2 -std=c11 -Iinclude bench/bench_gp.c build/libimpulse.a -lopenblas -lmatio -lz -lpthread -lm -o build/bench_gp
 * Run: ./build/bench_gp   (target < 1 s per fit; the OpenBLAS core is set by
 * imp_blas_env_fixup) */
#include "impulse/core.h"
#include "impulse/gp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    (void)argc;
    imp_blas_env_fixup(argv); /* SkylakeX kernels, no idle OpenBLAS pool (include/impulse/core.h) */
    imp_blas_init();
    enum { N = 450, D = 5, M = 1000 };
    static double x[N * D], y[N], xs[M * D], ms[M];
    imp_rng rng;
    imp_rng_seed(&rng, 2017);
    for (int a = 0; a < N + M; a++) {
        double *row = a < N ? x + a * D : xs + (a - N) * D;
        double s = 0.0;
        for (int i = 0; i < D; i++) {
            row[i] = imp_rng_uniform_range(&rng, -1, 1) * (i + 1);
            s += sin(row[i] * (i % 2 ? 0.5 : 1.5)) / (i + 1);
        }
        if (a < N) y[a] = s + 0.05 * imp_rng_normal(&rng);
        else ms[a - N] = s;
    }
    printf("OpenBLAS core: %s\n", imp_blas_corename());
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        imp_gp *gp = NULL;
        double t0 = imp_time_now();
        if (imp_gp_fit(&gp, x, y, N, D, NULL) != IMP_OK) {
            fprintf(stderr, "fit failed: %s\n", imp_last_error());
            return 1;
        }
        double t1 = imp_time_now();
        static double mu[M];
        imp_gp_predict(gp, xs, M, mu, NULL);
        double t2 = imp_time_now(), se = 0.0;
        for (int j = 0; j < M; j++) se += (mu[j] - ms[j]) * (mu[j] - ms[j]);
        printf("fit %.3f s, predict %d points %.4f s, lml %.2f, noise sd %.4f (true 0.05), test rmse %.4f\n",
               t1 - t0, M, t2 - t1, gp->lml, sqrt(imp_gp_noise_var(gp)), sqrt(se / M));
        if (t1 - t0 < best) best = t1 - t0;
        imp_gp_free(gp);
    }
    printf("best fit time %.3f s\n", best);
    return 0;
}
