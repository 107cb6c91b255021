/* The constrained-network section of a sweep report: Finzi et al. 2020
 * figs 5/7 (mean over test trajectories of the geometric-mean relative
 * error), ours beside the paper's, the bar chart of the figure, the error,
 * energy and constraint curves over the rollout (appendix B), and fig 6's
 * data efficiency when the plan varies the training-set size. */
#define _POSIX_C_SOURCE 200809L
#include "sweep_internal.h"

#include "impulse/core.h"
#include "impulse/io.h"
#include "impulse/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_MODELS 5
#define MAX_SYSTEMS 32
#define MAX_SIZES 32

static const char *const models[N_MODELS + 1] = {"chnn", "clnn", "hnn", "delan", "node", "gt-pert"};

/* [chnn] reference notes section 4 (recomputed from the CSVs behind the
 * paper's figs 5/7, n_train = 800): CHNN CLNN HNN DeLaN NODE GT+1e-4 pert. */
static const struct {
    const char *system;
    double v[N_MODELS + 1];
} paper[] = {
    {"pendulum-chain:1", {7.46e-5, 7.40e-5, 1.80e-4, 4.21e-4, 1.09e-3, 4.86e-5}},
    {"pendulum-chain:2", {5.26e-4, 1.80e-4, 1.34e-2, 7.08e-3, 1.21e-1, 7.96e-5}},
    {"pendulum-chain:3", {3.34e-3, 1.98e-3, 9.70e-2, 8.72e-2, 2.97e-1, 3.53e-4}},
    {"pendulum-chain:5", {3.61e-3, 4.30e-3, 3.57e-1, 3.50e-1, 4.48e-1, 2.49e-4}},
    {"coupled-pendulums:3", {1.81e-2, 1.89e-2, 8.23e-2, 7.32e-2, 7.86e-2, 1.44e-4}},
    {"magnet-pendulum", {4.31e-2, 4.79e-2, 1.47e-1, 1.68e-1, 1.87e-1, 9.18e-4}},
    {"gyroscope", {2.07e-5, 3.17e-5, 1.84e-2, 2.14e-2, 6.71e-2, 2.68e-5}},
    {"rotor", {6.23e-6, 2.05e-5, 2.79e-1, 3.04e-1, 4.13e-1, 1.33e-4}},
};

static double paper_value(const char *system, int model, long n_train)
{
    if (n_train != 800) return NAN;
    for (size_t i = 0; i < sizeof paper / sizeof paper[0]; i++)
        if (!strcmp(paper[i].system, system)) return paper[i].v[model];
    return NAN;
}

/* [chnn] reference notes section 4, fig 6 right: the 2-pendulum's mean
 * error at the training-set sizes the notes give, CHNN CLNN HNN DeLaN NODE
 * (the paper's other sizes are not recomputed there). */
#define N_FIG6 7
static const long fig6_sizes[N_FIG6] = {10, 20, 100, 200, 800, 2000, 10000};
static const double fig6[N_MODELS][N_FIG6] = {
    {5.5e-2, 4.5e-2, 5.9e-3, 9.8e-3, 3.9e-4, 9.5e-5, 3.4e-5},
    {5.3e-2, 3.7e-2, 6.4e-3, 1.0e-2, 4.6e-4, 3.7e-4, 3.1e-5},
    {4.4e-1, 3.7e-1, 7.7e-2, 6.3e-2, 1.2e-2, 3.5e-3, 4.5e-4},
    {4.1e-1, 3.3e-1, 6.4e-2, 5.0e-2, 7.8e-3, 3.0e-3, 3.7e-4},
    {4.5e-1, 3.9e-1, 2.4e-1, 2.1e-1, 1.2e-1, 8.0e-2, 3.5e-2},
};

static double paper_fig6(const char *system, int model, long n_train)
{
    if (strcmp(system, "pendulum-chain:2") || model < 0 || model >= N_MODELS) return NAN;
    for (int i = 0; i < N_FIG6; i++)
        if (fig6_sizes[i] == n_train) return fig6[model][i];
    return NAN;
}

static int model_index(const char *name)
{
    for (int i = 0; i <= N_MODELS; i++)
        if (!strcmp(models[i], name)) return i;
    return -1;
}

