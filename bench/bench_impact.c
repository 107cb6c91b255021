/* Closed-form impact-law evaluations per second (one core), on the contact
 * spaces of the real data set (or of synthetic contacts if it is absent).
 *
 * Build (after scripts/build.sh) and run from the repository root:
 *   cc -std=c11 -O2 -Iinclude bench/bench_impact.c build/libimpulse.a \
 *      -lopenblas -lmatio -lz -lpthread -lm -o build/bench_impact && build/bench_impact
 * Optional argument: path to data_ellipse.mat
 * (default ../shared/data/planar-impact/data_ellipse.mat).
 */
#include <stdio.h>
#include <stdlib.h>

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
    printf("bench_impact: %zu %s contacts, stored convention, Table 1 parameters, authors' variants\n", t.count,
           synthetic ? "synthetic" : "measured");
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
        imp_impact_law law = {(imp_impact_model)m, IMP_VARIANT_AUTHORS, 0, 0};
        imp_impact_table1(law.model, &law.mu, &law.eps);
        double cs, rate = bench(&law, &t, 1.0, &cs);
        printf("%-17s %12.3e evals/s  (checksum %.6g)\n", imp_impact_model_title(law.model), rate, cs);
        if (m == IMP_IMPACT_MIRTICH || m == IMP_IMPACT_AP_POISSON || m == IMP_IMPACT_DRUMSHELL) {
            law.variant = IMP_VARIANT_TEXTBOOK;
            rate = bench(&law, &t, 1.0, &cs);
            printf("%-17s %12.3e evals/s  (textbook variant)\n", imp_impact_model_title(law.model), rate);
        }
    }
    imp_impact_table_free(&t);
    imp_impact_set_free(&s);
    return 0;
}
