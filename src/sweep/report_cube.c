/* The cube section of a sweep report (docs/cube.md): per test set (the
 * splits' test tosses, a --test file) a table with a row per model and
 * number of training tosses, mean ± standard error over the seeds done of
 * the full-toss metrics, and learning-curve figures; and the same results
 * as JSON lines (impulse reproduce cube --json). */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/core.h"
#include "impulse/rigid_model.h"
#include "impulse/rigid_traj.h"

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
    double seconds;           /* the task's wall time, NaN if unknown */
    /* the split's first test tosses, predicted and measured (k x L x 7), their
       ids (k) and dt (1); NULL in results without them */
    const imp_npy_array *pred, *meas, *ids, *dt;
    const imp_npy_array *points, *corners; /* impulse: learned points, the box's corners (n x 3, m) */
} cube_res;

/* The optional arrays of a result: NULL unless of the expected shapes. */
static void cube_read_arrays(const sweep_result *r, cube_res *c)
{
    const imp_npy_array *p = imp_npz_find(r->z, "rollout_pred"), *m = imp_npz_find(r->z, "rollout_meas");
    const imp_npy_array *ids = imp_npz_find(r->z, "rollout_ids"), *dt = imp_npz_find(r->z, "rollout_dt");
    if (p && m && ids && dt && p->dtype == IMP_F64 && m->dtype == IMP_F64 && p->ndim == 3 && m->ndim == 3 &&
        p->shape[2] == IMP_RIGID_POSE && p->shape[0] >= 1 && p->shape[1] >= 1 &&
        !memcmp(p->shape, m->shape, 3 * sizeof *p->shape) && ids->dtype == IMP_I64 && ids->ndim == 1 &&
        ids->shape[0] == p->shape[0] && dt->dtype == IMP_F64 && dt->ndim == 1 && dt->shape[0] == 1 &&
        ((const double *)dt->data)[0] > 0)
        c->pred = p, c->meas = m, c->ids = ids, c->dt = dt;
    const imp_npy_array *pt = imp_npz_find(r->z, "points"), *co = imp_npz_find(r->z, "corners");
    if (pt && co && pt->dtype == IMP_F64 && co->dtype == IMP_F64 && pt->ndim == 2 && pt->shape[1] == 3 &&
        pt->shape[0] >= 1 && co->ndim == 2 && co->shape[0] == 8 && co->shape[1] == 3)
        c->points = pt, c->corners = co;
}

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
    if (imp_json_get_number(r->meta, "seconds", &c->seconds)) {
        imp_clear_error();
        c->seconds = NAN;
    }
    cube_read_arrays(r, c);
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
            if (!row) {
                /* issue #28's outside measurement of MuJoCo (docs/cube.md, "Published numbers") */
                const double x64 = 64, pos = 22.5, rot = 18.4;
                imp_figure_scatter(fig, 0, &x64, &pos, 1, "MuJoCo fitted, outside (#28)", "*|k");
                imp_figure_scatter(fig, 1, &x64, &rot, 1, "MuJoCo fitted, outside (#28)", "*|k");
                imp_figure_refline(fig, 0, 0, 38, "MuJoCo nominal, outside (#28)", ":|k");
                imp_figure_refline(fig, 1, 0, 18, "MuJoCo nominal, outside (#28)", ":|k");
            }
            char stem[300];
            snprintf(stem, sizeof stem, "cube_curve_%d", row);
            st = sweep_save_figure(fig, dir, stem, "learning curves", md, len);
        }
    }
    free(sizes), free(v), free(curve);
    return st;
}

/* The training time of the whole curve: per model, the sum of its tasks'
 * wall times (training, fits and the evaluation rollouts) over every size
 * and seed done. */