/* One cell: a system, a model and a training-set size over seeds. */
typedef struct cell {
    double sum, min, max;
    int n, planned;
    int diverged; /* finished seeds whose training diverged (their best epoch's model is evaluated) */
    const double *curve[3]; /* the first finished seed's mean curves */
    int T;
    double dt;
} cell;

/* A row is a system at one training budget (epochs): tasks of the same
 * system and model with other budgets get a row of their own, labelled
 * "system, E epochs", never averaged into one cell. */
typedef struct grid {
    const char *systems[MAX_SYSTEMS]; /* the system's name (the paper's values) */
    char labels[MAX_SYSTEMS][96];    /* the row's label */
    long epochs[MAX_SYSTEMS];
    int n_sys;
    long sizes[MAX_SIZES];
    int n_sizes;
    int any_model[N_MODELS + 1];
    cell cells[MAX_SYSTEMS][MAX_SIZES][N_MODELS + 1];
} grid;

/* epochs < 0: the system's first row, whatever its budget (the noise floors) */
static int find_or_add_system(grid *g, const char *sys, long epochs)
{
    int first = -1;
    for (int i = 0; i < g->n_sys; i++)
        if (!strcmp(g->systems[i], sys)) {
            if (first < 0) first = i;
            if (epochs < 0 || g->epochs[i] == epochs) return i;
        }
    if (g->n_sys == MAX_SYSTEMS) return -1;
    int k = g->n_sys++;
    g->systems[k] = sys;
    g->epochs[k] = epochs;
    if (first < 0) snprintf(g->labels[k], sizeof g->labels[k], "%s", sys);
    else snprintf(g->labels[k], sizeof g->labels[k], "%s, %ld epochs", sys, epochs);
    return k;
}

static int find_or_add_size(grid *g, long n)
{
    for (int i = 0; i < g->n_sizes; i++)
        if (g->sizes[i] == n) return i;
    if (g->n_sizes == MAX_SIZES) return -1;
    g->sizes[g->n_sizes] = n;
    return g->n_sizes++;
}

static void collect(grid *g, const sweep_result *res, int n)
{
    static const char *const curves[3] = {"mean_rel_err", "mean_energy_err", "mean_violation"};
    /* models first (they define the training-set sizes), then the noise
     * floors, which do not depend on the training set and go with the first
     * size */
    for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n; i++) {
        const imp_sweep_task *t = res[i].task;
        const char *sys = imp_sweep_task_get(t, "system"), *model = imp_sweep_task_get(t, "model");
        if (strcmp(imp_sweep_task_get(t, "strand"), "chnn") || !sys || !model) continue;
        int mi = model_index(model);
        if ((mi == N_MODELS) != (pass == 1)) continue;
        long ntr = 800;
        if (mi < 0 || imp_sweep_task_int(t, "n_train", 800, 1, 1000000, &ntr)) {
            imp_clear_error();
            continue;
        }
        long epochs = -1;
        if (mi < N_MODELS && imp_sweep_task_int(t, "epochs", 2000, 0, 1000000, &epochs)) {
            imp_clear_error();
            continue;
        }
        int si = find_or_add_system(g, sys, epochs);
        int ni = mi == N_MODELS && g->n_sizes ? 0 : find_or_add_size(g, ntr);
        if (si < 0 || ni < 0) continue;
        cell *c = &g->cells[si][ni][mi];
        c->planned++;
        g->any_model[mi] = 1;
        double v;
        if (!res[i].meta || imp_json_get_number(res[i].meta, "mean_geo_rel_err", &v)) {
            imp_clear_error();
            continue;
        }
        if (c->n == 0 || v < c->min) c->min = v;
        if (c->n == 0 || v > c->max) c->max = v;
        c->sum += v;
        char stop[16];
        if (imp_json_get_string(res[i].meta, "stop", stop, sizeof stop)) imp_clear_error();
        else if (!strcmp(stop, "diverged")) c->diverged++;
        if (c->n++ == 0 && mi < N_MODELS) {
            double dt = 0;
            if (imp_json_get_number(res[i].meta, "dt", &dt)) imp_clear_error();
            c->dt = dt;
            for (int k = 0; k < 3; k++) {
                const imp_npy_array *a = imp_npz_find(res[i].z, curves[k]);
                if (!a || a->dtype != IMP_F64 || a->ndim != 1) continue;
                c->curve[k] = a->data;
                c->T = (int)a->count;
            }
        }
    }
}

