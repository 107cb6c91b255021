/* The cube section of a sweep report (docs/cube.md): per test set (the
 * splits' test tosses, a --test file) a table with a row per model and
 * number of training tosses, mean ± standard error over the seeds done of
 * the full-toss metrics, and learning-curve figures; and the same results
 * as JSON lines (impulse reproduce cube --json). */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* every model of the comparison, in the tables' order */
static const char *const cube_models[] = {"impulse", "end-to-end", "rigid-identified", "mujoco", "ballistic"};
#define N_CUBE_MODELS 5

/* One finished cube result: its settings and its metrics rows. */
typedef struct cube_res {
    const char *model;
    long tosses, seed;
    int n_rows;               /* 1: split, 2: and the test file */
    const double *metrics;    /* n_rows x 3 */
    char test_name[256];
} cube_res;

static int cube_read(const sweep_result *r, cube_res *c)
{
    const char *strand = imp_sweep_task_get(r->task, "strand");
    if (!r->z || !strand || strcmp(strand, "cube")) return 0;
    const imp_npy_array *a = imp_npz_find(r->z, "metrics");
    if (!a || a->dtype != IMP_F64 || a->ndim != 2 || a->shape[1] != 3 || a->shape[0] < 1 || a->shape[0] > 2)
        return 0;
    memset(c, 0, sizeof *c);
    c->model = imp_sweep_task_get(r->task, "model");
    if (!c->model) return 0;
    if (imp_sweep_task_int(r->task, "tosses", 0, 1, 1 << 23, &c->tosses) ||
        imp_sweep_task_int(r->task, "seed", 0, 0, 1 << 30, &c->seed)) {
        imp_clear_error();
        return 0;
    }
    c->n_rows = (int)a->shape[0];
    c->metrics = a->data;
    if (c->n_rows == 2 && imp_json_get_string(r->meta, "test_name", c->test_name, sizeof c->test_name)) {
        imp_clear_error();
        c->n_rows = 1;
    }
    return 1;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The table and figure of one test set (row 0: the split; row 1: file `name`). */
static int test_section(const char *dir, const cube_res *c, int n, int row, const char *name, char **md, size_t *len)
{
    long *sizes = malloc((size_t)n * sizeof *sizes);
    double *v = malloc((size_t)n * 3 * sizeof *v);
    double *curve = malloc((size_t)n * N_CUBE_MODELS * 7 * sizeof *curve);
    if (!sizes || !v || !curve) {
        free(sizes), free(v), free(curve);
        return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    }
    int n_sizes = 0;
    for (int i = 0; i < n; i++) {
        int dup = 0;
        for (int k = 0; k < n_sizes; k++) dup |= sizes[k] == c[i].tosses;
        if (!dup) sizes[n_sizes++] = c[i].tosses;
    }
    qsort(sizes, (size_t)n_sizes, sizeof *sizes, cmp_long);
    int st = row ? sweep_appendf(md, len, "\n### Test: all tosses of %s\n\n", name)
                 : sweep_appendf(md, len, "\n### Test: the splits' test tosses\n\n");
    if (!st)
        st = sweep_appendf(md, len, "| model | training tosses | seeds | position error (%% width) | rotation error (deg) "
                                    "| penetration (%% width) |\n|---|---|---|---|---|---|\n");
    /* curve[(m * n_sizes + k) * 7 + ...]: x, pos mean, se, rot mean, se, pen mean, se */
    int have[N_CUBE_MODELS] = {0};
    for (int mi = 0; mi < N_CUBE_MODELS && !st; mi++)
        for (int k = 0; k < n_sizes && !st; k++) {
            double *cv = curve + ((size_t)mi * n_sizes + k) * 7;
            for (int q = 0; q < 7; q++) cv[q] = NAN;
            int m = 0;
            for (int i = 0; i < n; i++)
                if (!strcmp(c[i].model, cube_models[mi]) && c[i].tosses == sizes[k] && c[i].n_rows > row &&
                    (!row || !strcmp(c[i].test_name, name))) {
                    for (int q = 0; q < 3; q++) v[(size_t)q * n + m] = c[i].metrics[row * 3 + q];
                    m++;
                }
            if (!m) continue;
            have[mi] = 1;
            cv[0] = (double)sizes[k];
            char cell[3][64];
            for (int q = 0; q < 3; q++) {
                sweep_mean_se(v + (size_t)q * n, m, &cv[1 + 2 * q], &cv[2 + 2 * q]);
                sweep_fmt_mean_se(cell[q], sizeof cell[q], cv[1 + 2 * q], cv[2 + 2 * q], m);
            }
            st = sweep_appendf(md, len, "| %s | %ld | %d | %s | %s | %s |\n", cube_models[mi], sizes[k], m, cell[0],
                               cell[1], cell[2]);
        }
    /* the learning curves: position and rotation error against training tosses */
    if (!st) {
        imp_figure *fig = imp_figure_new(1, 2, 10, 4);
        if (!fig) st = IMP_ERR_NOMEM;
        if (!st) {
            imp_figure_title(fig, row ? name : "cube tosses: the splits' test tosses (mean ± standard error over seeds)");
            imp_figure_axes(fig, 0, "position error", "training tosses", "% of the width");
            imp_figure_axes(fig, 1, "rotation error", "training tosses", "degrees");
            imp_figure_logscale(fig, 0, 1, 1);
            imp_figure_logscale(fig, 1, 1, 0);
            double *x = malloc((size_t)n_sizes * 7 * sizeof *x);
            for (int mi = 0; x && mi < N_CUBE_MODELS; mi++) {
                if (!have[mi]) continue;
                double *y = x + n_sizes, *e = y + n_sizes, *y2 = e + n_sizes, *e2 = y2 + n_sizes;
                for (int k = 0; k < n_sizes; k++) {
                    const double *cv = curve + ((size_t)mi * n_sizes + k) * 7;
                    x[k] = cv[0], y[k] = cv[1], e[k] = cv[2], y2[k] = cv[3], e2[k] = cv[4];
                    if (!isfinite(y[k])) y[k] = NAN, e[k] = 0;
                    if (!isfinite(y2[k])) y2[k] = NAN, e2[k] = 0;
                }
                imp_figure_errorbar(fig, 0, x, y, e, (size_t)n_sizes, cube_models[mi], "o-");
                imp_figure_errorbar(fig, 1, x, y2, e2, (size_t)n_sizes, cube_models[mi], "o-");
            }
            free(x);
            char stem[300];
            snprintf(stem, sizeof stem, "cube_curve_%d", row);
            st = sweep_save_figure(fig, dir, stem, "learning curves", md, len);
        }
    }
    free(sizes), free(v), free(curve);
    return st;
}

int sweep_report_cube(const char *dir, const sweep_result *res, int n, char **md, size_t *md_len)
{
    cube_res *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    if (!c) return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    int m = 0, planned = 0;
    for (int i = 0; i < n; i++) {
        const char *strand = imp_sweep_task_get(res[i].task, "strand");
        planned += strand && !strcmp(strand, "cube");
        m += cube_read(&res[i], &c[m]);
    }
    int st = IMP_OK;
    if (!planned) {
        free(c);
        return IMP_OK;
    }
    st = sweep_appendf(md, md_len,
                       "\n## Cube tosses\n\nFull-toss rollouts from each test toss's first state (docs/cube.md): mean "
                       "over a test set's tosses, then mean ± standard error over the seeds (the splits).\n");
    if (!st && m) st = test_section(dir, c, m, 0, "split", md, md_len);
    /* each test file once */
    for (int i = 0; i < m && !st; i++) {
        if (c[i].n_rows < 2) continue;
        int seen = 0;
        for (int k = 0; k < i; k++) seen |= c[k].n_rows == 2 && !strcmp(c[k].test_name, c[i].test_name);
        if (!seen) st = test_section(dir, c, m, 1, c[i].test_name, md, md_len);
    }
    free(c);
    return st;
}

/* The JSON lines of one finished task (sweep_rows). */
static int cube_row(const sweep_result *r, void *user, char **out, size_t *len)
{
    (void)user;
    cube_res c;
    if (!cube_read(r, &c)) return IMP_OK;
    double secs = NAN, tt = NAN, tf = NAN;
    if (imp_json_get_number(r->meta, "seconds", &secs)) imp_clear_error();
    if (imp_json_get_number(r->meta, "test_tosses", &tt)) imp_clear_error();
    if (imp_json_get_number(r->meta, "test_file_tosses", &tf)) imp_clear_error();
    int st = IMP_OK;
    for (int k = 0; k < c.n_rows && !st; k++) {
        imp_json j;
        imp_json_init(&j);
        imp_json_begin_object(&j);
        imp_json_kv_string(&j, "model", c.model);
        imp_json_kv_int(&j, "tosses", c.tosses);
        imp_json_kv_int(&j, "seed", c.seed);
        imp_json_kv_string(&j, "test", k ? c.test_name : "split");
        imp_json_kv_number(&j, "test_tosses", k ? tf : tt);
        imp_json_kv_number(&j, "position_error_pct", c.metrics[3 * k]);
        imp_json_kv_number(&j, "rotation_error_deg", c.metrics[3 * k + 1]);
        imp_json_kv_number(&j, "penetration_pct", c.metrics[3 * k + 2]);
        imp_json_kv_number(&j, "seconds", secs);
        imp_json_end_object(&j);
        st = sweep_row_append(&j, out, len);
    }
    return st;
}

int imp_sweep_cube_rows(const char *dir, char **jsonl)
{
    return sweep_rows(dir, "cube", cube_row, NULL, jsonl);
}