static int time_section(const cube_res *c, int n, char **md, size_t *len)
{
    int st = sweep_appendf(md, len, "\n### Training time of the whole curve\n\nPer model, the sum of its tasks' "
                                    "wall times over every number of training tosses and seed done (training or "
                                    "fitting, and the evaluation rollouts), on the machine and under the load the "
                                    "run had:\n\n| model | tasks | task seconds, sum | longest task, s |\n"
                                    "|---|---|---|---|\n");
    for (int mi = 0; mi < N_CUBE_MODELS && !st; mi++) {
        int tasks = 0, known = 0;
        double sum = 0, longest = 0;
        for (int i = 0; i < n; i++) {
            if (strcmp(c[i].model, cube_models[mi])) continue;
            tasks++;
            if (!isfinite(c[i].seconds)) continue;
            known++;
            sum += c[i].seconds;
            if (c[i].seconds > longest) longest = c[i].seconds;
        }
        if (!tasks) continue;
        if (known < tasks) st = sweep_appendf(md, len, "| %s | %d | %.4g (%d tasks without a time) | %.3g |\n",
                                             cube_models[mi], tasks, sum, tasks - known, longest);
        else st = sweep_appendf(md, len, "| %s | %d | %.4g | %.3g |\n", cube_models[mi], tasks, sum, longest);
    }
    return st;
}

/* The result drawn in the figures of test tosses and of the geometry: of
 * those with rollouts (impulse's learned points, if want_points), the first
 * at the largest number of training tosses at the lowest seed; NULL if none. */
static const cube_res *figure_pick(const cube_res *c, int n, int want_points)
{
    const cube_res *r = NULL;
    for (int i = 0; i < n; i++) {
        if (want_points ? !c[i].points : !c[i].pred) continue;
        if (!r || c[i].seed < r->seed || (c[i].seed == r->seed && c[i].tosses > r->tosses)) r = &c[i];
    }
    return r;
}

/* A few test tosses, measured against every model's prediction: the height
 * over time and the 3-D path. */
static int tosses_figure(const char *dir, const cube_res *c, int n, char **md, size_t *len)
{
    const cube_res *ref = figure_pick(c, n, 0);
    if (!ref)
        return sweep_appendf(md, len, "\n(No figure of test tosses: no result holds rollouts; ballistic keeps none, "
                                      "nor do results written by an impulse older than the figure.)\n");
    const long tosses = ref->tosses, seed = ref->seed;
    const size_t K = ref->pred->shape[0], L = ref->pred->shape[1];
    const double dt = ((const double *)ref->dt->data)[0];
    const int64_t *ids = ref->ids->data;
    imp_figure *fig = imp_figure_new((int)K, 2, 11, 3.6 * (double)K);
    double *buf = malloc(5 * L * sizeof *buf);
    if (!fig || !buf) {
        imp_figure_free(fig), free(buf);
        return imp_fail(IMP_ERR_NOMEM, "report: cube tosses figure");
    }
    double *t = buf, *x = buf + L, *y = x + L, *z = y + L;
    char title[160], models[256] = "";
    snprintf(title, sizeof title, "test tosses measured and predicted (%ld training tosses, seed %ld)", tosses, seed);
    int st = imp_figure_title(fig, title);
    for (size_t i = 0; i < L; i++) t[i] = dt * (double)i;
    /* the measured poses first, then each model's of the same split and tosses */
    for (int mi = -1; mi < N_CUBE_MODELS && !st; mi++) {
        const cube_res *r = ref;
        if (mi >= 0) {
            r = NULL;
            for (int i = 0; i < n && !r; i++)
                if (c[i].pred && !strcmp(c[i].model, cube_models[mi]) && c[i].tosses == tosses && c[i].seed == seed &&
                    c[i].pred->shape[0] == K && c[i].pred->shape[1] == L &&
                    !memcmp(c[i].ids->data, ids, K * sizeof *ids))
                    r = &c[i];
            if (!r) continue;
            size_t w = strlen(models);
            snprintf(models + w, sizeof models - w, "%s%s", w ? ", " : "", cube_models[mi]);
        }
        const double *a = mi < 0 ? r->meas->data : r->pred->data;
        const char *label = mi < 0 ? "measured" : cube_models[mi], *style = mi < 0 ? "-|k" : NULL;
        for (size_t k = 0; k < K && !st; k++) {
            for (size_t i = 0; i < L; i++) {
                const double *row = a + (k * L + i) * IMP_RIGID_POSE;
                x[i] = row[4], y[i] = row[5], z[i] = row[6];
            }
            if (mi < 0) {
                char pt[64];
                snprintf(pt, sizeof pt, "toss %lld: height", (long long)ids[k]);
                st = imp_figure_axes(fig, 2 * (int)k, pt, "time (s)", "height of the centre (m)");
                snprintf(pt, sizeof pt, "toss %lld: path", (long long)ids[k]);
                if (!st) st = imp_figure_axes3d(fig, 2 * (int)k + 1, pt, "x (m)", "y (m)", "z (m)");
            }
            if (!st) st = imp_figure_line(fig, 2 * (int)k, t, z, L, label, style);
            if (!st) st = imp_figure_line3d(fig, 2 * (int)k + 1, x, y, z, L, label, style);
        }
    }
    free(buf);
    if (st) {
        imp_figure_free(fig);
        return st;
    }
    st = sweep_appendf(md, len, "\n### Test tosses, measured and predicted\n\nThe split's first %zu test tosses "
                                "(%ld training tosses, seed %ld; toss numbers of the data), each model rolled out "
                                "from the toss's first state: %s (ballistic flight is left out: it falls through "
                                "the table).\n", K, tosses, seed, models);
    return st ? st : sweep_save_figure(fig, dir, "cube_tosses", "test tosses: height over time and 3-D path", md, len);
}