static void format_cell(const cell *c, char *out, size_t cap)
{
    if (!c->planned) snprintf(out, cap, "-");
    else if (!c->n) snprintf(out, cap, "missing");
    else if (c->n == 1) snprintf(out, cap, "%.3g%s", c->sum, c->diverged ? " (diverged; best epoch)" : "");
    else if (c->diverged)
        snprintf(out, cap, "%.3g [%.2g, %.2g] (%d seeds, %d diverged; best epoch)", c->sum / c->n, c->min, c->max,
                 c->n, c->diverged);
    else snprintf(out, cap, "%.3g [%.2g, %.2g] (%d seeds)", c->sum / c->n, c->min, c->max, c->n);
}

/* the runs that diverged: which, where, and which epoch's model was evaluated */
static int diverged_notes(const sweep_result *res, int n, char **md, size_t *len)
{
    int st = IMP_OK, any = 0;
    for (int i = 0; i < n && !st; i++) {
        if (!res[i].meta || strcmp(imp_sweep_task_get(res[i].task, "strand"), "chnn")) continue;
        char stop[16], msg[600];
        if (imp_json_get_string(res[i].meta, "stop", stop, sizeof stop)) {
            imp_clear_error();
            continue;
        }
        if (strcmp(stop, "diverged")) continue;
        if (imp_json_get_string(res[i].meta, "diverged", msg, sizeof msg)) {
            imp_clear_error();
            snprintf(msg, sizeof msg, "diverged");
        }
        if (!any++)
            st = sweep_appendf(md, len, "\nTrainings that diverged (the task key diverged=keep-best): the cell is the "
                                        "best epoch's model, evaluated like the others.\n\n");
        if (!st) st = sweep_appendf(md, len, "- %s: %s\n", res[i].task->id, msg);
    }
    return st;
}

/* figs 5/7: systems x models at the first training-set size */
static int main_table(const grid *g, char **md, size_t *len, imp_json *j)
{
    int st = sweep_appendf(md, len,
                           "\n## Constrained networks (Finzi et al. 2020, figs 5/7)\n\n"
                           "Mean over the test trajectories of the geometric-mean relative error of the rollouts "
                           "(n_train = %ld); each cell ours (mean over the finished seeds; [min, max] when several) / "
                           "the paper's. '-' not planned, 'missing' planned but not finished.\n\n| system |",
                           g->sizes[0]);
    for (int mi = 0; mi <= N_MODELS && !st; mi++)
        if (g->any_model[mi]) st = sweep_appendf(md, len, " %s |", mi == N_MODELS ? "GT + 1e-4 pert" : models[mi]);
    if (!st) st = sweep_appendf(md, len, "\n|---|");
    for (int mi = 0; mi <= N_MODELS && !st; mi++)
        if (g->any_model[mi]) st = sweep_appendf(md, len, "---|");
    if (!st) st = sweep_appendf(md, len, "\n");
    for (int si = 0; si < g->n_sys && !st; si++) {
        st = sweep_appendf(md, len, "| %s |", g->labels[si]);
        for (int mi = 0; mi <= N_MODELS && !st; mi++) {
            if (!g->any_model[mi]) continue;
            const cell *c = &g->cells[si][0][mi];
            double p = paper_value(g->systems[si], mi, g->sizes[0]);
            char ours[96], theirs[32] = "";
            format_cell(c, ours, sizeof ours);
            if (isfinite(p) && c->planned) snprintf(theirs, sizeof theirs, " / %.3g", p);
            st = sweep_appendf(md, len, " %s%s |", ours, theirs);
        }
        if (!st) st = sweep_appendf(md, len, "\n");
    }
    imp_json_begin_array(j);
    for (int si = 0; si < g->n_sys; si++)
        for (int ni = 0; ni < g->n_sizes; ni++)
            for (int mi = 0; mi <= N_MODELS; mi++) {
                const cell *c = &g->cells[si][ni][mi];
                if (!c->n) continue;
                imp_json_begin_object(j);
                imp_json_kv_string(j, "system", g->systems[si]);
                if (g->epochs[si] >= 0) imp_json_kv_int(j, "epochs", g->epochs[si]);
                imp_json_kv_string(j, "model", models[mi]);
                imp_json_kv_int(j, "n_train", g->sizes[ni]);
                imp_json_kv_number(j, "mean_geo_rel_err", c->sum / c->n);
                imp_json_kv_number(j, "min", c->min);
                imp_json_kv_number(j, "max", c->max);
                imp_json_kv_int(j, "seeds", c->n);
                if (c->diverged) imp_json_kv_int(j, "diverged", c->diverged);
                double p = paper_value(g->systems[si], mi, g->sizes[ni]);
                imp_json_kv_number(j, "paper", isfinite(p) ? p : paper_fig6(g->systems[si], mi, g->sizes[ni]));
                imp_json_end_object(j);
            }
    imp_json_end_array(j);
    return st;
}

