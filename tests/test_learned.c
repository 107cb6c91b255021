/* Data-driven impact models on synthetic drops (and on the real data when
 * ../shared is present): features, wrench round trip, each model kind beats
 * no-impact and the base law where it must, learning curves reproducible and
 * improving with data, bad input. */
#define _POSIX_C_SOURCE 200809L
#include "impulse/core.h"
#include "impulse/drop.h"
#include "impulse/gp.h"
#include "impulse/impact.h"
#include "impulse/io.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

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

/* ---- the real data (skipped if ../shared is absent) ---- */
static void test_real_data(void)
{
    FILE *f = fopen(DATA "/data_ellipse.mat", "rb");
    if (!f) {
        printf("SKIP real-data checks: %s not found\n", DATA);
        return;
    }
    fclose(f);
    imp_impact_set s;
    imp_impact_table t;
    CHECK_OK(imp_impact_load_mat(&s, DATA "/data_ellipse.mat"));
    if (s.count == 0) return;
    /* features in the stored convention equal gpFeature5.mat / gpFeature2.mat */
    double *f5 = NULL, *f2 = NULL;
    size_t r5, c5, r2, c2;
    CHECK_OK(imp_impact_load_mat_matrix(DATA "/gpFeature5.mat", "feature5", s.count, 5, &f5, &r5, &c5));
    CHECK_OK(imp_impact_load_mat_matrix(DATA "/gpFeature2.mat", "feature2", s.count, 2, &f2, &r2, &c2));
    CHECK_OK(imp_impact_table_build(&t, &s));
    if (f5 && f2 && t.count > 0) {
        double maxd = 0.0;
        for (size_t i = 0; i < t.count; i++) {
            double x1[5], x2[2];
            imp_gpi_features(&t.contact[i], x1, x2);
            size_t j = t.index[i];
            for (int q = 0; q < 5; q++) maxd = fmax(maxd, fabs(x1[q] - f5[5 * j + q]) / (fabs(f5[5 * j + q]) + 1e-6));
            for (int q = 0; q < 2; q++) maxd = fmax(maxd, fabs(x2[q] - f2[2 * j + q]) / (fabs(f2[2 * j + q]) + 1e-6));
        }
        CHECK_MSG(maxd < 1e-6, "features vs gpFeature5/2.mat: max relative difference %.3g", maxd);
    }
    free(f5);
    free(f2);
    imp_impact_table_free(&t);

    /* corrected convention: a GP on X1 trained on 300 impacts beats the
     * analytical law identified on the same impacts ([CoRL] §5) */
    imp_impact_set_convention(&s, IMP_TANGENT_CORRECTED);
    CHECK_OK(imp_impact_table_build(&t, &s));
    imp_impact_law base = {IMP_IMPACT_AP_NEWTON, IMP_VARIANT_TEXTBOOK, 0, 0};
    imp_gpi_data d;
    imp_ident_options io = imp_ident_options_default();
    io.grid = 11;
    CHECK_OK(imp_gpi_data_build(&d, &t, IMP_TARGET_IRB_VELOCITY, &base, 0, &io));
    size_t n = t.count, ntrain = 300, ntest = 400;
    if (n >= ntrain + ntest) {
        size_t *idx = malloc(n * sizeof *idx);
        imp_contact *test = malloc(ntest * sizeof *test);
        double *v = malloc(ntest * 3 * sizeof *v);
        imp_rng rng;
        imp_rng_seed(&rng, 12);
        for (size_t i = 0; i < n; i++) idx[i] = i;
        imp_rng_shuffle(&rng, idx, n);
        for (size_t a = 0; a < ntest; a++) test[a] = t.contact[idx[ntrain + a]];
        imp_gp_options go;
        imp_gp_options_default(&go);
        go.restarts = 0;
        imp_gpi_model m;
        CHECK_OK(imp_gpi_fit(&m, IMP_GPI_X1_IMPULSE, &d, idx, ntrain, &go, &io));
        CHECK_OK(imp_gpi_predict(&m, test, ntest, v));
        double e_gp = mean_error(test, ntest, v, t.kg);
        imp_impact_law law = base;
        CHECK_OK(imp_impact_identify_set(&law, &t, d.target, idx, ntrain, &io, NULL));
        double e_law = 0.0;
        for (size_t a = 0; a < ntest; a++) {
            double P[2];
            CHECK_OK(imp_impact_predict(&law, test[a].W, test[a].u, P));
            e_law += imp_contact_impulse_error(&test[a], P, t.kg) / (double)ntest;
        }
        printf("real data (corrected): x1-impulse GP on %zu impacts %.4f m/s, ap-newton identified %.4f m/s\n",
               ntrain, e_gp, e_law);
        CHECK(e_gp < e_law);
        imp_gpi_model_free(&m);
        free(idx);
        free(test);
        free(v);
    }
    imp_gpi_data_free(&d);
    imp_impact_table_free(&t);
    imp_impact_set_free(&s);
}

