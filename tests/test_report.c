/* Tests for figures (matplotlib through python/impulse_plot.py) and tables.
 * matplotlib is a declared dependency: a missing one FAILS these tests. */
#define _GNU_SOURCE
#include "impulse/core.h"
#include "impulse/io.h"
#include "impulse/report.h"
#include "test.h"

#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static const char *tpath(const char *name)
{
    static char buf[4][512];
    static int k = 0;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static int msg_has(const char *needle) { return strstr(imp_last_error(), needle) != NULL; }

static imp_figure *every_element_figure(void)
{
    imp_figure *f = imp_figure_new(2, 3, 11, 6.5);
    CHECK(f != NULL);
    if (!f) return NULL;
    enum { N = 50 };
    double x[N], y[N], y2[N], lo[N], hi[N], err[N], samples[400];
    for (int i = 0; i < N; i++) {
        x[i] = 0.1 + 0.2 * i;
        y[i] = sin(x[i]);
        y2[i] = cos(x[i]);
        lo[i] = y[i] - 0.2;
        hi[i] = y[i] + 0.2;
        err[i] = 0.05 + 0.01 * (i % 5);
    }
    imp_rng rng;
    imp_rng_seed(&rng, 1);
    for (int i = 0; i < 400; i++) samples[i] = imp_rng_normal(&rng);
    CHECK_OK(imp_figure_title(f, "every element \xE2\x80\x94 \xCE\xB5"));
    CHECK_OK(imp_figure_axes(f, 0, "lines", "t [s]", "q"));
    CHECK_OK(imp_figure_line(f, 0, x, y, N, "sin", "-"));
    CHECK_OK(imp_figure_line(f, 0, x, y2, N, "cos", "--|tab:red"));
    CHECK_OK(imp_figure_fill_between(f, 0, x, lo, hi, N, "band", "|C0", 0.25));
    CHECK_OK(imp_figure_refline(f, 0, 0, 0.0, NULL, ":"));
    CHECK_OK(imp_figure_refline(f, 0, 1, 5.0, "impact", "--|k"));
    CHECK_OK(imp_figure_text(f, 0, 1.0, 0.5, "note"));
    CHECK_OK(imp_figure_axes(f, 1, "scatter + errorbar", "x", "y"));
    CHECK_OK(imp_figure_scatter(f, 1, x, y2, N, "pts", "x|C3"));
    CHECK_OK(imp_figure_errorbar(f, 1, x, y, err, N, "mean", "o"));
    CHECK_OK(imp_figure_axes(f, 2, "log-log", "h", "error"));
    CHECK_OK(imp_figure_logscale(f, 2, 1, 1));
    double h[5] = {0.1, 0.05, 0.025, 0.0125, 0.00625}, e2[5];
    for (int i = 0; i < 5; i++) e2[i] = h[i] * h[i];
    CHECK_OK(imp_figure_line(f, 2, h, e2, 5, "order 2", "o-"));
    const char *cats[3] = {"bounce", "slide", "roll"}, *groups[2] = {"ours", "paper"};
    double vals[6] = {1.0, 2.0, 1.5, 1.1, 1.8, 1.4}, errs[6] = {0.1, 0.2, 0.1, 0.05, 0.1, 0.2};
    CHECK_OK(imp_figure_axes(f, 3, "bars", NULL, "error"));
    CHECK_OK(imp_figure_bars(f, 3, cats, 3, groups, 2, vals, errs));
    CHECK_OK(imp_figure_axes(f, 4, "histogram", "z", "density"));
    CHECK_OK(imp_figure_histogram(f, 4, samples, 400, 20, 1, "samples", "|C2"));
    CHECK_OK(imp_figure_axes(f, 5, "geometry", "x", "y"));
    double px[4] = {0, 1, 1, 0}, py[4] = {0, 0, 0.5, 0.5};
    CHECK_OK(imp_figure_polygon(f, 5, px, py, 4, 1, "box", "|C1"));
    CHECK_OK(imp_figure_ellipse(f, 5, 0.5, 0.25, 1.2, 0.4, 30, "ellipse", "--|C4"));
    CHECK_OK(imp_figure_equal_aspect(f, 5));
    CHECK_OK(imp_figure_limits(f, 5, -1, 2, NAN, NAN));
    return f;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void test_figure_save(void)
{
    imp_figure *f = every_element_figure();
    if (!f) return;
    const char *stem = tpath("every");
    int st = imp_figure_save(f, stem);
    CHECK_MSG(st == IMP_OK, "imp_figure_save: %s", imp_last_error());
    char p[600];
    snprintf(p, sizeof p, "%s.png", stem);
    unsigned char *buf = NULL;
    size_t len = 0;
    CHECK_OK(imp_read_file(p, &buf, &len));
    CHECK(len > 1000 && memcmp(buf, "\x89PNG\r\n\x1a\n", 8) == 0);
    free(buf);
    snprintf(p, sizeof p, "%s.svg", stem);
    CHECK_OK(imp_read_file(p, &buf, &len));
    CHECK(buf && strstr((char *)buf, "<svg") != NULL);
    /* matplotlib drew our text, not a placeholder */
    CHECK(buf && strstr((char *)buf, "histogram") != NULL);
    free(buf);
    /* the .npz holds the spec and the data for restyling */
    snprintf(p, sizeof p, "%s.npz", stem);
    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, p));
    if (z) {
        char fmt[64];
        CHECK(imp_npz_meta(z) != NULL);
        CHECK_OK(imp_json_get_string(imp_npz_meta(z), "format", fmt, sizeof fmt));
        CHECK(strcmp(fmt, "impulse-figure-1") == 0);
        const double *d;
        size_t six[1] = {6};
        /* element 9 is the bar chart: values stored in group-major order */
        CHECK_OK(imp_npz_get_f64(z, "e9_values", 1, six, &d, NULL));
    }
    imp_npz_free(z);
    /* no temp files left behind */
    snprintf(p, sizeof p, "ls %s | grep -c tmp > /dev/null", tmpdir);
    CHECK(system(p) != 0);
    imp_figure_free(f);
}