/* fig 6: per system, training-set sizes x models, ours / the paper's */
static int size_table(const grid *g, char **md, size_t *len)
{
    int st = IMP_OK;
    for (int si = 0; si < g->n_sys && !st; si++) {
        st = sweep_appendf(md, len, "\n### Data efficiency, %s (Finzi et al. 2020, fig 6)\n\n", g->labels[si]);
        int fig6_row = !strcmp(g->systems[si], "pendulum-chain:2");
        if (!st && fig6_row) st = sweep_appendf(md, len, "Each cell ours / the paper's fig 6 where the paper has the size.");
        if (!st && g->epochs[si] >= 0 && g->epochs[si] < 2000)
            st = sweep_appendf(md, len, "%sOurs trained for %ld epochs, fewer than the reference's 2000: compare the "
                                        "trend.", fig6_row ? " " : "", g->epochs[si]);
        if (!st) st = sweep_appendf(md, len, "\n\n");
        if (!st) st = sweep_appendf(md, len, "| n_train |");
        for (int mi = 0; mi < N_MODELS && !st; mi++)
            if (g->any_model[mi]) st = sweep_appendf(md, len, " %s |", models[mi]);
        if (!st) st = sweep_appendf(md, len, "\n|---|");
        for (int mi = 0; mi < N_MODELS && !st; mi++)
            if (g->any_model[mi]) st = sweep_appendf(md, len, "---|");
        for (int ni = 0; ni < g->n_sizes && !st; ni++) {
            st = sweep_appendf(md, len, "\n| %ld |", g->sizes[ni]);
            for (int mi = 0; mi < N_MODELS && !st; mi++) {
                if (!g->any_model[mi]) continue;
                const cell *c = &g->cells[si][ni][mi];
                double p = paper_fig6(g->systems[si], mi, g->sizes[ni]);
                char ours[96], theirs[32] = "";
                format_cell(c, ours, sizeof ours);
                if (isfinite(p) && c->planned) snprintf(theirs, sizeof theirs, " / %.3g", p);
                st = sweep_appendf(md, len, " %s%s |", ours, theirs);
            }
        }
        if (!st) st = sweep_appendf(md, len, "\n");
    }
    return st;
}

/* fig 6 as a figure: error against training-set size, log-log, one panel
 * per system; the paper's values dashed in the same colour */
static int size_figure(const grid *g, const char *dir, char **md, size_t *len)
{
    int cols = g->n_sys < 3 ? g->n_sys : 3, rows = (g->n_sys + cols - 1) / cols;
    imp_figure *fig = imp_figure_new(rows, cols, 4.5 * cols, 3.4 * rows + 0.4);
    if (!fig) return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    int st = IMP_OK;
    double x[MAX_SIZES], y[MAX_SIZES], px[N_FIG6], py[N_FIG6];
    for (int si = 0; si < g->n_sys && !st; si++) {
        imp_figure_axes(fig, si, g->labels[si], "training trajectories",
                        si % cols == 0 ? "relative error (dimensionless),\ngeometric mean over the rollout" : NULL);
        imp_figure_logscale(fig, si, 1, 1);
        for (int mi = 0; mi < N_MODELS && !st; mi++) {
            if (!g->any_model[mi]) continue;
            size_t n = 0, np = 0;
            for (int ni = 0; ni < g->n_sizes; ni++) {
                const cell *c = &g->cells[si][ni][mi];
                if (c->n) x[n] = (double)g->sizes[ni], y[n++] = c->sum / c->n;
            }
            for (int k = 0; k < N_FIG6; k++) {
                double p = paper_fig6(g->systems[si], mi, fig6_sizes[k]);
                if (isfinite(p)) px[np] = (double)fig6_sizes[k], py[np++] = p;
            }
            char style[16], label[48];
            snprintf(style, sizeof style, "o-|C%d", mi);
            if (n) st = imp_figure_line(fig, si, x, y, n, models[mi], style);
            snprintf(style, sizeof style, "x--|C%d", mi);
            snprintf(label, sizeof label, "%s (paper)", models[mi]);
            if (!st && np) st = imp_figure_line(fig, si, px, py, np, label, style);
        }
    }
    if (st) {
        imp_figure_free(fig);
        return st;
    }
    return sweep_save_figure(fig, dir, "chnn_data_efficiency", "data efficiency: error against training-set size, "
                                                               "ours (solid) and the paper's fig 6 (dashed)", md, len);
}