/* ---- the CLI verbs end to end; failures give one stderr line ---- */
static int run_cli(const char *args, char *out, size_t cap)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "IMPULSE_PROGRESS=0 %s %s 2>gpcli_err.txt >gpcli_out.txt", IMPULSE_CLI_PATH, args);
    int status = system(cmd);
    FILE *f = fopen(out && strstr(args, "--expect-out") ? "gpcli_out.txt" : "gpcli_err.txt", "r");
    size_t n = f && out ? fread(out, 1, cap - 1, f) : 0;
    if (out) out[n] = '\0';
    if (f) fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void read_text(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
}

static void cli_error(const char *args, const char *needle)
{
    char err[4096];
    int rc = run_cli(args, err, sizeof err);
    int lines = 0;
    for (const char *c = err; *c; c++) lines += *c == '\n';
    CHECK_MSG(rc != 0 && lines == 1 && strstr(err, needle) && strstr(err, "error"),
              "impulse %s -> exit %d, stderr '%s' (want one line with '%s')", args, rc, err, needle);
}

static void test_cli(void)
{
    char buf[8192];
    CHECK(run_cli("impact drop --out gpcli_drops.npz --count 120 --seed 4", NULL, 0) == 0);
    read_text("gpcli_out.txt", buf, sizeof buf);
    CHECK(strstr(buf, "120 drops") != NULL);
    imp_impact_set s;
    CHECK_OK(imp_drop_load_impact_set(&s, "gpcli_drops.npz"));
    CHECK(s.count == 120);
    imp_impact_set_free(&s);
    CHECK(run_cli("impact gp-fit --data gpcli_drops.npz --train 60 --model x1-wrench --restarts 0 --out gpcli_model.npz",
                  NULL, 0) == 0);
    read_text("gpcli_out.txt", buf, sizeof buf);
    double e_fit = -1, e_eval = -2;
    const char *p = strstr(buf, "held-out error on 60 impacts: mean ");
    CHECK(p && sscanf(p, "held-out error on 60 impacts: mean %lf", &e_fit) == 1);
    CHECK(run_cli("impact gp-eval --gp gpcli_model.npz --data gpcli_drops.npz", NULL, 0) == 0);
    read_text("gpcli_out.txt", buf, sizeof buf);
    p = strstr(buf, "on 60 impacts");
    /* gp-eval leaves the 60 training impacts out: same held-out error */
    CHECK(p && (p = strstr(p, "mean error ")) && sscanf(p, "mean error %lf", &e_eval) == 1);
    CHECK_CLOSE(e_eval, e_fit, 0, 1e-4);
    CHECK(run_cli("impact learning-curve --synthetic 150 --sizes 10,40 --repeats 2 --test 50 --ident 30 "
                  "--models x1-impulse,param-gp --restarts 0 --grid 7 --out gpcli_curve.md --npz gpcli_curve.npz",
                  NULL, 0) == 0);
    read_text("gpcli_curve.md", buf, sizeof buf);
    CHECK(strstr(buf, "| training size | x1-impulse | param-gp |") != NULL);
    CHECK(strstr(buf, "Best Post Hoc") != NULL);
    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, "gpcli_curve.npz"));
    const double *m;
    size_t sh[2] = {2, 2};
    if (z) {
        CHECK_OK(imp_npz_get_f64(z, "mean", 2, sh, &m, NULL)); /* rows: the two selected models */
        if (imp_npz_meta(z)) CHECK(strstr(imp_npz_meta(z), "[\"x1-impulse\",\"param-gp\"]") != NULL);
        imp_npz_free(z);
    }
    CHECK(run_cli("impact gp-fit --help", NULL, 0) == 0);
    CHECK(run_cli("impact learning-curve --help", NULL, 0) == 0);
    CHECK(run_cli("impact drop --help", NULL, 0) == 0);

    cli_error("impact gp-fit --data gpcli_drops.npz", "--out");
    cli_error("impact gp-fit --data gpcli_drops.npz --model x9 --out x.npz", "--model");
    cli_error("impact gp-fit --data gpcli_drops.npz --train 500 --out x.npz", "--train");
    cli_error("impact gp-fit --data gpcli_drops.npz --train abc --out x.npz", "--train");
    cli_error("impact gp-fit --data no_such_file.npz --out x.npz", "no_such_file");
    cli_error("impact gp-fit --data gpcli_drops.npz --bogus 1 --out x.npz", "--bogus");
    cli_error("impact gp-eval --data gpcli_drops.npz", "--gp");
    cli_error("impact gp-eval --gp gpcli_drops.npz --data gpcli_drops.npz", "gp_impact_model");
    cli_error("impact learning-curve --synthetic 100 --sizes 10,5", "--sizes");
    cli_error("impact learning-curve --synthetic 100 --sizes 10,200", "sizes");
    cli_error("impact drop --count 5", "--out");
    cli_error("impact drop --out x.npz --mu -1", "mu");
    cli_error("impact drop --out x.npz --dt 0.01", "dt");
    remove("gpcli_drops.npz");
    remove("gpcli_model.npz");
    remove("gpcli_curve.md");
    remove("gpcli_curve.npz");
    remove("gpcli_out.txt");
    remove("gpcli_err.txt");
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
    test_cli();
    test_real_data();
    imp_impact_table_free(&g_table);
    imp_impact_set_free(&g_set);
    TEST_MAIN_END();
}