/* A 3-D panel beside a flat one: the panel is drawn in 3-D (its z label is
 * in the SVG) and the spec says so; a path may end in NaN. */
static void test_figure_3d(void)
{
    imp_figure *f = imp_figure_new(1, 2, 10, 4);
    CHECK(f != NULL);
    if (!f) return;
    enum { N = 40 };
    double t[N], x[N], y[N], z[N], z2[N];
    for (int i = 0; i < N; i++) {
        t[i] = 0.05 * i;
        x[i] = cos(t[i]), y[i] = sin(t[i]), z[i] = t[i] * (2 - t[i]);
        z2[i] = i < N - 5 ? 0.9 * z[i] : NAN;
    }
    CHECK_OK(imp_figure_axes(f, 0, "height", "t", "z"));
    CHECK_OK(imp_figure_line(f, 0, t, z, N, "measured", "-|k"));
    CHECK_OK(imp_figure_axes3d(f, 1, "path", "x", "y", "height zlabel"));
    CHECK_OK(imp_figure_line3d(f, 1, x, y, z, N, "measured", "-|k"));
    CHECK_OK(imp_figure_line3d(f, 1, x, y, z2, N, "model", NULL));
    CHECK_FAILS(imp_figure_line3d(f, 1, x, y, NULL, N, NULL, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_figure_line3d(f, 2, x, y, z, N, NULL, NULL), IMP_ERR_INVALID);
    const char *stem = tpath("three_d");
    int st = imp_figure_save(f, stem);
    CHECK_MSG(st == IMP_OK, "imp_figure_save: %s", imp_last_error());
    char p[600];
    unsigned char *buf = NULL;
    size_t len = 0;
    snprintf(p, sizeof p, "%s.svg", stem);
    CHECK_OK(imp_read_file(p, &buf, &len));
    CHECK(buf && strstr((char *)buf, "height zlabel") != NULL);
    free(buf);
    snprintf(p, sizeof p, "%s.npz", stem);
    imp_npz *zf = NULL;
    CHECK_OK(imp_npz_load(&zf, p));
    CHECK(zf && imp_npz_meta(zf) && strstr(imp_npz_meta(zf), "\"three_d\":true") && imp_npz_find(zf, "e2_z"));
    imp_npz_free(zf);
    imp_figure_free(f);
}

static void write_script(const char *dir, const char *body)
{
    mkdir(dir, 0755);
    char p[600];
    snprintf(p, sizeof p, "%s/impulse_plot.py", dir);
    FILE *fp = fopen(p, "w");
    if (!fp) return;
    fputs(body, fp);
    fclose(fp);
}

static void test_figure_errors(void)
{
    CHECK(imp_figure_new(0, 1, 4, 3) == NULL);
    CHECK(imp_figure_new(1, 1, -4, 3) == NULL);
    imp_figure *f = imp_figure_new(1, 2, 6, 3);
    double x[3] = {1, 2, 3}, neg[3] = {0.1, -1, 0.1};
    CHECK_FAILS(imp_figure_line(f, 2, x, x, 3, NULL, NULL), IMP_ERR_INVALID);
    CHECK(msg_has("panel"));
    CHECK_FAILS(imp_figure_line(f, 0, x, NULL, 3, NULL, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_figure_line(f, 0, x, x, 0, NULL, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_figure_errorbar(f, 0, x, x, neg, 3, NULL, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_figure_polygon(f, 0, x, x, 2, 0, NULL, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_figure_histogram(f, 0, x, 3, 0, 0, NULL, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_figure_fill_between(f, 0, x, x, x, 3, NULL, NULL, 0), IMP_ERR_INVALID);
    CHECK_FAILS(imp_figure_ellipse(f, 0, 0, 0, -1, 1, 0, NULL, NULL), IMP_ERR_INVALID);
    CHECK_FAILS(imp_figure_limits(f, 0, 1, 0, NAN, NAN), IMP_ERR_INVALID);
    CHECK_OK(imp_figure_line(f, 0, x, x, 3, "ok", NULL));

    /* interpreter missing */
    setenv("IMPULSE_PYTHON", "/nonexistent/python3", 1);
    CHECK_FAILS(imp_figure_save(f, tpath("nopy")), IMP_ERR_UNSUPPORTED);
    CHECK(msg_has("/nonexistent/python3"));
    char p[600];
    snprintf(p, sizeof p, "%s.png", tpath("nopy"));
    CHECK(file_size(p) < 0);
    unsetenv("IMPULSE_PYTHON");

    /* the script fails: its last stderr line is reported */
    const char *bad = tpath("badscript");
    write_script(bad, "import sys\nsys.stderr.write('noise\\nthe real reason\\n')\nsys.exit(1)\n");
    setenv("IMPULSE_PYTHON_DIR", bad, 1);
    CHECK_FAILS(imp_figure_save(f, tpath("fails")), IMP_ERR_IO);
    CHECK(msg_has("the real reason") && !msg_has("noise"));
    /* the script reports a missing dependency (exit 3) */
    write_script(bad, "import sys\nprint('no matplotlib here', file=sys.stderr)\nsys.exit(3)\n");
    CHECK_FAILS(imp_figure_save(f, tpath("nodep")), IMP_ERR_UNSUPPORTED);
    CHECK(msg_has("no matplotlib here"));
    unsetenv("IMPULSE_PYTHON_DIR");

    /* output directory missing */
    CHECK_FAILS(imp_figure_save(f, tpath("no/such/dir/fig")), IMP_ERR_IO);
    imp_figure_free(f);
}

static void test_tables(void)
{
    const char *hdr[3] = {"method", "error", "n"};
    imp_table *t = imp_table_new(3, hdr);
    CHECK(t != NULL);
    if (!t) return;
    CHECK_OK(imp_table_align(t, 1, 'r'));
    CHECK_OK(imp_table_align(t, 2, 'c'));
    CHECK_FAILS(imp_table_align(t, 3, 'r'), IMP_ERR_INVALID);
    const char *r1[3] = {"CD-Lagrange", "0.12 \xC2\xB1 0.01", "10"};
    CHECK_OK(imp_table_add_row(t, r1));
    CHECK_OK(imp_table_cellf(t, "a|b"));
    CHECK_OK(imp_table_cellf(t, "%.1f", 2.5));
    CHECK_FAILS(imp_table_add_row(t, r1), IMP_ERR_INVALID); /* row incomplete */
    CHECK_OK(imp_table_cellf(t, "%d", 7));
    CHECK(imp_table_rows(t) == 2);
    char *md = NULL;
    CHECK_OK(imp_table_markdown(t, &md));
    const char *want_md = "| method      |       error |  n  |\n"
                          "| ----------- | ----------: | :-: |\n"
                          "| CD-Lagrange | 0.12 \xC2\xB1 0.01 | 10  |\n"
                          "| a\\|b        |         2.5 |  7  |\n";
    CHECK_MSG(md && strcmp(md, want_md) == 0, "markdown:\n%s", md ? md : "(null)");
    free(md);

    const char *r3[3] = {"quote \"x\", y", " pad", "line\nbreak"};
    CHECK_OK(imp_table_add_row(t, r3));
    char *csv = NULL;
    CHECK_OK(imp_table_csv(t, &csv));
    const char *want_csv = "method,error,n\n"
                           "CD-Lagrange,0.12 \xC2\xB1 0.01,10\n"
                           "a|b,2.5,7\n"
                           "\"quote \"\"x\"\", y\",\" pad\",\"line\nbreak\"\n";
    CHECK_MSG(csv && strcmp(csv, want_csv) == 0, "csv:\n%s", csv ? csv : "(null)");
    free(csv);
    CHECK_OK(imp_table_save_csv(t, tpath("t.csv")));
    CHECK_OK(imp_table_save_markdown(t, tpath("t.md")));
    CHECK(file_size(tpath("t.csv")) > 0 && file_size(tpath("t.md")) > 0);
    CHECK_FAILS(imp_table_save_csv(t, tpath("no/dir/t.csv")), IMP_ERR_IO);
    imp_table_free(t);
    CHECK(imp_table_new(0, hdr) == NULL);
}

static void check_fmt(double mean, double se, const char *want)
{
    char buf[64];
    imp_format_mean_se(buf, sizeof buf, mean, se);
    CHECK_MSG(strcmp(buf, want) == 0, "(%g, %g) -> '%s', want '%s'", mean, se, buf, want);
}

static void test_mean_se(void)
{
    check_fmt(0.123456, 0.00234, "0.1235 \xC2\xB1 0.0023");
    check_fmt(12345.6, 234, "12350 \xC2\xB1 230");
    check_fmt(3.14159, 0.5, "3.14 \xC2\xB1 0.50");
    check_fmt(1.5e-5, 2.3e-7, "(1.500 \xC2\xB1 0.023)e-05");
    check_fmt(2.5e7, 1.2e5, "(2.500 \xC2\xB1 0.012)e+07");
    check_fmt(0.5, 0.0996, "0.50 \xC2\xB1 0.10");
    check_fmt(-0.00001, 0.1, "0.00 \xC2\xB1 0.10");
    check_fmt(-2.0, 0.25, "-2.00 \xC2\xB1 0.25");
    check_fmt(1.0, 0.0, "1 \xC2\xB1 0");
    /* runs equal but for the last bits: no 18 decimals */
    check_fmt(0.942906873823999403, 5.6e-17, "0.942907 \xC2\xB1 0");
    check_fmt(NAN, 0.1, "nan \xC2\xB1 0.1");
}

static void write_text(const char *path, const char *text) { CHECK_OK(imp_write_file_atomic(path, text, strlen(text))); }

/* the figure spec plot-log wrote for `stem` (the drawing itself is not needed: no interpreter) */
static char *plot_log_spec(const char *const *logs, size_t n, const char *stem)
{
    setenv("IMPULSE_PYTHON", "/nonexistent/python3", 1);
    CHECK_FAILS(imp_report_plot_log(logs, NULL, n, stem), IMP_ERR_UNSUPPORTED);
    unsetenv("IMPULSE_PYTHON");
    char p[600];
    snprintf(p, sizeof p, "%s.npz", stem);
    imp_npz *z = NULL;
    CHECK_OK(imp_npz_load(&z, p));
    const char *meta = z ? imp_npz_meta(z) : NULL;
    char *spec = meta ? strdup(meta) : NULL;
    imp_npz_free(z);
    return spec;
}

/* plot-log names a curve by the model saved beside its log (OUT.log.jsonl next to OUT), and draws the
 * learning rate only when it changes (a constant one goes into the title) */
static void test_plot_log(void)
{
    imp_npz *m = imp_npz_new();
    double one = 1;
    size_t shape[1] = {1};
    CHECK_OK(imp_npz_add_f64(m, "params", 1, shape, &one));
    CHECK_OK(imp_npz_set_meta(m, "{\"kind\":\"model\",\"model\":\"cdl\"}"));
    CHECK_OK(imp_npz_save(m, tpath("run.npz")));
    imp_npz_free(m);
    write_text(tpath("run.npz.log.jsonl"), "{\"epoch\":1,\"loss\":2,\"state\":1.5,\"lr\":0.01}\n"
                                           "{\"epoch\":2,\"loss\":1,\"state\":0.5,\"lr\":0.01}\n");
    write_text(tpath("cos.log.jsonl"), "{\"epoch\":1,\"loss\":2,\"lr\":0.01}\n{\"epoch\":2,\"loss\":1,\"lr\":0.005}\n");
    const char *logs[2] = {tpath("run.npz.log.jsonl"), tpath("cos.log.jsonl")};
    char *spec = plot_log_spec(logs, 1, tpath("pl1"));
    CHECK_MSG(spec && strstr(spec, "\"label\":\"cdl\"") && !strstr(spec, "run.npz\"") && !strstr(spec, "\"panel\":2,") &&
                  strstr(spec, "learning rate 0.01 throughout"),
              "%s", spec ? spec : "(no spec)");
    free(spec);
    spec = plot_log_spec(logs, 2, tpath("pl2"));
    CHECK_MSG(spec && strstr(spec, "\"panel\":2,") && strstr(spec, "\"label\":\"cos\""), "%s", spec ? spec : "(no spec)");
    free(spec);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/impulse_test_report_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    /* a user's environment must not redirect the tests */
    unsetenv("IMPULSE_PYTHON");
    unsetenv("IMPULSE_PYTHON_DIR");
    test_tables();
    test_mean_se();
    test_figure_errors();
    test_figure_save();
    test_figure_3d();
    test_plot_log();
    char cmd[600];
    /* IMPULSE_KEEP_TMP=1 keeps the figures for a look */
    if (getenv("IMPULSE_KEEP_TMP")) {
        printf("kept %s\n", tmpdir);
        TEST_MAIN_END();
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    TEST_MAIN_END();
}