static int bar_figure(const grid *g, const char *dir, char **md, size_t *len)
{
    const char *groups[N_MODELS + 1];
    int gmap[N_MODELS + 1], ng = 0;
    for (int mi = 0; mi <= N_MODELS; mi++)
        if (g->any_model[mi]) {
            groups[ng] = mi == N_MODELS ? "GT + 1e-4 pert" : models[mi];
            gmap[ng++] = mi;
        }
    int n_sys = g->n_sys, have_paper = 0;
    double *vals = calloc((size_t)2 * ng * n_sys, sizeof(double));
    if (!vals) return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    for (int k = 0; k < ng; k++)
        for (int si = 0; si < n_sys; si++) {
            const cell *c = &g->cells[si][0][gmap[k]];
            double p = paper_value(g->systems[si], gmap[k], g->sizes[0]);
            /* a system's further rows (other budgets) show the paper's value
             * only beside a planned cell, not its whole row again */
            int further = 0;
            for (int sj = 0; sj < si; sj++) further |= !strcmp(g->systems[sj], g->systems[si]);
            if (further && !c->planned) p = NAN;
            vals[k * n_sys + si] = c->n ? c->sum / c->n : NAN;
            vals[(size_t)ng * n_sys + k * n_sys + si] = p;
            have_paper |= isfinite(p);
        }
    /* the paper's panel only where it has values (n_train = 800) */
    int panels = have_paper ? 2 : 1;
    imp_figure *fig = imp_figure_new(panels, 1, 9, 3.5 * panels);
    if (!fig) {
        free(vals);
        return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    }
    /* the rollout's relative error ||z^ - z|| / (||z^|| + ||z||), geometric mean over its time steps, mean over
     * the test trajectories */
    const char *ylabel = "relative error (dimensionless),\ngeometric mean over the rollout";
    imp_figure_axes(fig, 0, have_paper ? "ours (impulse, this sweep)" : "impulse, this sweep", NULL, ylabel);
    if (have_paper) imp_figure_axes(fig, 1, "the paper's (Finzi et al. 2020, figs 5/7)", NULL, ylabel);
    /* both panels on the same axes (every planned system, one value range),
     * so ours and the paper's compare by eye and missing cells show as gaps */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < (size_t)panels * ng * n_sys; i++)
        if (isfinite(vals[i]) && vals[i] > 0) {
            lo = fmin(lo, vals[i]);
            hi = fmax(hi, vals[i]);
        }
    int st = IMP_OK;
    const char *row_labels[MAX_SYSTEMS];
    for (int si = 0; si < n_sys; si++) row_labels[si] = g->labels[si];
    for (int p = 0; p < panels && !st; p++) {
        st = imp_figure_logscale(fig, p, 0, 1);
        if (!st && lo <= hi) st = imp_figure_limits(fig, p, -0.5, n_sys - 0.5, lo / 2, hi * 2);
        if (!st)
            st = imp_figure_bars(fig, p, row_labels, (size_t)n_sys, groups, (size_t)ng, vals + (size_t)p * ng * n_sys,
                                 NULL);
    }
    if (st) {
        free(vals);
        imp_figure_free(fig);
        return st;
    }
    free(vals);
    /* the caption says what the figure holds: the paper's panel only where it has values */
    return sweep_save_figure(fig, dir, "chnn_bars",
                             have_paper ? "mean geometric-mean relative error, ours (top) and the paper's (bottom)"
                                        : "mean geometric-mean relative error of this sweep (the paper gives values "
                                          "at 800 training trajectories only)",
                             md, len);
}

/* HNN, DeLaN and NODE: models of the generalised coordinates */
static int generalised_model(int mi)
{
    return !strcmp(models[mi], "hnn") || !strcmp(models[mi], "delan") || !strcmp(models[mi], "node");
}

