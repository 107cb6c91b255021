/* Data-driven impact models on synthetic drops (and on the real data when
 * ../shared is present): features, wrench round trip, each model kind beats
 * no-impact and the base law where it must, learning curves reproducible and
 * improving with data, bad input. */
#include "impulse/core.h"
#include "impulse/drop.h"
#include "impulse/gp.h"
#include "impulse/impact.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>

#define DATA IMPULSE_SOURCE_DIR "/../shared/data/planar-impact"

static imp_impact_set g_set;
static imp_impact_table g_table;

static int make_synthetic(size_t count)
{
    imp_drop_params p;
    imp_drop_params_default(&p);
    imp_drop_sample *s = malloc(count * sizeof *s);
    if (!s) return -1;
    int st = imp_drop_generate(&p, 2024, count, s, NULL);
    if (!st) st = imp_drop_to_impact_set(s, count, &p, &g_set);
    free(s);
    if (!st) st = imp_impact_table_build(&g_table, &g_set);
    return st;
}

static double mean_error(const imp_contact *c, size_t n, const double *v, double kg)
{
    double s = 0.0;
    for (size_t a = 0; a < n; a++) s += imp_impact_velocity_error(v + 3 * a, c[a].v_post, kg);
    return s / (double)n;
}

static void test_features(void)
{
    double *X = malloc(g_set.count * 5 * sizeof *X), *X2 = malloc(g_set.count * 2 * sizeof *X2);
    CHECK_OK(imp_impact_features_x1(&g_set, X));
    CHECK_OK(imp_impact_features_x2(&g_set, X2));
    double maxd = 0.0;
    for (size_t i = 0; i < g_table.count; i++) {
        double x1[5], x2[2];
        imp_gpi_features(&g_table.contact[i], x1, x2);
        size_t j = g_table.index[i];
        for (int q = 0; q < 5; q++) maxd = fmax(maxd, fabs(x1[q] - X[5 * j + q]) / (fabs(X[5 * j + q]) + 1e-3));
        for (int q = 0; q < 2; q++) maxd = fmax(maxd, fabs(x2[q] - X2[2 * j + q]) / (fabs(X2[2 * j + q]) + 1e-3));
    }
    CHECK_MSG(maxd < 1e-12, "features differ from imp_impact_features_x1/x2 by %.3g", maxd);
    free(X);
    free(X2);
}