/* impulse's learned contact points against the box's corners: a 3-D view
 * and, for eight points (the corners' order), each one's displacement. */
static int geometry_section(const char *dir, const cube_res *c, int n, char **md, size_t *len)
{
    const cube_res *r = figure_pick(c, n, 1);
    if (!r) return IMP_OK;
    const long tosses = r->tosses, seed = r->seed;
    const size_t P = r->points->shape[0];
    const double *pts = r->points->data, *cor = r->corners->data;
    int st = sweep_appendf(md, len, "\n### impulse's learned contact geometry\n\nThe learned contact points (%ld "
                                    "training tosses, seed %ld; body frame) against the corners of the measured "
                                    "cube's nominal box.\n", tosses, seed);
    if (!st && P == 8) {
        st = sweep_appendf(md, len, "\n| corner | learned x, y, z (mm) | learned minus corner (mm) |\n|---|---|---|\n");
        for (size_t k = 0; k < 8 && !st; k++) {
            const double *p = pts + 3 * k, *q = cor + 3 * k;
            st = sweep_appendf(md, len, "| %zu (%c,%c,%c) | %.2f, %.2f, %.2f | %+.2f, %+.2f, %+.2f |\n", k,
                               q[0] < 0 ? '-' : '+', q[1] < 0 ? '-' : '+', q[2] < 0 ? '-' : '+', 1e3 * p[0],
                               1e3 * p[1], 1e3 * p[2], 1e3 * (p[0] - q[0]), 1e3 * (p[1] - q[1]),
                               1e3 * (p[2] - q[2]));
        }
    }
    if (st) return st;
    imp_figure *fig = imp_figure_new(1, P == 8 ? 2 : 1, 12.5, 4.6);
    if (!fig) return IMP_ERR_NOMEM;
    /* the box's 12 edges, each pair of corners differing in one axis, NaN between */
    double e[3][36], cx[8], cy[8], cz[8], px[IMP_RIGID_MAX_POINTS], py[IMP_RIGID_MAX_POINTS], pz[IMP_RIGID_MAX_POINTS];
    int ne = 0;
    for (int k = 0; k < 8; k++) {
        cx[k] = 1e3 * cor[3 * k], cy[k] = 1e3 * cor[3 * k + 1], cz[k] = 1e3 * cor[3 * k + 2];
        for (int a = 0; a < 3; a++) {
            if (k >> a & 1) continue;
            const int m = k | 1 << a;
            for (int d = 0; d < 3; d++) {
                e[d][ne] = 1e3 * cor[3 * k + d];
                e[d][ne + 1] = 1e3 * cor[3 * m + d];
                e[d][ne + 2] = NAN;
            }
            ne += 3;
        }
    }
    const size_t np = P < IMP_RIGID_MAX_POINTS ? P : IMP_RIGID_MAX_POINTS;
    for (size_t k = 0; k < np; k++) px[k] = 1e3 * pts[3 * k], py[k] = 1e3 * pts[3 * k + 1], pz[k] = 1e3 * pts[3 * k + 2];
    st = imp_figure_title(fig, "impulse's learned contact points against the cube's corners (body frame)");
    if (!st) st = imp_figure_axes3d(fig, 0, "points and corners", "x (mm)", "y (mm)", "z (mm)");
    if (!st) st = imp_figure_line3d(fig, 0, e[0], e[1], e[2], (size_t)ne, "cube (nominal box)", "-|0.6");
    if (!st) st = imp_figure_line3d(fig, 0, cx, cy, cz, 8, "corners", "s|k");
    if (!st) st = imp_figure_line3d(fig, 0, px, py, pz, np, "learned points", "o|C3");
    if (!st && P == 8) {
        static const char *const cats[8] = {"0", "1", "2", "3", "4", "5", "6", "7"}, *const groups[3] = {"x", "y", "z"};
        double v[24];
        for (int g = 0; g < 3; g++)
            for (int k = 0; k < 8; k++) v[g * 8 + k] = 1e3 * (pts[3 * k + g] - cor[3 * k + g]);
        st = imp_figure_axes(fig, 1, "learned minus corner", "corner", "mm");
        if (!st) st = imp_figure_bars(fig, 1, cats, 8, groups, 3, v, NULL);
    }
    if (st) {
        imp_figure_free(fig);
        return st;
    }
    return sweep_save_figure(fig, dir, "cube_geometry", "learned contact geometry against the cube's corners", md, len);
}