static int curve_figures(const grid *g, const char *dir, char **md, size_t *len)
{
    static const char *const stems[3] = {"chnn_rel_err", "chnn_energy", "chnn_constraint"};
    static const char *const ylabels[3] = {"relative error $\\Vert\\hat z - z\\Vert / (\\Vert\\hat z\\Vert + \\Vert z\\Vert)$",
                                           "energy error $|\\hat H - H| / (|\\hat H| + |H|)$",
                                           "constraint violation $\\Vert\\Psi(x, v)\\Vert$ (m, m/s)"};
    int st = IMP_OK;
    int cols = g->n_sys < 4 ? g->n_sys : 4, rows = (g->n_sys + cols - 1) / cols;
    for (int k = 0; k < 3 && !st; k++) {
        imp_figure *fig = imp_figure_new(rows, cols, 3.0 * cols, 2.6 * rows + 0.4);
        if (!fig) return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
        int drawn = 0;
        /* the constraint violation of the models in generalised coordinates (HNN, DeLaN, NODE) is rounding:
         * their positions are made from the coordinates, so they meet the constraints by construction. Not
         * drawn (a log axis would stretch down to 1e-15 for them); the caption says so with their largest. */
        double exact_max = -1;
        for (int si = 0; si < g->n_sys && !st; si++) {
            imp_figure_axes(fig, si, g->labels[si], "time (s)", si % cols == 0 ? ylabels[k] : NULL);
            imp_figure_logscale(fig, si, 0, 1);
            for (int mi = 0; mi < N_MODELS && !st; mi++) {
                const cell *c = &g->cells[si][0][mi];
                if (!c->n || !c->curve[k] || c->T < 2) continue;
                if (k == 2 && generalised_model(mi)) {
                    for (int i = 0; i < c->T; i++) exact_max = fmax(exact_max, c->curve[k][i]);
                    continue;
                }
                double *t = malloc((size_t)c->T * sizeof(double));
                if (!t) st = imp_fail(IMP_ERR_NOMEM, "report: out of memory");
                for (int i = 0; t && i < c->T; i++) t[i] = i * c->dt;
                /* from the first step on: at t = 0 the errors are ~0 and
                 * would stretch the log axis */
                if (t) st = imp_figure_line(fig, si, t + 1, c->curve[k] + 1, (size_t)c->T - 1, models[mi], NULL);
                free(t);
                drawn++;
            }
        }
        char caption[512];
        snprintf(caption, sizeof caption, "%s", ylabels[k]);
        if (exact_max >= 0)
            snprintf(caption, sizeof caption,
                     "%s of CHNN and CLNN. HNN, DeLaN and NODE are not drawn: they predict generalised coordinates "
                     "(angles), from which the positions are made, so they meet the constraints by construction "
                     "(their largest violation here, %.1e, is rounding)",
                     ylabels[k], exact_max);
        if (!st && !drawn && exact_max >= 0) st = sweep_appendf(md, len, "\n%s.\n", caption);
        if (st || !drawn) {
            imp_figure_free(fig);
            continue;
        }
        st = sweep_save_figure(fig, dir, stems[k], caption, md, len);
    }
    return st;
}

int sweep_report_chnn(const char *dir, const sweep_result *res, int n, char **md, size_t *len)
{
    grid *g = calloc(1, sizeof *g);
    if (!g) return imp_fail(IMP_ERR_NOMEM, "report: out of memory");
    collect(g, res, n);
    int st = IMP_OK;
    if (g->n_sys == 0) {
        free(g);
        return IMP_OK;
    }
    imp_json j;
    imp_json_init(&j);
    st = main_table(g, md, len, &j);
    if (!st) st = diverged_notes(res, n, md, len);
    if (!st && g->n_sizes > 1) st = size_table(g, md, len);
    if (!st) {
        char path[4096];
        snprintf(path, sizeof path, "%s/chnn_results.json", dir);
        const char *text = imp_json_text(&j);
        st = text ? imp_write_file_atomic(path, text, strlen(text)) : imp_fail(IMP_ERR_NOMEM, "out of memory");
    }
    imp_json_free(&j);
    if (!st) st = bar_figure(g, dir, md, len);
    if (!st) st = curve_figures(g, dir, md, len);
    if (!st && g->n_sizes > 1) st = size_figure(g, dir, md, len);
    free(g);
    return st;
}
