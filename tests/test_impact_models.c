/* The six impact laws: first-principles properties and the authors'
 * stored predictions (p_models.mat; skipped if ../shared is absent). */
#include "impulse/core.h"
#include "impulse/impact.h"
#include "impulse/impact_models.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>

#define DATA IMPULSE_SOURCE_DIR "/../shared/data/planar-impact"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A contact of the data set's ellipse with offset (rx, ry) and velocity v. */
static inline void make_contact(imp_contact *c, double rx, double ry, const double v[3])
{
    double m = 0.0364, kg = 0.0192, d[3] = {1, 0, -ry}, n[3] = {0, 1, rx};
    imp_contact_make(c, d, n, m, m * kg * kg, v, NULL);
}

static void test_p_models(void)
{
    imp_impact_set s;
    double *pm = NULL;
    size_t r, c;
    CHECK_OK(imp_impact_load_mat(&s, DATA "/data_ellipse.mat"));
    CHECK_OK(imp_impact_load_mat_matrix(DATA "/p_models.mat", "p_models", 1718, 12, &pm, &r, &c));
    if (!pm || s.count != 1718) return;
    double *rel = malloc(s.count * sizeof(double));
    for (int m = 0; m < IMP_IMPACT_MODEL_COUNT; m++) {
        imp_impact_law law = {(imp_impact_model)m, IMP_VARIANT_AUTHORS, 0, 0};
        imp_impact_table1(law.model, &law.mu, &law.eps);
        int fails = 0;
        for (size_t i = 0; i < s.count; i++) {
            imp_contact ct;
            double P[2];
            if (imp_impact_contact(&s, i, &ct) || imp_impact_predict(&law, ct.W, ct.u, P)) { fails++; rel[i] = 1; continue; }
            const double *q = pm + 12 * i + 2 * m;
            rel[i] = hypot(P[0] - q[0], P[1] - q[1]) / hypot(q[0], q[1]);
        }
        qsort(rel, s.count, sizeof(double), cmp_double);
        printf("%-17s median rel diff %.4f%%, 90%% %.4f%%, max %.3f%% (stored convention, Table 1, authors)\n",
               imp_impact_model_title(law.model), 100 * rel[s.count / 2], 100 * rel[s.count * 9 / 10],
               100 * rel[s.count - 1]);
        CHECK(fails == 0);
        CHECK_MSG(rel[s.count / 2] <= 0.01, "%s", imp_impact_model_title(law.model));
    }
    free(rel);
    free(pm);
    imp_impact_set_free(&s);
}

int main(void)
{
    FILE *f = fopen(DATA "/p_models.mat", "rb");
    if (f) { fclose(f); test_p_models(); }
    else printf("SKIP: data set not found at %s\n", DATA);
    TEST_MAIN_END();
}