/* The published numbers beside ours: what could be found (docs/cube.md). */
static int published_section(char **md, size_t *len)
{
    return sweep_appendf(
        md, len,
        "\n### Published numbers\n\nContactNets (Pfrommer, Halm, Posa, CoRL 2020, arXiv 2009.11193) shows its "
        "results on these tosses in fig. 5 (a: position error, b: rotation error, c: penetration, against the "
        "number of training tosses) as plots only. No value of fig. 5 could be found in the paper's text or in its "
        "code (github.com/DAIRLab/contact-nets: no results files; the plots are drawn from TensorBoard scalars of "
        "each run), so none is placed here. The numbers that could be found are issue #28's outside measurement "
        "on later tosses of the same experiment (full-toss rollouts from the first state), beside ours in the "
        "tables above:\n\n| model | training tosses | position error (%% width) | rotation error (deg) | source "
        "|\n|---|---|---|---|---|\n"
        "| MuJoCo, nominal (mu 0.15, default contact) | 0 | 38 | 18 | issue #28, measured from outside |\n"
        "| MuJoCo, mu, solref and ground fitted | 64 | 22.5 | 18.4 | issue #28, measured from outside |\n"
        "| ballistic flight (no contact) | 0 | 747 | | issue #28, measured from outside |\n");
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
    if (!st && m) st = published_section(md, md_len);
    if (!st && m) st = time_section(c, m, md, md_len);
    if (!st && m) st = tosses_figure(dir, c, m, md, md_len);
    if (!st && m) st = geometry_section(dir, c, m, md, md_len);
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
