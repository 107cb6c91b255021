/* Impact-law evaluations per second (one core), on the contact spaces of
 * the real data set (or of synthetic contacts if it is absent): one
 * unchecked call per impact (imp_impact_predict_fast) and the checked batch
 * API (imp_impact_predict_batch, packed W/u arrays, one shared mu, eps).
 *
 * Build (after scripts/build.sh) and run from the repository root:
 *   cc -std=c11 -O2 -Iinclude bench/bench_impact.c build/libimpulse.a \
 *      -lopenblas -lmatio -lz -lpthread -lm -o build/bench_impact && build/bench_impact
 * Optional argument: path to data_ellipse.mat
 * (default ../shared/data/planar-impact/data_ellipse.mat).
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "impulse/core.h"
#include "impulse/impact.h"
#include "impulse/impact_analysis.h"
#include "impulse/impact_models.h"

static double bench(const imp_impact_law *law, const imp_impact_table *t, double min_seconds, double *checksum)
{
    size_t evals = 0;
    double sum = 0, t0 = imp_time_now(), el;
    do {
        for (size_t i = 0; i < t->count; i++) {
            double P[2];
            imp_impact_predict_fast(law, t->contact[i].W, t->contact[i].u, P);
            sum += P[0] + P[1];
        }
        evals += t->count;
        el = imp_time_now() - t0;
    } while (el < min_seconds);
    *checksum = sum;
    return evals / el;
}

static double bench_batch(const imp_impact_law *law, size_t n, const double *W, const double *u, double *P,
                          int32_t *status, double min_seconds, double *checksum)
{
    size_t evals = 0, failed = 0;
    double sum = 0, t0 = imp_time_now(), el;
    do {
        if (imp_impact_predict_batch(law->model, law->variant, n, W, u, &law->mu, &law->eps, 1, P, status, &failed) ||
            failed)
            return 0;
        for (size_t i = 0; i < n; i++) sum += P[2 * i] + P[2 * i + 1];
        evals += n;
        el = imp_time_now() - t0;
    } while (el < min_seconds);
    *checksum = sum;
    return evals / el;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "../shared/data/planar-impact/data_ellipse.mat";
    imp_impact_set s;
    int synthetic = 0;
    if (imp_impact_load_mat(&s, path)) {
        /* synthetic contacts with the data set's geometry and velocities */
        synthetic = 1;
        imp_rng rng;
        imp_rng_seed(&rng, 1);
        if (imp_impact_set_alloc(&s, 2000)) return 1;
        for (size_t i = 0; i < s.count; i++) {
            s.n[3 * i + 1] = 1;
            s.n[3 * i + 2] = imp_rng_uniform_range(&rng, -0.01, 0.01);
            s.d[3 * i] = 1;
            s.d[3 * i + 2] = imp_rng_uniform_range(&rng, 0.025, 0.035);
            s.pre[6 * i + 3] = imp_rng_uniform_range(&rng, 0.14, 1.13);
            s.pre[6 * i + 4] = imp_rng_uniform_range(&rng, -2.87, -2.21);
            s.pre[6 * i + 5] = imp_rng_uniform_range(&rng, -14, 25);
        }
        imp_impact_set_validate(&s, NULL);
    }
    imp_impact_table t;
    if (imp_impact_table_build(&t, &s)) {
        fprintf(stderr, "bench_impact: %s\n", imp_last_error());
        return 1;
    }
    printf("bench_impact: %zu %s contacts, stored convention, Table 1 parameters\n", t.count,
           synthetic ? "synthetic" : "measured");
    size_t n = t.count;
    double *W = malloc(n * 4 * sizeof(double)), *u = malloc(n * 2 * sizeof(double)), *P = malloc(n * 2 * sizeof(double));
    int32_t *status = malloc(n * sizeof(int32_t));
    if (!W || !u || !P || !status) return 1;
    for (size_t i = 0; i < n; i++) {
        memcpy(W + 4 * i, t.contact[i].W, 4 * sizeof(double));
        memcpy(u + 2 * i, t.contact[i].u, 2 * sizeof(double));
    }
    printf("| law | variant | single unchecked calls, evals/s | checked batch, evals/s |\n|---|---|---|---|\n");
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++)
        for (int v = 0; v < 2; v++) {
            imp_impact_law law = {(imp_impact_model)m, v ? IMP_VARIANT_TEXTBOOK : IMP_VARIANT_AUTHORS, 0, 0};
            /* the variants coincide for AP Newton, Wang-Mason, Whittaker */
            if (v && !(m == IMP_IMPACT_MIRTICH || m == IMP_IMPACT_AP_POISSON || m == IMP_IMPACT_DRUMSHELL)) continue;
            imp_impact_table1(law.model, &law.mu, &law.eps);
            double cs, cs_batch, rate = bench(&law, &t, 1.0, &cs);
            double rate_batch = bench_batch(&law, n, W, u, P, status, 1.0, &cs_batch);
            if (rate_batch == 0) {
                fprintf(stderr, "bench_impact: batch failed: %s\n", imp_last_error());
                return 1;
            }
            printf("| %s | %s | %.3e | %.3e |\n", imp_impact_model_title(law.model), imp_impact_variant_name(law.variant),
                   rate, rate_batch);
        }
    free(W);
    free(u);
    free(P);
    free(status);
    imp_impact_table_free(&t);
    imp_impact_set_free(&s);
    return 0;
}