static void test_models(void)
{
    imp_impact_law base = {IMP_IMPACT_AP_NEWTON, IMP_VARIANT_TEXTBOOK, 0, 0};
    imp_gpi_data d;
    imp_ident_options io = imp_ident_options_default();
    io.grid = 11;
    CHECK_OK(imp_gpi_data_build(&d, &g_table, IMP_TARGET_IRB_VELOCITY, &base, 1, &io));
    const size_t n = g_table.count, ntrain = 120;
    if (n < 250) return;
    const size_t ntest = n - ntrain;
    size_t *idx = malloc(n * sizeof *idx);
    for (size_t i = 0; i < n; i++) idx[i] = i;
    const imp_contact *test = g_table.contact + ntrain;
    double *v = malloc(ntest * 3 * sizeof *v);

    /* references: no impulse at all; IRB; base law identified on the training set */
    double *zero = calloc(ntest * 3, sizeof *zero);
    for (size_t a = 0; a < ntest; a++) memcpy(zero + 3 * a, test[a].v_pre, 3 * sizeof(double));
    double e_none = mean_error(test, ntest, zero, g_table.kg);
    double *irb = malloc(n * sizeof *irb), e_irb = 0.0;
    CHECK_OK(imp_impact_irb_errors(&g_table, IMP_IRB_VELOCITY, irb));
    for (size_t a = ntrain; a < n; a++) e_irb += irb[a] / (double)ntest;
    imp_impact_law law = base;
    CHECK_OK(imp_impact_identify_set(&law, &g_table, d.target, idx, ntrain, &io, NULL));
    double e_law = 0.0;
    for (size_t a = 0; a < ntest; a++) {
        double P[2];
        CHECK_OK(imp_impact_predict(&law, test[a].W, test[a].u, P));
        e_law += imp_contact_impulse_error(&test[a], P, g_table.kg) / (double)ntest;
    }
    printf("synthetic: %zu train, %zu test: no impulse %.4f, %s (mu %.3f, eps %.3f) %.4f, IRB %.4f m/s\n",
           ntrain, ntest, e_none, imp_impact_model_name(law.model), law.mu, law.eps, e_law, e_irb);
    CHECK(e_irb < e_law && e_law < e_none);

    imp_gp_options go;
    imp_gp_options_default(&go);
    go.restarts = 1;
    for (int k = 0; k < IMP_GPI_KIND_COUNT; k++) {
        imp_gpi_model m;
        double t0 = imp_time_now();
        CHECK_OK(imp_gpi_fit(&m, (imp_gpi_kind)k, &d, idx, ntrain, &go, &io));
        CHECK_OK(imp_gpi_predict(&m, test, ntest, v));
        double e = mean_error(test, ntest, v, g_table.kg);
        printf("  %-17s %.4f m/s (%.2f s)\n", imp_gpi_kind_name((imp_gpi_kind)k), e, imp_time_now() - t0);
        CHECK_MSG(e < 0.5 * e_none, "%s error %.4f vs no impulse %.4f", imp_gpi_kind_name((imp_gpi_kind)k), e, e_none);
        /* learned impulses beat the identified law; the residual model cannot be worse than it by much */
        if (k == IMP_GPI_X1_IMPULSE || k == IMP_GPI_RESIDUAL_IMPULSE)
            CHECK_MSG(e < e_law, "%s %.4f not below the law %.4f", imp_gpi_kind_name((imp_gpi_kind)k), e, e_law);
        imp_gpi_model_free(&m);
    }

    /* save / load: identical predictions, training indices and meta kept */
    for (int k = IMP_GPI_X1_WRENCH; k <= IMP_GPI_RESIDUAL_IMPULSE; k++) {
        imp_gpi_model a, b;
        CHECK_OK(imp_gpi_fit(&a, (imp_gpi_kind)k, &d, idx, 40, &go, &io));
        CHECK_OK(imp_gpi_save(&a, idx, 40, "\"convention\": \"corrected\"", "test_gpi.npz"));
        char *meta = NULL;
        size_t *ti = NULL, nti = 0;
        CHECK_OK(imp_gpi_load(&b, "test_gpi.npz", &meta, &ti, &nti));
        double *va = malloc(30 * 3 * sizeof *va), *vb = malloc(30 * 3 * sizeof *vb);
        CHECK_OK(imp_gpi_predict(&a, test, 30, va));
        CHECK_OK(imp_gpi_predict(&b, test, 30, vb));
        CHECK(memcmp(va, vb, 30 * 3 * sizeof *va) == 0);
        CHECK(b.kind == a.kind && b.base.model == a.base.model && b.base.mu == a.base.mu);
        CHECK(nti == 40 && ti && ti[39] == idx[39]);
        CHECK(meta && strstr(meta, "\"corrected\""));
        free(va);
        free(vb);
        free(meta);
        free(ti);
        imp_gpi_model_free(&a);
        imp_gpi_model_free(&b);
    }
    {
        imp_gpi_model b;
        FILE *f = fopen("test_gpi.npz", "wb");
        if (f) {
            fputs("PK not really", f);
            fclose(f);
        }
        CHECK_FAILS(imp_gpi_load(&b, "test_gpi.npz", NULL, NULL, NULL), IMP_ERR_FORMAT);
        remove("test_gpi.npz");
        CHECK_FAILS(imp_gpi_load(&b, "test_gpi.npz", NULL, NULL, NULL), IMP_ERR_IO);
    }

    /* bad input */
    imp_gpi_model m;
    CHECK_FAILS(imp_gpi_fit(&m, IMP_GPI_X1_IMPULSE, &d, idx, 1, &go, &io), IMP_ERR_SHAPE);
    idx[0] = n + 5;
    CHECK_FAILS(imp_gpi_fit(&m, IMP_GPI_X1_IMPULSE, &d, idx, 10, &go, &io), IMP_ERR_SHAPE);
    idx[0] = 0;
    CHECK_FAILS(imp_gpi_fit(&m, (imp_gpi_kind)17, &d, idx, 10, &go, &io), IMP_ERR_INVALID);
    CHECK_FAILS(imp_gpi_predict(&m, test, 3, v), IMP_ERR_INVALID);
    imp_gpi_kind kk;
    CHECK_OK(imp_gpi_kind_parse("residual-wrench", &kk, "--model"));
    CHECK(kk == IMP_GPI_RESIDUAL_WRENCH);
    CHECK_FAILS(imp_gpi_kind_parse("x3-impulse", &kk, "--model"), IMP_ERR_INVALID);
    imp_gpi_data d2;
    CHECK_OK(imp_gpi_data_build(&d2, &g_table, IMP_TARGET_CONTACT, &base, 0, &io));
    CHECK_FAILS(imp_gpi_fit(&m, IMP_GPI_PARAMS, &d2, idx, 10, &go, &io), IMP_ERR_INVALID);
    /* the contact-space target is exactly Mc J dv: an impulse model trained on
     * it reproduces the contact velocity change u+ - u */
    for (size_t i = 0; i < 5; i++) {
        const imp_contact *c = &g_table.contact[i];
        double u2[2];
        imp_contact_u_after(c, d2.target + 2 * i, u2);
        CHECK_CLOSE(u2[0], c->u_post[0], 1e-9, 1e-9);
        CHECK_CLOSE(u2[1], c->u_post[1], 1e-9, 1e-9);
    }
    imp_gpi_data_free(&d2);

    /* learning curve: reproducible, improving with data, options checked */
    size_t sizes[2] = {8, 100};
    imp_lc_options lo = {sizes, 2, 2, 60, 50, 9, (1u << IMP_GPI_X1_IMPULSE) | (1u << IMP_GPI_X1_WRENCH), go, io};
    imp_lc_result r1, r2;
    CHECK_OK(imp_gpi_learning_curve(&d, &lo, &r1));
    CHECK_OK(imp_gpi_learning_curve(&d, &lo, &r2));
    CHECK(r1.mean[IMP_GPI_X1_IMPULSE][0] == r2.mean[IMP_GPI_X1_IMPULSE][0]);
    CHECK(r1.mean[IMP_GPI_X1_WRENCH][1] == r2.mean[IMP_GPI_X1_WRENCH][1]);
    CHECK(r1.mean[IMP_GPI_X1_IMPULSE][1] < r1.mean[IMP_GPI_X1_IMPULSE][0]);
    CHECK(isnan(r1.mean[IMP_GPI_PARAMS][0]));
    CHECK(r1.ref_mean[IMP_LC_REF_IRB] <= r1.ref_mean[IMP_LC_REF_BEST_POST_HOC]);
    CHECK(r1.ref_mean[IMP_LC_REF_BEST_POST_HOC] <= r1.ref_mean[IMP_LC_REF_BASE_LAW]);
    printf("curve x1-impulse: n=8 %.4f, n=100 %.4f; BPH %.4f IRB %.4f\n", r1.mean[0][0],
           r1.mean[0][1], r1.ref_mean[0], r1.ref_mean[1]);
    imp_lc_result_free(&r1);
    imp_lc_result_free(&r2);
    sizes[1] = n;
    CHECK_FAILS(imp_gpi_learning_curve(&d, &lo, &r1), IMP_ERR_SHAPE);
    sizes[1] = 100;
    lo.repeats = 0;
    CHECK_FAILS(imp_gpi_learning_curve(&d, &lo, &r1), IMP_ERR_INVALID);
    lo.repeats = 1;
    lo.kinds = 1u << IMP_GPI_PARAMS;
    imp_gpi_data d3;
    CHECK_OK(imp_gpi_data_build(&d3, &g_table, IMP_TARGET_CONTACT, &base, 0, &io));
    CHECK_FAILS(imp_gpi_learning_curve(&d3, &lo, &r1), IMP_ERR_INVALID);
    imp_gpi_data_free(&d3);

    imp_gpi_data_free(&d);
    free(idx);
    free(v);
    free(zero);
    free(irb);
}

int main(void)
{
    imp_blas_init();
    CHECK_OK(make_synthetic(260));
    if (g_table.count < 250) {
        CHECK_MSG(0, "synthetic table has %zu valid impacts", g_table.count);
        TEST_MAIN_END();
    }
    test_features();
    test_models();
    imp_impact_table_free(&g_table);
    imp_impact_set_free(&g_set);
    TEST_MAIN_END();
}
